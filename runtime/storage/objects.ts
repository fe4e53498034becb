/**
 * The object store: current rows in `objects`, every version in `history`.
 * Writes are batched (one statement per kind of change, whatever the count),
 * so that a list PUT of thousands of objects stays a handful of round trips.
 * Every function takes the caller's transaction: the caller decides what is
 * one unit of work.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { schemaOf } from './migrations.ts';
import { literal } from './sql.ts';
import type { ListPlan } from '../metamodel/relations.ts';
import { RaceLost } from './retry.ts';

interface PreparingConnection {
  query(config: { name: string; text: string; values: Knex.RawBinding[] }): Promise<{ rows: Row[] }>;
}

/** An object as stored; `props` is typed per type by `ObjectOf` (typed-objects.ts). */
export interface StoredObject<P extends Record<string, unknown> = Record<string, unknown>> {
  id: string;
  type: string;
  tenant: string;
  parentId: string | null;
  list: string;
  label: string;
  title: string | null;
  description: string | null;
  status: string | null;
  modelId: string | null;
  version: number;
  createdBy: string | null;
  dateCreated: number;
  modifiedBy: string | null;
  dateModified: number;
  props: P;
  custom: Record<string, unknown>;
  /** What its links need, where the read that found it looked that up too. */
  links?: LinkFacts;
}

/**
 * What an object's links need beyond its row (decisions §7.3): its parent's
 * type, for the link named after the relation that holds it, and which of
 * its lists hold something, for the list links, which appear only then.
 */
export interface LinkFacts {
  parentType: string | null;
  lists: string[];
}

/** An object whose link facts are asked for; `at`: as of that time (epoch ms), from history. */
export interface LinkSubject {
  id: string;
  type: string;
  tenant: string;
  parentId: string | null;
  at?: number;
}

const inTypes = (types: string[]) => `(${types.map(literal).join(', ')})`;

/**
 * The columns \`link_parent_type\` and \`link_lists\` of the objects the alias
 * names (columns id, type, tenant, parent_id, and \`at\` when \`history\`),
 * inside the statement that reads the object or its page, never a statement
 * per list (decisions §7.3: one indexed look-up for all lists of an object).
 * The child lists that hold something are the distinct \`list\` values of the
 * object's children, read as a loose scan of objects_children: one index
 * descent per list found plus one, however many children or list names
 * there are (a plain \`select distinct\` would read every child of a scheme).
 * Each inverse list is one probe of the expression index on its reference
 * (generated/indexes.gen.sql), and the parent's type one probe where the
 * object's type names its parent relation after it. With \`history\` the
 * probes read the history table as of each row's \`at\`, as the as-of read
 * itself does: there a child list counts only with a child alive then, so
 * each of the type's lists is probed (history_children, and the history
 * expression indexes for the inverse ones).
 */
function linkColumns(s: string, plan: ListPlan, alias: string, history = false): string {
  const a = alias;
  const table = history ? 'history' : 'objects';
  const asOf = history ? ` and c.operation <> 'delete' and c.valid_from <= ${a}.at and (c.valid_to is null or c.valid_to > ${a}.at)` : '';
  const children = history ? childListsAsOf(s, plan, a, asOf) : `array(with recursive l(name) as (
      select min(c.list) from ${s}.objects c where c.parent_id = ${a}.id
      union all
      select (select min(c.list) from ${s}.objects c where c.parent_id = ${a}.id and c.list > l.name) from l where l.name is not null)
    select l.name from l where l.name is not null)`;
  // The reference is the only condition an index can take (the tenant is compared as text): only the generated index
  // on it serves the probe, whatever the statistics say. With \`c.tenant = o.tenant\` a planner that saw few objects of
  // the item types (before they were written, or with autovacuum behind) took objects_type (tenant, type, …) and then
  // read every derivation of the tenant on every GET.
  const inverse = plan.inverse.map((l) => `case when ${a}.type in ${inTypes(l.ownerTypes)} then case when exists (select 1 from ${s}.${table} c
      where c.${history ? 'row' : 'props'}->>${literal(l.property)} = ${a}.id::text and c.tenant::text = ${a}.tenant::text and c.type in ${inTypes(l.itemTypes)}${asOf})
      then ${literal(l.name)} end end`);
  const lists = inverse.length ? `${children} || array_remove(array[${inverse.join(', ')}]::text[], null)` : children;
  const parentType = history
    ? `(select p.type from ${s}.history p where p.id = ${a}.parent_id order by p.version desc limit 1)`
    : `(select p.type from ${s}.objects p where p.id = ${a}.parent_id)`;
  const parent = plan.parentTyped.length ? `case when ${a}.type in ${inTypes(plan.parentTyped)} then ${parentType} end` : 'null::text';
  return `${parent} as link_parent_type, ${lists} as link_lists`;
}

/** The type's child lists that held a child at the row's \`at\`: a probe per list name of the type. */
function childListsAsOf(s: string, plan: ListPlan, a: string, asOf: string): string {
  const listsOfType = plan.children.length
    ? `case ${a}.type ${plan.children.map((c) => `when ${literal(c.type)} then array[${c.lists.map(literal).join(', ')}]::text[]`).join(' ')} else array[]::text[] end`
    : 'array[]::text[]';
  return `array(select l.name from unnest(${listsOfType}) l(name)
    where exists (select 1 from ${s}.history c where c.parent_id = ${a}.id and c.list = l.name${asOf}))`;
}

function factsOf(r: { link_parent_type: string | null; link_lists: string[] }): LinkFacts {
  return { parentType: r.link_parent_type ?? null, lists: r.link_lists ?? [] };
}

/** One version of an object as history keeps it; times in epoch milliseconds. */
export interface VersionRow {
  version: number;
  operation: string;
  type: string;
  changedBy: string | null;
  validFrom: number;
  validTo: number | null;
  /** The object as it read at that version (for a delete, as it read last). */
  row: Record<string, unknown>;
}

export type RowLock = 'key share' | 'no key update' | 'update';

export interface Page {
  limit?: number;
  /** Keyset: the (label, id) of the last object of the previous page. */
  after?: { label: string; id: string };
  /** Equality filters on properties (e.g. `?loginId=bob`), compared as text. */
  filters?: Record<string, string>;
}

/** `is not distinct from` would be shorter, but no index serves it: the two forms each use objects_children. */
function parentSql(parentId: string | null): [string, Knex.RawBinding[]] {
  return parentId === null ? ['parent_id is null', []] : ['parent_id = ?::uuid', [parentId]];
}

/** tenant null: every tenant (system administrators reading tenants). */
function tenantSql(tenant: string | null): [string, Knex.RawBinding[]] {
  return tenant === null ? ['true', []] : ['tenant = ?::uuid', [tenant]];
}

const FILTER_COLUMNS: Record<string, string> = { label: 'label', title: 'title', description: 'description', status: 'status' };

/** SQL and bindings of property filters; property names come from the metamodel, values are bound. */
function filterSql(filters: Record<string, string> | undefined): [string, Knex.RawBinding[]] {
  let sql = '';
  const params: Knex.RawBinding[] = [];
  for (const [name, value] of Object.entries(filters ?? {})) {
    if (FILTER_COLUMNS[name]) {
      sql += ` and ${FILTER_COLUMNS[name]} = ?`;
      params.push(value);
    } else {
      sql += ` and props->>? = ?`;
      params.push(name, value);
    }
  }
  return [sql, params];
}

/** The columns of an object row, of the table or of one alias of it in a join. */
function columnsOf(alias = ''): string {
  const a = alias ? `${alias}.` : '';
  return `${a}id, ${a}tenant, ${a}type, ${a}parent_id, ${a}list, ${a}label, ${a}title, ${a}description, ${a}status, ${a}model_id, ${a}version,
  ${a}created_by, (extract(epoch from ${a}date_created) * 1000)::bigint as date_created, ${a}modified_by,
  (extract(epoch from ${a}date_modified) * 1000)::bigint as date_modified, ${a}props, ${a}custom`;
}

const COLUMNS = columnsOf();

/** An object as a walk over a whole tree reads it (downloads): what it is and holds, not who changed it when. */
export type TreeObject = Pick<StoredObject, 'id' | 'type' | 'parentId' | 'list' | 'label' | 'title' | 'description' | 'status' | 'props' | 'custom'>
  /** Whether it has children; false too for an object not of the walk's branch types, where it asked only of those. */
  & { hasChildren: boolean };

/**
 * A TreeObject as its statement sends it: one JSON array per row, in this
 * order (json_build_array). node-postgres decodes every column of a row as a
 * string of its own and builds an object of them; for the 100,000s of rows
 * of a download that was a third of its CPU, and one text per row, parsed
 * once, took a tenth off the download's time (bench/transfer.ts, 2026-11-28:
 * download/export 1.08 -> 0.98 at the median of 8).
 */
type TreeRow = [id: string, type: string, list: string, label: string, title: string | null, description: string | null, status: string | null,
  hasChildren: boolean, props: Record<string, unknown>, custom: Record<string, unknown> | null];

/**
 * What a walk over a whole tree (downloads) has no use for in each child it reads, left out by the statement.
 * JSON.parse of each row's text was the largest part of a download's CPU after the garbage collector, and what a
 * row holds decides both: a download of 100,000 attributes read a 36-character key per object that it used for
 * none but the few whose children it reads, and in every attribute's properties the key of its classifier (the
 * parent, which the nesting says). Left out (and the empty custom properties), a download of 100,000 objects took
 * about a fifth less CPU (2026-11-29: the walk alone, in one process, side by side with the full read).
 */
export interface LeanTreeRead {
  /** Properties left out of each child's `props` (references to the parent: the walk knows it). */
  leaveOut?: readonly string[];
  /**
   * Only the children of the branch types carry their id (and the last child read of an object cut short, which
   * the rest of its list follows on from); the others' is null: the walk never asks for their children.
   */
  branchIdsOnly?: boolean;
}

/** A TreeObject of a lean read: without the id where LeanTreeRead says so, its custom properties, where it has none, one frozen empty object. */
export type LeanTreeObject = Omit<TreeObject, 'id'> & { id: string | null };

/** The custom properties of an object of a lean read without any (a walk over 100,000s of objects, most of them without). */
const NO_CUSTOM: Record<string, unknown> = Object.freeze({});

interface Row {
  id: string; tenant: string; type: string; parent_id: string | null; list: string; label: string;
  title: string | null; description: string | null; status: string | null; model_id: string | null;
  version: number; created_by: string | null; date_created: number | string; modified_by: string | null;
  date_modified: number | string; props: Record<string, unknown>; custom: Record<string, unknown>;
}

/**
 * The names of prepared statements by their text: a digest of the text per
 * request cost a warm GET about 1 % of its CPU. The texts are a few per
 * database (by technical key, paths of each depth), so the map stays small;
 * it starts afresh should it ever grow large.
 */
const STATEMENT_NAMES = new Map<string, string>();
const MAX_STATEMENT_NAMES = 10_000;

function statementName(text: string): string {
  let name = STATEMENT_NAMES.get(text);
  if (name === undefined) {
    name = `q_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (STATEMENT_NAMES.size >= MAX_STATEMENT_NAMES) STATEMENT_NAMES.clear();
    STATEMENT_NAMES.set(text, name);
  }
  return name;
}

/** Link columns by plan and schema: the statement's text stays the same, so that it is prepared once per connection. */
const LINK_SQL = new WeakMap<ListPlan, Map<string, string>>();

function withFacts(r: Row, links: boolean): StoredObject {
  const o = fromRow(r);
  if (links) o.links = factsOf(r as Row & { link_parent_type: string | null; link_lists: string[] });
  return o;
}

function fromRow(r: Row): StoredObject {
  return {
    id: r.id, type: r.type, tenant: r.tenant, parentId: r.parent_id, list: r.list, label: r.label,
    title: r.title, description: r.description, status: r.status, modelId: r.model_id, version: r.version,
    createdBy: r.created_by, dateCreated: Number(r.date_created), modifiedBy: r.modified_by,
    dateModified: Number(r.date_modified), props: r.props ?? {}, custom: r.custom ?? {},
  };
}

/** The object as kept in history and rendered without links: the REST read form. */
export function plainObject(o: StoredObject, db: string): Record<string, unknown> {
  return {
    _type: o.type,
    id: o.id,
    _version: o.version,
    tenant: o.tenant,
    createdBy: o.createdBy,
    dateCreated: o.dateCreated,
    modifiedBy: o.modifiedBy,
    dateModified: o.dateModified,
    db,
    label: o.label,
    ...(o.title !== null ? { title: o.title } : {}),
    ...(o.description !== null ? { description: o.description } : {}),
    ...(o.status !== null ? { status: o.status } : {}),
    modelId: o.modelId,
    parentId: o.parentId,
    ...o.props,
    ...(Object.keys(o.custom).length ? { customProperties: o.custom } : {}),
  };
}

/**
 * plainObject in SQL, over columns of an objects-like row named by `v` (dates as epoch ms in `date_created` and
 * `date_modified`) and the database's name as the parameter `db`: what history keeps of an object written from
 * staged rows (staging.ts), made by the database instead of sent to it. Later keys win as in plainObject's spread.
 */
export function plainObjectSql(v: string, db: string): string {
  return `(jsonb_build_object('_type', ${v}.type, 'id', ${v}.id, '_version', ${v}.version, 'tenant', ${v}.tenant,
      'createdBy', ${v}.created_by, 'dateCreated', ${v}.date_created, 'modifiedBy', ${v}.modified_by, 'dateModified', ${v}.date_modified,
      'db', ${literal(db)}::text, 'label', ${v}.label, 'modelId', ${v}.model_id, 'parentId', ${v}.parent_id)
    || jsonb_strip_nulls(jsonb_build_object('title', ${v}.title, 'description', ${v}.description, 'status', ${v}.status))
    || ${v}.props
    || case when ${v}.custom = '{}'::jsonb then '{}'::jsonb else jsonb_build_object('customProperties', ${v}.custom) end)`;
}

/** Objects looked up by one statement of a bulk check (keyUses, labelClashes): big enough for few round trips, small enough for short statements. */
export const LOOKUP_PART = 5000;

/** What the business-key index puts in place of a missing parent. */
const NO_PARENT = '00000000-0000-0000-0000-000000000000';

/**
 * One step up a recursive walk whose rows (`up`) carry `parent_id`: the
 * parent, read by its key, for `cross join lateral (…) p`. Joined plainly
 * (`join objects p on p.id = up.parent_id`), the planner guesses ten times
 * the rows at every step and, from about 200 starting objects on, hashed the
 * whole table at each step: the places of 200 objects a download refers to
 * took 85-126 ms on 110,000 objects instead of 1 ms. `limit 1` keeps the
 * subquery from being flattened into that join (an object has one row).
 */
export function parentStep(s: string, columns: string, where = ''): string {
  return `(select ${columns} from ${s}.objects p where p.id = up.parent_id${where} limit 1)`;
}

/** The columns of a batch of objects passed as one JSON parameter. */
export const RECORD = `v(id uuid, tenant uuid, type text, parent_id uuid, list text, label text, title text, description text,
  status text, model_id uuid, version int, created_by text, date_created bigint, modified_by text, date_modified bigint,
  props jsonb, custom jsonb, row jsonb)`;

/** An object as a record of RECORD's columns, `row` being what history keeps of it. */
export function recordOf(o: StoredObject, rendered: (o: StoredObject) => Record<string, unknown>) {
  return {
    id: o.id, tenant: o.tenant, type: o.type, parent_id: o.parentId, list: o.list, label: o.label,
    title: o.title, description: o.description, status: o.status, model_id: o.modelId, version: o.version,
    created_by: o.createdBy, date_created: o.dateCreated, modified_by: o.modifiedBy, date_modified: o.dateModified,
    props: o.props, custom: o.custom, row: rendered(o),
  };
}

function recordset(objects: StoredObject[], rendered: (o: StoredObject) => Record<string, unknown>): string {
  return JSON.stringify(objects.map((o) => recordOf(o, rendered)));
}

/** A store bound to one database (schema) and one transaction or connection. */
export interface KeyUse {
  /** The tenant of the object that has the key now; absent when it was removed. */
  liveTenant?: string;
  /** Every tenant that has or had an object with the key. */
  tenants: Set<string>;
  lastVersion: number;
}

export class ObjectStore {
  private readonly s: string;
  private nowMs?: number;

  /**
   * `lookupPart`: objects per statement of a bulk check (LOOKUP_PART). The bulk writes of the embedded database
   * make it smaller: each statement holds its one connection, and a GET waited for a part of 5,000 (15-25 ms).
   */
  constructor(private readonly q: Knex | Knex.Transaction, readonly db: string, private readonly lookupPart = LOOKUP_PART) {
    this.s = `"${schemaOf(db)}"`;
  }

  /**
   * The transaction's time in whole milliseconds, so that every row of one
   * change carries the same instant, and history is valid from exactly the
   * `dateModified` a client sees: reading as of that time gives that version.
   */
  async now(): Promise<number> {
    if (this.nowMs === undefined) {
      const r = await this.q.raw(`select floor(extract(epoch from now()) * 1000)::bigint as now`);
      this.nowMs = Number(r.rows[0].now);
    }
    return this.nowMs;
  }

  /**
   * tenant null: any tenant (system administrators reading tenants). With
   * `links`, the same statement also finds what the object's links need.
   */
  async byId(tenant: string | null, id: string, links?: ListPlan): Promise<StoredObject | null> {
    const columns = links ? `${COLUMNS}, ${this.linkColumnsOf(links)}` : COLUMNS;
    const r = tenant === null
      ? await this.prepared(`select ${columns} from ${this.s}.objects o where id = $1::uuid`, [id])
      : await this.prepared(`select ${columns} from ${this.s}.objects o where id = $1::uuid and tenant = $2::uuid`, [id, tenant]);
    return r.rows[0] ? withFacts(r.rows[0], !!links) : null;
  }

  /** The link columns over the alias `o`, made once per plan and store. */
  private linkColumnsOf(plan: ListPlan): string {
    let text = LINK_SQL.get(plan)?.get(this.s);
    if (text === undefined) {
      text = linkColumns(this.s, plan, 'o');
      const bySchema = LINK_SQL.get(plan) ?? new Map<string, string>();
      bySchema.set(this.s, text);
      LINK_SQL.set(plan, bySchema);
    }
    return text;
  }

  /**
   * What the links of any number of objects need, in one statement: as they
   * are now, or as of each subject's \`at\` (all of them or none).
   */
  async linkFacts(plan: ListPlan, subjects: LinkSubject[]): Promise<LinkFacts[]> {
    if (!subjects.length) return [];
    const history = subjects[0].at !== undefined;
    const r = await this.q.raw(
      `select o.n, ${linkColumns(this.s, plan, 'o', history)}
       from unnest(?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::bigint[]) with ordinality as v(id, type, tenant, parent_id, at_ms, n),
         lateral (select v.id, v.type, v.tenant, v.parent_id, to_timestamp(v.at_ms / 1000.0) as at, v.n) o`,
      [subjects.map((x) => x.id), subjects.map((x) => x.type), subjects.map((x) => x.tenant), subjects.map((x) => x.parentId) as unknown as Knex.RawBinding, subjects.map((x) => x.at ?? null) as unknown as Knex.RawBinding],
    );
    const facts: LinkFacts[] = subjects.map(() => ({ parentType: null, lists: [] }));
    for (const row of r.rows as { n: string | number; link_parent_type: string | null; link_lists: string[] }[]) facts[Number(row.n) - 1] = factsOf(row);
    return facts;
  }

  /**
   * The hottest lookups run as named prepared statements outside
   * transactions: parsed and planned once per connection instead of per
   * request. Inside a transaction they go through the transaction as usual.
   */
  private async prepared(text: string, values: Knex.RawBinding[]): Promise<{ rows: Row[] }> {
    if ((this.q as Knex.Transaction).isTransaction) return this.q.raw(text.replace(/\$\d+/g, '?'), values);
    const client = (this.q as Knex).client as { acquireConnection(): Promise<PreparingConnection>; releaseConnection(c: unknown): Promise<void> };
    const name = statementName(text);
    const connection = await client.acquireConnection();
    try {
      return await connection.query({ name, text, values });
    } finally {
      await client.releaseConnection(connection);
    }
  }

  async byIds(tenant: string, ids: string[]): Promise<StoredObject[]> {
    if (!ids.length) return [];
    const r = await this.q.raw(`select ${COLUMNS} from ${this.s}.objects where id = any(?::uuid[]) and tenant = ?`, [ids, tenant]);
    return r.rows.map(fromRow);
  }

  async child(tenant: string | null, parentId: string | null, list: string, label: string): Promise<StoredObject | null> {
    const [t, tp] = tenantSql(tenant);
    const [p, pp] = parentSql(parentId);
    const r = await this.q.raw(`select ${COLUMNS} from ${this.s}.objects where ${t} and ${p} and list = ? and label = ?`, [...tp, ...pp, list, label]);
    return r.rows[0] ? fromRow(r.rows[0]) : null;
  }


  /**
   * Which objects of some types in a tenant hold each of some texts in their
   * custom property `name` (custom properties of base type ID are unique
   * within their type): value → technical keys. Writers of the same value
   * wait for each other first (one lock per value, taken in sorted order),
   * so that two transactions cannot both find a value free.
   */
  async customValueHolders(tenant: string, types: string[], name: string, values: string[]): Promise<Map<string, string[]>> {
    const holders = new Map<string, string[]>();
    if (!values.length) return holders;
    const sorted = [...new Set(values)].sort();
    const keys = sorted.map((v) => JSON.stringify(['customValue', this.db, tenant, name, v]));
    await this.q.raw('select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(?::text[]) as k', [keys]);
    const r = await this.q.raw(
      `select id, custom->>? as value from ${this.s}.objects where tenant = ?::uuid and type = any(?) and custom->>? = any(?::text[])`,
      [name, tenant, types, name, sorted],
    );
    for (const row of r.rows as { id: string; value: string }[]) holders.set(row.value, [...(holders.get(row.value) ?? []), row.id]);
    return holders;
  }

  /** Objects of some types in a tenant, found by label (top-level lists of all objects). */
  async byTypeAndLabel(tenant: string, types: string[], label: string): Promise<StoredObject[]> {
    const r = await this.q.raw(
      `select ${COLUMNS} from ${this.s}.objects where tenant = ? and type = any(?) and label = ? order by id limit 2`,
      [tenant, types, label],
    );
    return r.rows.map(fromRow);
  }

  async children(tenant: string | null, parentId: string | null, list: string, page: Page = {}): Promise<StoredObject[]> {
    const [t, tp] = tenantSql(tenant);
    const [p, pp] = parentSql(parentId);
    return this.select(`${t} and ${p} and list = ?`, [...tp, ...pp, list], page);
  }

  /**
   * The children of many objects, object after object in the order given,
   * each one's by list and label (the order of objects_children), in one
   * statement that stops after `total`: one descent of the index per
   * object, and one per child for whether it has children itself (so that
   * nobody needs to ask for a leaf's). A walk over a whole tree (downloads)
   * asks for the children of many objects at once this way, however many
   * they turn out to have. Returns each object's children and how many of
   * the objects were read whole: the object after those may have been cut
   * short, the ones after it were not read.
   *
   * The order is the statement's, not the rows': the rows are ordered by
   * the object's place in `parentIds` (the ordinality of unnest, which the
   * planner knows to be sorted: no sort), and each child carries its place
   * among its siblings (row_number over objects_children's order, read off
   * the index: no sort either), so that a child is put where it belongs
   * whatever order the rows come in, and `limit` keeps all children of the
   * objects before the last one. Of the last one, only the run of children
   * from its first on is kept (all of them but in theory).
   */
  async childrenOfMany(tenant: string, parentIds: string[], total: number, branchTypes?: readonly string[]): Promise<{ children: TreeObject[][]; complete: number }>;
  /** The same, leaner (LeanTreeRead). */
  async childrenOfMany(tenant: string, parentIds: string[], total: number, branchTypes: readonly string[] | undefined, lean: LeanTreeRead): Promise<{ children: LeanTreeObject[][]; complete: number }>;
  async childrenOfMany(tenant: string, parentIds: string[], total: number, branchTypes?: readonly string[], lean?: LeanTreeRead): Promise<{ children: LeanTreeObject[][]; complete: number }> {
    const children: LeanTreeObject[][] = parentIds.map(() => []);
    if (!parentIds.length) return { children, complete: 0 };
    const [hasChildren, hasChildrenParams] = this.hasChildrenSql(branchTypes);
    const [props, propsParams] = this.leanPropsSql(lean);
    const [id, idParams] = lean?.branchIdsOnly && branchTypes ? ['case when c.type = any(?::text[]) then c.id end', [[...branchTypes]]] : ['c.id', []];
    const r = await this.q.raw(
      `select json_build_array(v.n, c.k, ${id}, c.type, c.list, c.label, c.title, c.description, c.status,
         ${hasChildren}, ${props}) as r
       from unnest(?::uuid[]) with ordinality as v(parent_id, n),
         lateral (select c.*, row_number() over (order by c.list, c.label, c.id) as k from ${this.s}.objects c
           where c.parent_id = v.parent_id and c.tenant = ?::uuid order by c.list, c.label, c.id limit ?) c
       order by v.n limit ?`,
      [...idParams, ...hasChildrenParams, ...propsParams, parentIds, tenant, total, total],
    );
    const rows = r.rows as { r: [n: number, k: number, ...TreeRow] }[];
    let last = 0;
    for (const { r: [n, k, id, type, list, label, title, description, status, hasChildren, props, custom] } of rows) {
      // The parent is the one asked for: not read again.
      children[n - 1][k - 1] = { id, type, parentId: parentIds[n - 1], list, label, title, description, status, props, custom: custom ?? NO_CUSTOM, hasChildren };
      last = Math.max(last, n);
    }
    // The last object's children from its first on, up to the first not read (the rest is read again).
    if (last) {
      const cut = children[last - 1];
      let i = 0;
      while (i < cut.length && cut[i]) i++;
      cut.length = i;
      // The rest of its list follows on from the last child read, by label and key: where a lean read left the key
      // out, it is read by its label (which is the child's alone in its parent's list: objects_business_key).
      const from = cut[i - 1];
      if (rows.length >= total && from.id === null) {
        const [child] = (await this.q.raw(
          `select id from ${this.s}.objects where parent_id = ?::uuid and tenant = ?::uuid and list = ? and label = ?`,
          [parentIds[last - 1], tenant, from.list, from.label],
        )).rows as { id: string }[];
        // Deleted since: the rest follows on from its label (the nil key sorts before every other).
        from.id = child?.id ?? '00000000-0000-0000-0000-000000000000';
      }
    }
    return { children, complete: rows.length < total ? parentIds.length : last - 1 };
  }

  /** The `props` and `custom` of a child `c` of a walk over a tree (expressions, comma-separated), and their bindings (LeanTreeRead). */
  private leanPropsSql(lean?: LeanTreeRead): [string, Knex.RawBinding[]] {
    if (!lean) return ['c.props, c.custom', []];
    const props = lean.leaveOut?.length ? 'c.props - ?::text[]' : 'c.props';
    return [`${props}, nullif(c.custom, '{}'::jsonb)`, lean.leaveOut?.length ? [[...lean.leaveOut]] : []];
  }

  /**
   * Whether a child `c` of a walk over a tree has children (an expression),
   * and its bindings: a scalar subquery, which the planner cannot make a hashed
   * subplan of (an `exists` it made one of: a read of the whole table per
   * statement, 30-50 ms of 5,000 rows' 90). With `branchTypes`, only
   * children of those types are looked at and the others are false: a walk
   * that reads no list of a type (most objects of a model are attributes,
   * which hold none) need not look, and the look-up was about half of each
   * statement's time (5,000 children of 150 classifiers: 67-77 ms with it
   * for every child, 37-46 ms with it for none of the attributes).
   */
  private hasChildrenSql(branchTypes?: readonly string[]): [string, Knex.RawBinding[]] {
    const look = `coalesce((select true from ${this.s}.objects g where g.parent_id = c.id limit 1), false)`;
    return branchTypes
      ? [`case when c.type = any(?::text[]) then ${look} else false end`, [[...branchTypes]]]
      : [look, []];
  }

  /**
   * A page of one list's children, by label, as a walk over a tree reads
   * them (downloads: the rest of a list that childrenOfMany cut short), with
   * whether each has children itself, as childrenOfMany tells it: the walk
   * then asks nothing of the leaves (a list of 10,000 attributes cost five
   * statements of 1,000 objects that found no children).
   */
  async treeChildren(tenant: string, parentId: string, list: string, page: { limit: number; after?: { label: string; id: string } }, branchTypes?: readonly string[],
    lean?: Pick<LeanTreeRead, 'leaveOut'>): Promise<TreeObject[]> {
    const [hasChildren, hasChildrenParams] = this.hasChildrenSql(branchTypes);
    const [props, propsParams] = this.leanPropsSql(lean);
    const params: Knex.RawBinding[] = [...hasChildrenParams, ...propsParams, parentId, tenant, list];
    let after = '';
    if (page.after) {
      after = ` and (c.label, c.id) > (?, ?::uuid)`;
      params.push(page.after.label, page.after.id);
    }
    const r = await this.q.raw(
      `select json_build_array(c.id, c.type, c.list, c.label, c.title, c.description, c.status,
         ${hasChildren}, ${props}) as r
       from ${this.s}.objects c where c.parent_id = ?::uuid and c.tenant = ?::uuid and c.list = ?${after}
       order by c.label, c.id limit ?`,
      [...params, page.limit],
    );
    return (r.rows as { r: TreeRow }[]).map(({ r: [id, type, list, label, title, description, status, hasChildren, props, custom] }) =>
      ({ id, type, parentId, list, label, title, description, status, props, custom: custom ?? NO_CUSTOM, hasChildren }));
  }

  /**
   * Objects and everything above them up to their roots (the parent, the
   * parent's parent …), each once (`union` also ends a cycle), in one
   * statement: the labels that name many referenced objects by business key
   * (downloads). Only the tenant's. Each step up reads each parent by its
   * key (parentStep).
   */
  async withAncestors(tenant: string, ids: string[]): Promise<{ id: string; parentId: string | null; label: string }[]> {
    if (!ids.length) return [];
    const r = await this.q.raw(
      `with recursive up(id, parent_id, label) as (
         select id, parent_id, label from ${this.s}.objects where id = any(?::uuid[]) and tenant = ?::uuid
         union
         select p.id, p.parent_id, p.label from up cross join lateral ${parentStep(this.s, 'p.id, p.parent_id, p.label', ' and p.tenant = ?::uuid')} p)
       select id, parent_id, label from up`,
      [ids, tenant, tenant],
    );
    return (r.rows as { id: string; parent_id: string | null; label: string }[]).map((x) => ({ id: x.id, parentId: x.parent_id, label: x.label }));
  }

  async ofTypes(tenant: string, types: string[], page: Page = {}): Promise<StoredObject[]> {
    return this.select(`tenant = ? and type = any(?)`, [tenant, types], page);
  }

  /** Objects whose reference property names the target (inverse lists). */
  async referencing(tenant: string, types: string[], property: string, target: string, page: Page = {}): Promise<StoredObject[]> {
    return this.select(`tenant = ? and type = any(?) and props->>? = ?`, [tenant, types, property, target], page);
  }

  async count(tenant: string | null, where: { parentId: string | null; list: string } | { types: string[] } | { types: string[]; property: string; target: string }, filters?: Record<string, string>): Promise<number> {
    const [t, tp] = tenantSql(tenant);
    const [sql, params]: [string, Knex.RawBinding[]] = 'list' in where
      ? ((p) => [`${p[0]} and list = ?`, [...p[1], where.list]])(parentSql(where.parentId)) as [string, Knex.RawBinding[]]
      : 'property' in where
        ? [`type = any(?) and props->>? = ?`, [where.types, where.property, where.target]]
        : [`type = any(?)`, [where.types]];
    const [f, fp] = filterSql(filters);
    const r = await this.q.raw(`select count(*)::int as n from ${this.s}.objects where ${t} and ${sql}${f}`, [...tp, ...params, ...fp]);
    return r.rows[0].n;
  }


  private async select(where: string, params: Knex.RawBinding[], page: Page): Promise<StoredObject[]> {
    const [filters, filterParams] = filterSql(page.filters);
    let sql = `select ${COLUMNS} from ${this.s}.objects where ${where}${filters}`;
    const all: Knex.RawBinding[] = [...params, ...filterParams];
    if (page.after) {
      sql += ` and (label, id) > (?, ?::uuid)`;
      all.push(page.after.label, page.after.id);
    }
    sql += ` order by label, id`;
    if (page.limit) {
      sql += ` limit ?`;
      all.push(page.limit);
    }
    const r = await this.q.raw(sql, all);
    return r.rows.map(fromRow);
  }

  /**
   * A path of objects in one join: the first found by technical key or as a
   * root by label, each further one a child of the one before in a list, by
   * label or technical key. Returns the last object whole and the technical
   * key and type of every object on the way, or null if any is missing.
   */
  async chain(tenant: string, first: { id: string } | { list: string; label: string }, steps: { list: string; key: string; isId: boolean }[], links?: ListPlan): Promise<{ last: StoredObject; path: { id: string; type: string }[] } | null> {
    const params: Knex.RawBinding[] = [];
    const joins = steps.map((step, i) => {
      params.push(step.list, step.key);
      return `join ${this.s}.objects l${i + 1} on l${i + 1}.parent_id = l${i}.id and l${i + 1}.list = ? and l${i + 1}.${step.isId ? 'id = ?::uuid' : 'label = ?'}`;
    });
    const where = 'id' in first ? 'l0.id = ?::uuid and l0.tenant = ?::uuid' : 'l0.tenant = ?::uuid and l0.parent_id is null and l0.list = ? and l0.label = ?';
    params.push(...('id' in first ? [first.id, tenant] : [tenant, first.list, first.label]));
    const levels = [...steps.keys(), steps.length].map((i) => `l${i}`);
    const last = levels[levels.length - 1];
    const sql = `select ${columnsOf(last)}${links ? `, ${linkColumns(this.s, links, last)}` : ''}, array[${levels.map((l) => `${l}.id::text`).join(', ')}] as path_ids,
         array[${levels.map((l) => `${l}.type`).join(', ')}] as path_types
       from ${this.s}.objects l0 ${joins.join(' ')} where ${where}`;
    let n = 0;
    const r = await this.prepared(sql.replace(/\?/g, () => `$${++n}`), params);
    if (!r.rows.length) return null;
    const row = r.rows[0] as Row & { path_ids: string[]; path_types: string[] };
    return { last: withFacts(row, !!links), path: (row.path_ids as string[]).map((id, i) => ({ id, type: row.path_types[i] as string })) };
  }

  /**
   * Locks objects in the one order all writers keep, by technical key, and
   * returns them as they are now (an object removed meanwhile is missing).
   * `key share` keeps an object from being removed while a write names it
   * (as parent or reference) and lets others change it; `no key update`
   * serializes changes of it; `update` is for removing it.
   */
  async lock(tenant: string | null, ids: string[], mode: RowLock): Promise<StoredObject[]> {
    if (!ids.length) return [];
    const [t, tp] = tenantSql(tenant);
    const r = await this.q.raw(`select ${COLUMNS} from ${this.s}.objects where id = any(?::uuid[]) and ${t} order by id for ${mode}`, [ids, ...tp]);
    return r.rows.map(fromRow);
  }

  /** The technical keys above each object (its parent, the parent's parent … the root), by object. */
  async ancestors(tenant: string, ids: string[]): Promise<Map<string, string[]>> {
    const found = new Map(ids.map((id) => [id, [] as string[]]));
    if (!ids.length) return found;
    const r = await this.q.raw(
      `with recursive up(start, parent_id, depth) as (
         select id, parent_id, 0 from ${this.s}.objects where id = any(?::uuid[]) and tenant = ?
         union all
         select up.start, p.parent_id, up.depth + 1 from up cross join lateral ${parentStep(this.s, 'p.parent_id')} p where up.depth < 10000)
       select start, parent_id from up where parent_id is not null order by start, depth`,
      [ids, tenant],
    );
    for (const row of r.rows as { start: string; parent_id: string }[]) found.get(row.start)?.push(row.parent_id);
    return found;
  }

  /** Everything below an object (its children, theirs …), locked for a change, in the order of their technical keys. */
  async descendants(tenant: string, id: string): Promise<StoredObject[]> {
    const r = await this.q.raw(
      `with recursive down(id) as (
         select id from ${this.s}.objects where parent_id = ? and tenant = ?
         union
         select o.id from down join ${this.s}.objects o on o.parent_id = down.id)
       select ${COLUMNS} from ${this.s}.objects where id in (select id from down) order by id for no key update`,
      [id, tenant],
    );
    return r.rows.map(fromRow);
  }

  /** Which of the types any object of the tenant has (an index probe per type). */
  async typesPresent(tenant: string, types: readonly string[]): Promise<Set<string>> {
    if (!types.length) return new Set();
    const r = await this.q.raw(
      `select t.type from unnest(?::text[]) as t(type) where exists (select from ${this.s}.objects o where o.tenant = ?::uuid and o.type = t.type)`,
      [[...types], tenant],
    );
    return new Set(r.rows.map((row: { type: string }) => row.type));
  }

  /** The types of the objects of a model (those whose modelId is the root's). */
  async typesInModel(tenant: string, modelId: string): Promise<string[]> {
    const r = await this.q.raw(`select distinct type from ${this.s}.objects where model_id = ? and tenant = ? and id <> ? order by type`, [modelId, tenant, modelId]);
    return r.rows.map((row: { type: string }) => row.type);
  }

  /**
   * The children of objects but relations, locked for removal. The database
   * checks each row again once its lock is granted, so a child moved away by
   * a write that held it is no longer among them.
   */
  async childrenForRemoval(tenant: string, parentIds: string[], relationTypes: string[]): Promise<StoredObject[]> {
    if (!parentIds.length) return [];
    const r = await this.q.raw(
      `select ${COLUMNS} from ${this.s}.objects where parent_id = any(?::uuid[]) and tenant = ? and type <> all(?) order by id for update`,
      [parentIds, tenant, relationTypes],
    );
    return r.rows.map(fromRow);
  }

  /** Relations (objects of some types) that are children of any of the targets or name one in a property, locked for removal. */
  async relationsForRemoval(tenant: string, types: string[], properties: string[], targets: string[]): Promise<StoredObject[]> {
    if (!types.length || !targets.length) return [];
    const r = await this.q.raw(
      `select ${COLUMNS} from ${this.s}.objects o
       where tenant = ? and type = any(?)
         and (parent_id = any(?::uuid[]) or exists (select 1 from unnest(?::text[]) p(name) where o.props->>p.name = any(?::text[])))
       order by id for update`,
      [tenant, types, targets, properties, targets],
    );
    return r.rows.map(fromRow);
  }

  /**
   * Who has used each technical key: the tenant of the object that has it
   * now (a key is unique in the whole database), every tenant whose history
   * holds it, and its last version there (a re-created object continues the
   * count). Keys never used are absent.
   */
  async keyUses(ids: string[]): Promise<Map<string, KeyUse>> {
    const uses = new Map<string, KeyUse>();
    for (let at = 0; at < ids.length; at += this.lookupPart) await this.keyUsesOf(ids.slice(at, at + this.lookupPart), uses);
    return uses;
  }

  private async keyUsesOf(ids: string[], uses: Map<string, KeyUse>): Promise<void> {
    // The keys as a set to join, not `= any(array)`: the planner estimates such a filter element by element (0.6 s for 110,000).
    const r = await this.q.raw(
      `with k as (select distinct id from unnest(?::uuid[]) as k(id))
       select o.id, o.tenant, true as live, 0 as version from k join ${this.s}.objects o on o.id = k.id
       union all
       select h.id, h.tenant, false, max(h.version)::int from k join ${this.s}.history h on h.id = k.id group by h.id, h.tenant`,
      [ids],
    );
    for (const row of r.rows as { id: string; tenant: string; live: boolean; version: number }[]) {
      const use = uses.get(row.id) ?? { tenants: new Set<string>(), lastVersion: 0 };
      use.tenants.add(row.tenant);
      if (row.live) use.liveTenant = row.tenant;
      use.lastVersion = Math.max(use.lastVersion, row.version);
      uses.set(row.id, use);
    }
  }

  /**
   * The objects (by position) whose business key another object holds already,
   * leaving out the objects `excluded` (written or removed by the same request).
   */
  async labelClashes(objects: StoredObject[], excluded: string[]): Promise<number[]> {
    if (!objects.length) return [];
    const skip = new Set(excluded);
    const clashing = new Set<number>();
    for (let at = 0; at < objects.length; at += this.lookupPart) {
      for (const i of await this.labelClashesOf(objects.slice(at, at + this.lookupPart), skip)) clashing.add(at + i);
    }
    return [...clashing].sort((x, y) => x - y);
  }

  private async labelClashesOf(objects: StoredObject[], skip: Set<string>): Promise<number[]> {
    // Keys as arrays (unnest reads them at a fraction of what jsonb_to_recordset takes: 2.5 s for 110,000), the
    // excluded objects left out here rather than by a filter over an array of them, which the planner estimates
    // element by element.
    const r = await this.q.raw(
      `with v as (select * from unnest(?::uuid[], ?::text[], ?::uuid[], ?::text[], ?::text[]) with ordinality as v(tenant, type, parent_id, list, label, n))
       select v.n - 1 as i, o.id from v join ${this.s}.objects o on o.tenant = v.tenant and o.list = v.list and o.label = v.label
         and coalesce(o.parent_id, '${NO_PARENT}'::uuid) = coalesce(v.parent_id, '${NO_PARENT}'::uuid)
       union all
       select v.n - 1, o.id from v join ${this.s}.objects o on o.type = 'Tenant' and v.type = 'Tenant' and o.label = v.label`,
      [objects.map((o) => o.tenant), objects.map((o) => o.type), objects.map((o) => o.parentId) as unknown as Knex.RawBinding, objects.map((o) => o.list), objects.map((o) => o.label)],
    );
    return (r.rows as { i: string | number; id: string }[]).filter((row) => !skip.has(row.id)).map((row) => Number(row.i));
  }

  /** Writes objects of version 1 as new and the others as changed (for callers that create in bulk). */
  async write(objects: StoredObject[], rendered: (o: StoredObject) => Record<string, unknown>, actor: string): Promise<void> {
    await this.update(objects.filter((o) => o.version > 1), rendered, actor);
    await this.insert(objects.filter((o) => o.version === 1), rendered, actor);
  }

  /** Inserts new objects and their first history rows. */
  async insert(objects: StoredObject[], rendered: (o: StoredObject) => Record<string, unknown>, actor: string): Promise<void> {
    if (!objects.length) return;
    const json = recordset(objects, rendered);
    await this.q.raw(
      `insert into ${this.s}.objects (id, tenant, type, parent_id, list, label, title, description, status, model_id, version,
         created_by, date_created, modified_by, date_modified, props, custom)
       select id, tenant, type, parent_id, list, label, title, description, status, model_id, version,
         created_by, to_timestamp(date_created / 1000.0), modified_by, to_timestamp(date_modified / 1000.0), props, custom
       from jsonb_to_recordset(?::jsonb) as ${RECORD}`,
      [json],
    );
    await this.appendHistory(json, 'create', actor);
  }

  /**
   * Writes changed objects whose version the caller has raised by one.
   * Throws RaceLost when another request changed one of them since it was
   * read (callers that locked them first never see it).
   */
  async update(objects: StoredObject[], rendered: (o: StoredObject) => Record<string, unknown>, actor: string): Promise<void> {
    if (!objects.length) return;
    const json = recordset(objects, rendered);
    // Labels are unique among siblings row by row, so objects that swap or shift labels first give theirs up.
    await this.q.raw(
      `update ${this.s}.objects o set label = chr(1) || o.id::text from jsonb_to_recordset(?::jsonb) as ${RECORD}
       where o.id = v.id and o.label <> v.label`,
      [json],
    );
    const r = await this.q.raw(
      `update ${this.s}.objects o set parent_id = v.parent_id, list = v.list, label = v.label, title = v.title,
         description = v.description, status = v.status, model_id = v.model_id, version = v.version,
         modified_by = v.modified_by, date_modified = to_timestamp(v.date_modified / 1000.0), props = v.props, custom = v.custom
       from jsonb_to_recordset(?::jsonb) as ${RECORD}
       where o.id = v.id and o.tenant = v.tenant and o.version = v.version - 1
       returning o.id`,
      [json],
    );
    if (r.rows.length !== objects.length) throw new RaceLost();
    await this.closeHistory(objects.map((o) => o.id));
    await this.appendHistory(json, 'update', actor);
  }

  private async appendHistory(json: string, operation: 'create' | 'update', actor: string): Promise<void> {
    await this.q.raw(
      `insert into ${this.s}.history (id, version, tenant, type, parent_id, list, operation, valid_from, changed_by, row)
       select id, version, tenant, type, parent_id, list, ?, to_timestamp(? / 1000.0), ?, row from jsonb_to_recordset(?::jsonb) as ${RECORD}`,
      [operation, await this.now(), actor, json],
    );
  }

  private async closeHistory(ids: string[]): Promise<void> {
    await this.q.raw(`update ${this.s}.history set valid_to = to_timestamp(? / 1000.0) where id = any(?::uuid[]) and valid_to is null`, [await this.now(), ids]);
  }

  /** Removes objects (descendants must be passed too) and closes their history. */
  async remove(objects: StoredObject[], actor: string): Promise<void> {
    if (!objects.length) return;
    const ids = objects.map((o) => o.id);
    await this.closeHistory(ids);
    const now = await this.now();
    await this.q.raw(
      `insert into ${this.s}.history (id, version, tenant, type, parent_id, list, operation, valid_from, valid_to, changed_by, row)
       select o.id, o.version + 1, o.tenant, o.type, o.parent_id, o.list, 'delete', to_timestamp(? / 1000.0), to_timestamp(? / 1000.0), ?, h.row
       from ${this.s}.objects o join ${this.s}.history h on h.id = o.id and h.version = o.version
       where o.id = any(?::uuid[])`,
      [now, now, actor, ids],
    );
    await this.q.raw(`delete from ${this.s}.objects where id = any(?::uuid[])`, [ids]);
  }

  /**
   * One object's versions in its tenant (null: any tenant), newest first,
   * those older than `before` where given. Every row of one technical key is
   * its tenant's: keys another tenant had are never given out again.
   */
  async versions(tenant: string | null, id: string, page: { limit?: number; before?: number } = {}): Promise<VersionRow[]> {
    const [t, tp] = tenantSql(tenant);
    const params: Knex.RawBinding[] = [id, ...tp];
    let sql = `select version, operation, type, changed_by, row,
         (extract(epoch from valid_from) * 1000)::bigint as valid_from, (extract(epoch from valid_to) * 1000)::bigint as valid_to
       from ${this.s}.history where id = ?::uuid and ${t}`;
    if (page.before !== undefined) {
      sql += ' and version < ?';
      params.push(page.before);
    }
    sql += ' order by version desc';
    if (page.limit) {
      sql += ' limit ?';
      params.push(page.limit);
    }
    const r = await this.q.raw(sql, params);
    return r.rows.map((x: { version: number; operation: string; type: string; changed_by: string | null; row: Record<string, unknown>; valid_from: string | number; valid_to: string | number | null }) => ({
      version: x.version, operation: x.operation, type: x.type, changedBy: x.changed_by, row: x.row,
      validFrom: Number(x.valid_from), validTo: x.valid_to === null ? null : Number(x.valid_to),
    }));
  }

  /** How many versions an object has in its tenant (null: any), and the type of its newest. */
  async versionCount(tenant: string | null, id: string): Promise<{ total: number; type: string | null }> {
    const [t, tp] = tenantSql(tenant);
    const r = await this.q.raw(
      `select count(*)::int as total, (array_agg(type order by version desc))[1] as type from ${this.s}.history where id = ?::uuid and ${t}`,
      [id, ...tp],
    );
    return { total: r.rows[0].total, type: r.rows[0].type ?? null };
  }

  /** The object as it was at a time (epoch ms), from history. */
  async byIdAt(tenant: string, id: string, at: number): Promise<Record<string, unknown> | null> {
    const r = await this.q.raw(
      `select row from ${this.s}.history where id = ? and tenant = ? and operation <> 'delete'
         and valid_from <= to_timestamp(? / 1000.0) and (valid_to is null or valid_to > to_timestamp(? / 1000.0))
       order by version desc limit 1`,
      [id, tenant, at, at],
    );
    return r.rows[0]?.row ?? null;
  }

  async childAt(tenant: string, parentId: string | null, list: string, label: string, at: number): Promise<Record<string, unknown> | null> {
    const [p, pp] = parentSql(parentId);
    const rows = await this.listAt(tenant, `${p} and list = ? and row->>'label' = ?`, [...pp, list, label], at);
    return rows[0] ?? null;
  }

  async childrenAt(tenant: string, parentId: string | null, list: string, at: number): Promise<Record<string, unknown>[]> {
    const [p, pp] = parentSql(parentId);
    return this.listAt(tenant, `${p} and list = ?`, [...pp, list], at);
  }

  async ofTypesAt(tenant: string, types: string[], at: number): Promise<Record<string, unknown>[]> {
    return this.listAt(tenant, `type = any(?)`, [types], at);
  }

  private async listAt(tenant: string, where: string, params: Knex.RawBinding[], at: number): Promise<Record<string, unknown>[]> {
    const r = await this.q.raw(
      `select row from ${this.s}.history where tenant = ? and ${where} and operation <> 'delete'
         and valid_from <= to_timestamp(? / 1000.0) and (valid_to is null or valid_to > to_timestamp(? / 1000.0))
       order by row->>'label', id`,
      [tenant, ...params, at, at],
    );
    return r.rows.map((x: { row: Record<string, unknown> }) => x.row);
  }
}
