/**
 * Emits `indexes.gen.sql`, the indexes the metamodel asks of the storage
 * beyond the core tables' own: one expression index per reference property
 * that an inverse list reads (a derivation's `derivedTo` for every asset's
 * `derivedFrom`), on the current objects and on history. An object's links
 * ask whether each of its inverse lists holds something (decisions §7.3), so
 * every GET would otherwise scan the tenant's objects of the item types.
 *
 * The file runs with the views (runtime/storage/views.ts), whenever the
 * generated SQL changed: it drops the indexes of this kind that the metamodel
 * no longer asks for, and creates the missing ones. Like the views, it names
 * its tables unqualified.
 */
import { createHash } from 'node:crypto';
import { type Emitter, header } from '../emitter.ts';
import type { Metamodel } from '../../runtime/metamodel/model.ts';
import { literal } from '../../runtime/storage/sql.ts';
import { snakeCase } from './views.ts';

/** What every index this file makes is named after; nothing else may start so. */
export const INDEX_PREFIXES = { objects: 'objects_ref_', history: 'history_ref_' } as const;

/** The reference properties that inverse lists read, sorted. */
export function inverseProperties(model: Metamodel): string[] {
  const names = new Set<string>();
  for (const t of Object.values(model.types)) for (const l of t.lists) if (l.inverseOf) names.add(l.inverseOf);
  return [...names].sort();
}

/**
 * An index is named after its property and a digest of its definition: the
 * file creates with `if not exists`, which keeps an index of that name
 * whatever its definition, so a changed definition must come under a new
 * name (and the old one is dropped as stale). PostgreSQL cuts identifiers at
 * 63 bytes: a long property name is cut, the digest (of the whole
 * definition, property included) keeps the names apart.
 */
export function indexName(prefix: string, property: string, definition: string): string {
  const digest = createHash('sha256').update(definition).digest('hex').slice(0, 12);
  return `${`${prefix}${snakeCase(property)}`.slice(0, 63 - digest.length - 1)}_${digest}`;
}

interface IndexDef { name: string; table: 'objects' | 'history'; definition: string }

/**
 * Partial on the expression's being there: objects of other types have no such key and stay out of the index;
 * `x = $1` implies `x is not null`, so the probes use it.
 * Tenant and type after the reference, as the probe names them all: with statistics of a smaller table (before the
 * next analyze) the planner would otherwise take objects_type (tenant, type) and read every derivation of the tenant.
 */
function indexDefinitions(model: Metamodel): IndexDef[] {
  return inverseProperties(model).flatMap((property) => (['objects', 'history'] as const).map((table) => {
    const expression = `(${table === 'objects' ? 'props' : 'row'}->>${literal(property)})`;
    const definition = `on ${table} (${expression}, tenant, type) where ${expression} is not null`;
    return { name: indexName(INDEX_PREFIXES[table], property, definition), table, definition };
  }));
}

/**
 * Drops this file's indexes of an earlier metamodel. The prefixes' `_` are
 * escaped for LIKE; `current_schema()` is the database's (search_path).
 */
function dropStale(defs: IndexDef[]): string {
  const wanted = defs.length ? `array[${defs.map((d) => literal(d.name)).join(', ')}]` : 'array[]::text[]';
  const like = Object.values(INDEX_PREFIXES).map((p) => `indexname like ${literal(`${p.replaceAll('_', '\\_')}%`)}`).join(' or ');
  return [
    'do $$',
    'declare stale record;',
    'begin',
    `  for stale in select indexname from pg_indexes where schemaname = current_schema() and (${like})`,
    `      and not (indexname = any(${wanted})) loop`,
    `    execute format('drop index %I.%I', current_schema(), stale.indexname);`,
    '  end loop;',
    'end $$;',
  ].join('\n');
}

export const indexesEmitter: Emitter = {
  name: 'indexes',
  emit(model) {
    const defs = indexDefinitions(model);
    const creates = defs.map((d) => `create index if not exists "${d.name}" ${d.definition};`);
    const content = [header('indexes', '--'), dropStale(defs), ...creates, ''].join('\n');
    return [{ path: 'indexes.gen.sql', content }];
  },
};
