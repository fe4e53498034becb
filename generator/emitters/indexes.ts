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

/** PostgreSQL cuts identifiers at 63 bytes: a longer name keeps a prefix and a digest of the whole. */
function indexName(prefix: string, property: string): string {
  const name = `${prefix}${snakeCase(property)}`;
  if (name.length <= 63) return name;
  return `${name.slice(0, 46)}_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
}

interface IndexDef { name: string; table: 'objects' | 'history'; expression: string }

function indexDefinitions(model: Metamodel): IndexDef[] {
  return inverseProperties(model).flatMap((property) => [
    { name: indexName(INDEX_PREFIXES.objects, property), table: 'objects' as const, expression: `(props->>${literal(property)})` },
    { name: indexName(INDEX_PREFIXES.history, property), table: 'history' as const, expression: `(row->>${literal(property)})` },
  ]);
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
    // Partial on the expression's being there: objects of other types have no such key and stay out of the index;
    // `x = $1` implies `x is not null`, so the probes use it.
    // Tenant and type after the reference, as the probe names them all: with statistics of a smaller table (before the
    // next analyze) the planner would otherwise take objects_type (tenant, type) and read every derivation of the tenant.
    const creates = defs.map((d) => `create index if not exists "${d.name}" on ${d.table} (${d.expression}, tenant, type) where ${d.expression} is not null;`);
    const content = [header('indexes', '--'), dropStale(defs), ...creates, ''].join('\n');
    return [{ path: 'indexes.gen.sql', content }];
  },
};
