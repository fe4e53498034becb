/**
 * Emits `views.gen.sql`, the SQL views of the query interface: for every type
 * with a plural a `<name>_view` (current state, from `objects`) and a
 * `<name>_version_view` (as of a time, from `history`), plus the custom
 * properties. Tenant, time and language are read from transaction-local
 * settings that only the service sets, so the SQL itself holds none of them.
 * The views name their tables unqualified: they are created with `search_path`
 * set to the database schema and bind the tables then.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { type Emitter, header } from '../emitter.ts';
import type { Metamodel, PropertyDef, TypeDef } from '../../runtime/metamodel/model.ts';
import { literal } from '../../runtime/storage/sql.ts';
import { SYSTEM_PROPERTIES } from '../../runtime/metamodel/model.ts';
import { sqlType } from '../property-kinds.ts';

export const STATUS_LABELS_PATH = fileURLToPath(new URL('../../templates/views/status-labels.yaml', import.meta.url));

const DEFAULT_LANGUAGE = 'en';

/** The UUIDs of the tenants the caller may read; unset or empty gives no rows. */
const TENANTS = `string_to_array(nullif(replace(current_setting('service.tenants', true), ' ', ''), ''), ',')::uuid[]`;
/** The `version` parameter (epoch ms) as a time; unset or empty means now. */
const AS_OF = `coalesce(timestamptz 'epoch' + nullif(current_setting('service.version', true), '')::bigint * interval '1 millisecond', now())`;
const LANGUAGE = `coalesce(nullif(current_setting('service.language', true), ''), '${DEFAULT_LANGUAGE}')`;

/** Rendered by the REST interface from the request, not stored, so no view can show them. */
const NOT_STORED = new Set(['db', 'href']);
const STORED_COLUMNS = new Set<string>(SYSTEM_PROPERTIES.filter((p) => !NOT_STORED.has(p)));

/** `hasDomain` → `has_domain`; `_version` → `version`. */
export function snakeCase(name: string): string {
  return name.replace(/^_/, '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** `attributes` → `attribute`, `activities` → `activity`, `dataModels` → `data_model`. */
export function viewNameOf(plural: string): string {
  const singular = plural.replace(/ies$/, 'y').replace(/sses$/, 'ss').replace(/([^s])s$/, '$1');
  return snakeCase(singular);
}


/**
 * A type's view names: the snake-case name of its plural's singular
 * (`holds_post`), and where that has words, the same lower-cased without
 * separators (`holdspost`), as the original product names its views
 * (decisions §7.4) — both, so that reports written for either run.
 */
export function viewNamesOf(plural: string): string[] {
  const name = viewNameOf(plural);
  return name.includes('_') ? [name, name.replaceAll('_', '')] : [name];
}

// One function per column kind: each turns a stored value into the view's typed column.

/** A `many` property keeps its JSON array, as a list of records does (a `jsonb` kind). */
const manyColumn = (doc: string, key: string) => `${doc} -> ${literal(key)}`;

/** Epoch milliseconds as the REST interface renders them, or an ISO 8601 string; shown in UTC without zone. */
const datetimeColumn = (doc: string, key: string) =>
  `case jsonb_typeof(${doc} -> ${literal(key)}) when 'number' then timestamp 'epoch' + (${doc} ->> ${literal(key)})::numeric * interval '1 millisecond' ` +
  `else (${doc} ->> ${literal(key)})::timestamptz at time zone 'UTC' end`;

const scalarColumn = (doc: string, key: string, sqlType: string) =>
  sqlType === 'text' ? `${doc} ->> ${literal(key)}` : `(${doc} ->> ${literal(key)})::${sqlType}`;

/** A property read from a jsonb document (`props` or a history `row`). */
function jsonColumn(p: PropertyDef, doc: string, key = p.name): string {
  if (p.many || sqlType(p) === 'jsonb') return manyColumn(doc, key);
  if (p.dataType === 'DATETIME') return datetimeColumn(doc, key);
  return scalarColumn(doc, key, sqlType(p));
}

/** A property kept in a typed column of `objects`. */
function tableColumn(p: PropertyDef, column: string): string {
  return p.dataType === 'DATETIME' ? `${column} at time zone 'UTC'` : `${column}::${sqlType(p)}`;
}

/** Where a view reads its rows: the current objects or the history of their versions. */
interface Source {
  table: string;
  alias: string;
  read(p: PropertyDef): string;
  /** jsonb object of the custom properties. */
  custom: string;
  conditions: string[];
}

// The parent references (inScheme, inCollection, hasDomain …; decisions §7.4) are kept in the object, the one
// naming its parent set and the others absent, so each is its own column beside parent_id.
const currentSource: Source = {
  table: 'objects',
  alias: 'o',
  read: (p) => (STORED_COLUMNS.has(p.name) ? tableColumn(p, `o.${snakeCase(p.name)}`) : jsonColumn(p, 'o.props')),
  custom: 'o.custom',
  conditions: [`o.tenant = any (${TENANTS})`],
};

const versionSource: Source = {
  table: 'history',
  alias: 'h',
  read: (p) => jsonColumn(p, 'h.row'),
  custom: "case jsonb_typeof(h.row -> 'customProperties') when 'object' then h.row -> 'customProperties' end",
  conditions: [
    `h.tenant = any (${TENANTS})`,
    `h.valid_from <= ${AS_OF}`,
    `(h.valid_to is null or h.valid_to > ${AS_OF})`,
    `h.operation <> 'delete'`,
  ],
};

type StatusLabels = Record<string, Record<string, string>>;

const languagesOf = (labels: StatusLabels) => [...new Set(Object.values(labels).flatMap((l) => Object.keys(l)))].sort();

/** Reads the labels and checks that every Status literal has one in every language. */
export function readStatusLabels(model: Metamodel, path = STATUS_LABELS_PATH): StatusLabels {
  const labels = parse(readFileSync(path, 'utf8')) as StatusLabels;
  const languages = languagesOf(labels);
  if (!languages.includes(DEFAULT_LANGUAGE)) throw new Error(`${path}: no labels in ${DEFAULT_LANGUAGE}`);
  for (const status of model.enumerations.Status ?? []) {
    const missing = languages.filter((lang) => typeof labels[status]?.[lang] !== 'string');
    if (missing.length) throw new Error(`${path}: status ${status} has no label in ${missing.join(', ')}`);
  }
  return labels;
}

/**
 * The label of a standard status from the generated labels; of a status the
 * row's tenant declares (decisions §7.2) from `status_labels`, which the
 * profiles plugin keeps in step with the tenant's profile (looked up only for
 * a status that is not standard). German in German, English otherwise, each
 * falling back to the other.
 */
function statusLabelColumn(status: string, tenant: string, model: Metamodel, labels: StatusLabels): string {
  const caseOf = (lang: string) =>
    `case ${status} ${(model.enumerations.Status ?? []).map((s) => `when ${literal(s)} then ${literal(labels[s][lang])}`).join(' ')} end`;
  const others = languagesOf(labels).filter((l) => l !== DEFAULT_LANGUAGE);
  const standard = `case ${LANGUAGE} ${others.map((l) => `when ${literal(l)} then ${caseOf(l)}`).join(' ')} else ${caseOf(DEFAULT_LANGUAGE)} end`;
  const declared = `(select case ${LANGUAGE} when 'de' then coalesce(sl.label_de, sl.label_en) else coalesce(sl.label_en, sl.label_de) end ` +
    `from status_labels sl where sl.tenant = ${tenant} and sl.status = ${status})`;
  return `coalesce(${standard}, ${declared})`;
}

function typeColumns(type: TypeDef, source: Source, model: Metamodel, labels: StatusLabels): [string, string][] {
  const properties = type.properties.filter((p) => !p.writeOnly && !NOT_STORED.has(p.name));
  const byName = (name: string) => properties.find((p) => p.name === name);
  // `_type` as the REST interface names it (decisions §7.4: the original product's reports select it), `type` as before.
  const columns: [string, string][] = [['id', source.read(byName('id')!)], ['_type', `${source.alias}.type`], ['type', `${source.alias}.type`]];
  for (const p of properties.filter((x) => x.name !== 'id')) columns.push([snakeCase(p.name), source.read(p)]);
  const status = byName('status');
  if (!status) throw new Error(`type ${type.name} has no status property`);
  columns.push(['status_label', statusLabelColumn(source.read(status), `${source.alias}.tenant`, model, labels)]);
  const names = columns.map(([name]) => name);
  const clash = names.find((n, i) => names.indexOf(n) !== i);
  if (clash) throw new Error(`type ${type.name}: two columns named ${clash}`);
  return columns;
}

function createView(name: string, columns: [string, string][], from: string, conditions: string[]): string {
  return [
    `create view ${name} with (security_barrier = true) as`,
    'select',
    columns.map(([column, sql]) => `  ${sql} as "${column}"`).join(',\n'),
    `from ${from}`,
    `where ${conditions.join('\n  and ')};`,
  ].join('\n');
}

function typeView(name: string, type: TypeDef, source: Source, model: Metamodel, labels: StatusLabels): string {
  const types = `${source.alias}.type in (${type.concreteTypes.map(literal).join(', ')})`;
  return createView(name, typeColumns(type, source, model, labels), `${source.table} ${source.alias}`, [types, ...source.conditions]);
}

/** One row per custom property key of each object; values as text (JSON text for lists). */
function customPropertiesView(name: string, source: Source): string {
  const columns: [string, string][] = [['resource_id', `${source.alias}.id`], ['name', 'c.key'], ['value', 'c.value']];
  return createView(name, columns, `${source.table} ${source.alias}\n  cross join lateral jsonb_each_text(${source.custom}) c`, source.conditions);
}

/** View name → `create view` statement, sorted by name. */
function viewDefinitions(model: Metamodel): Map<string, string> {
  const labels = readStatusLabels(model);
  const views = new Map<string, string>();
  const add = (name: string, define: (name: string) => string) => {
    if (views.has(name)) throw new Error(`two views named ${name}`);
    views.set(name, define(name));
  };
  for (const [plural, typeName] of Object.entries(model.plurals)) {
    const type = model.types[typeName];
    for (const view of viewNamesOf(plural)) {
      add(`${view}_view`, (name) => typeView(name, type, currentSource, model, labels));
      add(`${view}_version_view`, (name) => typeView(name, type, versionSource, model, labels));
    }
  }
  // Versioned too, so that the query interface can read every view as of a time.
  add('customproperties_view', (name) => customPropertiesView(name, currentSource));
  add('customproperties_version_view', (name) => customPropertiesView(name, versionSource));
  return new Map([...views].sort(([a], [b]) => (a < b ? -1 : 1)));
}

export const viewsEmitter: Emitter = {
  name: 'views',
  emit(model) {
    const views = viewDefinitions(model);
    const drops = [...views.keys()].map((name) => `drop view if exists ${name} cascade;`);
    const content = [header('views', '--'), ...drops, '', [...views.values()].join('\n\n'), ''].join('\n');
    return [{ path: 'views.gen.sql', content }];
  },
};
