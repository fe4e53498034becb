/**
 * Upload (decisions §8): a file's records become writes of the REST
 * interface's writer, written as one change (host.bulkWrites), so that the
 * checks, the access rules and the history are the REST interface's.
 *
 * 1. The file is read into records (a bad file fails the job with its place).
 * 2. Each record is matched to the object it names: the target itself for the
 *    root, else the child of its parent's object in its list with its label
 *    (for labels derived from references: the label those references give).
 * 3. References are resolved by business key: within the file first, then in
 *    the target model as stored, then across models (`/Model/…`); none or
 *    more than one is an error for that object.
 * 4. Every object is prepared (type, properties, custom properties, statuses),
 *    then all are applied at once (references, label clashes, removals).
 * Any error fails the job and nothing is written; a dry run reports as a
 * real run would and writes nothing.
 *
 * Only the last step holds the database: everything before it reads what is
 * committed, and the writes are staged in parts and made in one short
 * transaction (runtime/rest/bulk-writes.ts). Every step gives way to
 * interactive requests (runtime/interactive.ts): the upload is bulk work of
 * the instance like an export.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import {
  schemaOf, ServiceError, translate, type BulkWrites, type CheckedWrites, type InteractiveGate, type JobLogEntry, type JobOutcome,
  type JobReporter, type Language, type Metamodel, type PluginHost, type PreparedWrite, type Principal, type StoredObject, type Violation,
} from '../../runtime/host.ts';
import { FileProblem, formatKey, parseKey, type TransferFormat, type TransferRecord } from './records.ts';
import { derivedLabel, recordProperties } from './model.ts';

export type Operation = 'ADD' | 'MERGE' | 'REPLACE';

export interface UploadSpec {
  db: string;
  principal: Principal;
  language: Language;
  model: Metamodel;
  format: TransferFormat;
  /** The file; runUpload lets it go once it is read (null then), so that the job does not hold it while it writes. */
  bytes: Buffer | null;
  operation: Operation;
  dryRun: boolean;
  /** A scheme by label (created when missing), or a collection by technical key. */
  target: { kind: 'scheme'; label: string } | { kind: 'collection'; id: string };
}

interface Figures {
  read: number;
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
  total?: number;
}

/** Why an object was refused: its record's number, the property, the message. */
interface Refusal {
  index: number;
  path: string;
  message: string;
}

class Refused extends Error {
  constructor(readonly refusals: Refusal[]) { super('refused'); }
}

export interface ChangeReport {
  dryRun: boolean;
  operation: Operation;
  created: string[];
  updated: { key: string; properties: string[] }[];
  deleted: string[];
}

const SEP = '\u0000';
/** Records handled between two pauses for interactive requests (runtime/interactive.ts). */
export const PART = 500;

/** What bulk work awaits after each record: a pause before each PART of them, a turn of the event loop now and then. */
function stepOf(gate: InteractiveGate): (i: number) => Promise<void> | undefined {
  return (i) => (i % PART === PART - 1 ? gate.giveWay(0, 0) : gate.turn());
}
const SYSTEM_COLUMNS = ['label', 'title', 'description', 'status'] as const;

export async function runUpload(host: PluginHost, spec: UploadSpec, reporter: JobReporter): Promise<JobOutcome> {
  const figures: Figures = { read: 0, created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 0 };
  const t = (key: string, params?: Record<string, unknown>) => translate(spec.language, key, params);
  const records: TransferRecord[] = [];
  const step = stepOf(host.interactive);
  try {
    const context = { typeOf: (name: string) => (Object.hasOwn(spec.model.types, name) ? spec.model.types[name] : undefined), language: spec.language };
    if (!spec.bytes) throw new Error('The upload\'s file was read before.');
    for await (const record of spec.format.read(Readable.from(handedOver(spec)), context)) {
      records.push(record);
      figures.read++;
      if (figures.read % 1000 === 0) reporter.progress({ ...figures });
      await step(figures.read);
    }
  } catch (err) {
    if (!(err instanceof FileProblem)) throw err;
    return failed(figures, [{ level: 'ERROR', message: placed('transferFileProblem', err.position, { problem: err.message }, t) }], t);
  }
  // The scheme an upload goes into is the one its address names.
  if (spec.target.kind === 'scheme' && records[0]?.key.length === 0) records[0].properties.label = spec.target.label;
  figures.total = records.length;
  reporter.progress({ ...figures });
  const root = records[0];
  const rootType = spec.target.kind === 'scheme' ? 'Scheme' : 'Collection';
  if (!root || root.key.length !== 0 || root.type !== rootType) {
    return failed(figures, [{ level: 'ERROR', message: t('transferWrongRoot', { type: rootType }) }], t);
  }
  let report: ChangeReport;
  try {
    report = await host.bulkWrites(spec.db, spec.principal, async (writes) => {
      const { report, checked } = await plan({ w: writes, knex: host.knex, gate: host.interactive }, spec, records, figures, reporter);
      if (!spec.dryRun) await writes.commit(checked);
      return report;
    });
  } catch (err) {
    if (err instanceof Refused) {
      figures.failed = new Set(err.refusals.map((r) => r.index)).size;
      figures.created = figures.updated = figures.deleted = figures.unchanged = 0;
      return failed(figures, err.refusals.map((r) => ({ level: 'ERROR' as const, message: refusalText(records[r.index], r, t) })), t);
    }
    // The model kept changing under the upload (bulk-writes.ts): nothing was written; the same file may be uploaded again.
    if (err instanceof ServiceError && err.code === 'UNAVAILABLE') {
      figures.created = figures.updated = figures.deleted = figures.unchanged = 0;
      return failed(figures, [{ level: 'ERROR', message: t('transferChangedMeanwhile') }], t);
    }
    throw err;
  }
  const summary = t(spec.dryRun ? 'transferDryRunCompleted' : 'transferCompleted', { ...figures });
  return {
    status: 'COMPLETED',
    messages: [{ level: 'INFO', message: summary }],
    logs: [{ level: 'INFO', message: summary }],
    statistics: { ...figures },
    result: Buffer.from(`${JSON.stringify(report, null, 2)}\n`, 'utf8'),
  };
}

/**
 * The upload's file, once, as a stream's only chunk: neither the spec nor the stream holds it once the format has
 * read it (a JSON reading lets its text go too), so that the tens of MB of a large file are not kept while the
 * upload writes.
 */
function* handedOver(spec: UploadSpec): Generator<Buffer> {
  const bytes = spec.bytes!;
  spec.bytes = null;
  yield bytes;
}

/**
 * A new technical key. Node makes randomUUID's text by joining 20 pieces, which V8 keeps as a tree of them until
 * the text is read (about 490 bytes); the upload keeps one per new object until it commits (54 MB for 110,000).
 * toLowerCase() gives the same text in one piece (about 60 bytes).
 */
function newId(): string {
  return randomUUID().toLowerCase();
}

function failed(figures: Figures, logs: JobLogEntry[], t: (key: string, params?: Record<string, unknown>) => string): JobOutcome {
  return { status: 'FAILED', messages: [{ level: 'ERROR', message: t('transferFailed', { failed: figures.failed }) }], logs, statistics: { ...figures } };
}

/**
 * A message about a place in the file: `<key>Line` with its line and column (JSON, YAML, XML), `<key>Row` with its
 * sheet and row (XLSX, CSV), or `<key>` where the file gives none; `problem` without its closing full stop (the
 * message has its own).
 */
function placed(key: string, position: TransferRecord['source'], params: Record<string, unknown>, t: (key: string, params?: Record<string, unknown>) => string): string {
  const all = { ...params, problem: String(params.problem ?? '').replace(/[.!]\s*$/, '') };
  if (position?.line !== undefined) return t(`${key}Line`, { ...all, line: position.line, column: position.column ?? 1 });
  if (position?.row !== undefined) return t(`${key}Row`, { ...all, sheet: position.sheet ?? '', row: position.row });
  return t(key, all);
}

/** A record's business key for people: a derived (empty) label shows as its type. */
function keyText(record: TransferRecord): string {
  if (!record.key.length) return String(record.properties.label ?? '/');
  return formatKey(record.key.map((l) => (l === '' ? `<${record.type}>` : l)));
}

function refusalText(record: TransferRecord, r: Refusal, t: (key: string, params?: Record<string, unknown>) => string): string {
  return placed('transferRefused', record.source, { key: keyText(record), property: r.path || '-', problem: r.message }, t);
}

/** What planning uses: the bulk writes, the database for its own reads (of what is committed), the gate. */
interface Planning {
  w: BulkWrites;
  knex: Knex;
  gate: InteractiveGate;
}

/** Everything between the records and the writes: what an upload would change, checked; nothing written. */
async function plan(planning: Planning, spec: UploadSpec, records: TransferRecord[], figures: Figures, reporter: JobReporter): Promise<{ report: ChangeReport; checked: CheckedWrites }> {
  const { w, knex, gate } = planning;
  const step = stepOf(gate);
  const { model } = spec;
  // A plan that lost a race runs again (bulk-writes.ts): its figures start afresh.
  figures.created = figures.updated = figures.deleted = figures.unchanged = 0;
  const tenant = spec.principal.tenant!;
  const t = (key: string, params?: Record<string, unknown>) => translate(spec.language, key, params);
  const refusals: Refusal[] = [];
  const refuse = (index: number, path: string, message: string) => refusals.push({ index, path, message });
  const s = `"${schemaOf(spec.db)}"`;

  // The target as stored, and everything below it.
  const target = spec.target.kind === 'scheme'
    ? await w.store.child(tenant, null, 'schemes', spec.target.label)
    : (await w.store.byIds(tenant, [spec.target.id]))[0] ?? null;
  const below = target ? await subtree(w, knex, s, tenant, target.id) : [];
  const byId = new Map<string, StoredObject>(below.map((o) => [o.id, o]));
  if (target) byId.set(target.id, target);
  const byPlace = new Map<string, StoredObject>(below.map((o) => [[o.parentId, o.list, o.label].join(SEP), o]));
  const storedKeys = new Map<string, string[]>();
  const storedKeyOf = (o: StoredObject): string[] | undefined => {
    const labels: string[] = [];
    for (let at: StoredObject | undefined = o; at && at.id !== target?.id; at = at.parentId ? byId.get(at.parentId) : undefined) labels.unshift(at.label);
    return labels;
  };
  // Each loop over every object gives way now and then: 100,000 objects take 50-200 ms a loop, which GETs would wait for.
  for (const [i, o] of below.entries()) {
    const k = formatKey(storedKeyOf(o)!);
    // Pushed, not spread into a new array: V8 gives `[...old, x]` room for 16 more (192 bytes for one id instead of 64).
    const same = storedKeys.get(k);
    if (same) same.push(o.id);
    else storedKeys.set(k, [o.id]);
    await step(i);
  }

  // Parents (by depth) and the file's own keys.
  const parents: number[] = [];
  const stack: number[] = [];
  const fileKeys = new Map<string, number[]>();
  for (const [i, r] of records.entries()) {
    const depth = r.key.length;
    stack.length = depth;
    parents.push(depth ? stack[depth - 1] ?? -1 : -1);
    stack[depth] = i;
    if (!r.key.includes('')) {
      const k = formatKey(r.key);
      const same = fileKeys.get(k);
      if (same) same.push(i);
      else fileKeys.set(k, [i]);
    }
    await step(i);
  }

  // Objects the records name, and their technical keys (new ones get theirs now, so that references can name them).
  const existing: (StoredObject | undefined)[] = records.map(() => undefined);
  const ids: string[] = [];
  const matchStored = (i: number, label: string | undefined) => {
    if (i === 0) return target ?? undefined;
    const parent = existing[parents[i]];
    const r = records[i];
    return parent && label !== undefined ? byPlace.get([parent.id, r.list, label].join(SEP)) : undefined;
  };
  for (const [i, r] of records.entries()) {
    existing[i] = matchStored(i, typeof r.properties.label === 'string' ? r.properties.label : undefined);
    ids.push(existing[i]?.id ?? newId());
    await step(i);
  }

  // References by business key.
  const crossModel = new Map<string, string[]>();
  const resolve = async (text: string): Promise<string[] | 'malformed'> => {
    const parsed = parseKey(text);
    if (!parsed) return 'malformed';
    // A key from the target model's own root (`/Finance/…` in an upload into Finance) is one within the model.
    if (parsed.otherModel === undefined || (spec.target.kind === 'scheme' && parsed.otherModel === spec.target.label)) {
      const k = formatKey(parsed.labels);
      const inFile = fileKeys.get(k);
      if (inFile?.length) return inFile.map((i) => ids[i]);
      if (!parsed.labels.length && target) return [target.id];
      const stored = storedKeys.get(k);
      if (stored?.length) return stored;
      if (parsed.otherModel === undefined) return [];
    }
    const whole = formatKey(parsed.labels, parsed.otherModel);
    if (!crossModel.has(whole)) crossModel.set(whole, await acrossModels(knex, s, tenant, parsed.otherModel!, parsed.labels));
    return crossModel.get(whole)!;
  };

  // A type's reference properties, found once per type rather than once per record.
  const referencesOf = new Map<string, ReturnType<typeof recordProperties>>();
  const references = (type: Metamodel['types'][string]) => {
    let found = referencesOf.get(type.name);
    if (!found) referencesOf.set(type.name, found = recordProperties(type).filter((d) => d.dataType === 'REFERENCE'));
    return found;
  };
  const payloads: (Record<string, unknown> | null)[] = [];
  for (const [i, r] of records.entries()) {
    const type = Object.hasOwn(model.types, r.type) ? model.types[r.type] : undefined;
    const payload: Record<string, unknown> = { _type: r.type, ...r.properties };
    if (type) {
      for (const p of references(type)) {
        const value = payload[p.name];
        if (value === undefined || value === null) continue;
        const one = async (text: unknown): Promise<string | undefined> => {
          if (typeof text !== 'string') {
            refuse(i, p.name, t('transferKeyMalformed', { key: JSON.stringify(text) }));
            return undefined;
          }
          const found = await resolve(text);
          if (found === 'malformed') refuse(i, p.name, t('transferKeyMalformed', { key: text }));
          else if (!found.length) refuse(i, p.name, t('transferKeyNotFound', { key: text }));
          else if (found.length > 1) refuse(i, p.name, t('transferKeyAmbiguous', { key: text, count: found.length }));
          else return found[0];
          return undefined;
        };
        if (p.many && Array.isArray(value)) {
          const resolved: string[] = [];
          for (const v of value) {
            const id = await one(v);
            if (id) resolved.push(id);
          }
          payload[p.name] = resolved;
        } else {
          payload[p.name] = await one(value);
        }
      }
      // An object whose label the service derives is found by the label its references give.
      if (r.properties.label === undefined && i > 0) {
        existing[i] = matchStored(i, derivedLabel(type, (n) => payload[n]));
        if (existing[i]) ids[i] = existing[i]!.id;
      }
    }
    if (i === 0 && spec.target.kind === 'scheme') payload.label = spec.target.label;
    if (!existing[i]) payload.id = ids[i];
    payloads.push(payload);
    if (i % 1000 === 0) reporter.progress({ ...figures });
    await step(i);
  }
  // Children of a matched object were given keys before it was matched: a record without label matched late keeps its new key only if new.
  // What resolved the references is not needed any more.
  fileKeys.clear();
  crossModel.clear();

  // The checks of every object read the tenant's annotations as they were when the write began, once.
  await w.observe(payloads as Record<string, unknown>[]);
  const prepared: (PreparedWrite | null)[] = [];
  for (const [i, r] of records.entries()) {
    const payload = payloads[i]!;
    // ADD into an existing scheme or collection adds below it and leaves the target as it is.
    if (spec.operation === 'ADD' && i === 0 && target) {
      prepared.push({ object: target, existing: target, secrets: {}, index: 0, ownerPending: false });
      continue;
    }
    if (spec.operation === 'ADD' && existing[i]) {
      refuse(i, '', t('transferExists'));
      prepared.push(null);
      continue;
    }
    let parent: StoredObject | null;
    let list: string;
    if (i === 0) {
      if (spec.target.kind === 'scheme') [parent, list] = [null, 'schemes'];
      else {
        parent = target!.parentId ? (await w.store.byIds(tenant, [target!.parentId]))[0] ?? null : null;
        list = target!.list;
      }
    } else {
      const p = prepared[parents[i]];
      if (!p) {
        refuse(i, '', t('transferParentRefused'));
        prepared.push(null);
        continue;
      }
      [parent, list] = [p.object, r.list ?? ''];
    }
    const { prepared: one, violations } = await w.prepare({ payload, mode: 'put', parent, list, existing: existing[i], index: i });
    // The prepared write holds what the object becomes: its payload is not needed any more.
    payloads[i] = null;
    // A reference refused above is not reported again as missing.
    const reported = new Set(refusals.filter((x) => x.index === i).map((x) => x.path));
    for (const v of violations) if (!reported.has(stripIndex(v.path, i))) refuse(i, stripIndex(v.path, i), violationText(v, t));
    prepared.push(one);
    if (i % 1000 === 0) reporter.progress({ ...figures });
    await step(i);
  }
  if (refusals.length) throw new Refused(refusals);

  const named = new Set(existing.filter((o) => o).map((o) => o!.id));
  const leaving = spec.operation === 'REPLACE'
    ? below.filter((o) => !named.has(o.id) && !(o.parentId && byId.has(o.parentId) && !named.has(o.parentId) && o.parentId !== target?.id))
    : [];
  const writes = prepared as PreparedWrite[];
  let checked: CheckedWrites;
  try {
    await gate.pause();
    checked = await w.check(writes, leaving);
  } catch (err) {
    if (!(err instanceof ServiceError) || !err.violations.length) {
      if (err instanceof ServiceError) throw new Refused([{ index: 0, path: '', message: t(err.code === 'FORBIDDEN' ? 'transferForbidden' : 'transferRefusedWhole') }]);
      throw err;
    }
    throw new Refused(err.violations.map((v) => {
      const index = Number.parseInt(v.path, 10);
      const at = Number.isNaN(index) ? 0 : index;
      return { index: at, path: stripIndex(v.path, at), message: violationText(v, t) };
    }));
  }

  const report: ChangeReport = { dryRun: spec.dryRun, operation: spec.operation, created: [], updated: [], deleted: [] };
  for (const [i, p] of writes.entries()) {
    if (!p.existing) {
      figures.created++;
      report.created.push(keyText(records[i]));
    } else if (p.object === p.existing) {
      figures.unchanged++;
    } else {
      figures.updated++;
      report.updated.push({ key: keyText(records[i]), properties: changedProperties(p.existing, p.object) });
    }
    await step(i);
  }
  for (const o of checked.removed) {
    figures.deleted++;
    const labels = byId.has(o.id) ? storedKeyOf(o) : undefined;
    report.deleted.push(labels ? formatKey(labels) : o.id);
  }
  reporter.progress({ ...figures });
  return { report, checked };
}

function stripIndex(path: string, index: number): string {
  const prefix = `${index}`;
  if (path === prefix) return '';
  return path.startsWith(`${prefix}.`) ? path.slice(prefix.length + 1) : path;
}

function violationText(v: Violation, t: (key: string, params?: Record<string, unknown>) => string): string {
  return t(v.key, v.params ?? {});
}

/** The names of what a write changed: system columns, properties, custom properties. */
function changedProperties(before: StoredObject, after: StoredObject): string[] {
  const changed: string[] = [];
  for (const c of SYSTEM_COLUMNS) if (before[c] !== after[c]) changed.push(c);
  const names = new Set([...Object.keys(before.props), ...Object.keys(after.props)]);
  for (const n of [...names].sort()) if (JSON.stringify(before.props[n]) !== JSON.stringify(after.props[n])) changed.push(n);
  const custom = new Set([...Object.keys(before.custom), ...Object.keys(after.custom)]);
  for (const n of [...custom].sort()) if (JSON.stringify(before.custom[n]) !== JSON.stringify(after.custom[n])) changed.push(`customProperties.${n}`);
  return changed;
}

/** Every object below one, as stored (as committed: the final transaction finds any change since, bulk-writes.ts). */
async function subtree(w: BulkWrites, knex: Knex, s: string, tenant: string, rootId: string): Promise<StoredObject[]> {
  const r = await knex.raw(
    `with recursive t(id) as (select id from ${s}.objects where parent_id = ?::uuid and tenant = ?::uuid
       union all select o.id from ${s}.objects o join t on o.parent_id = t.id) select id from t`, [rootId, tenant],
  );
  const ids = (r.rows as { id: string }[]).map((x) => x.id);
  const found: StoredObject[] = [];
  for (let at = 0; at < ids.length; at += 5000) found.push(...await w.store.byIds(tenant, ids.slice(at, at + 5000)));
  return found;
}

/** The objects a key of another model names: its roots with that label, then children by label down. */
async function acrossModels(knex: Knex, s: string, tenant: string, modelLabel: string, labels: string[]): Promise<string[]> {
  let ids = ((await knex.raw(`select id from ${s}.objects where tenant = ?::uuid and parent_id is null and label = ? and type not in ('Tenant', 'User')`,
    [tenant, modelLabel])).rows as { id: string }[]).map((x) => x.id);
  for (const label of labels) {
    if (!ids.length) break;
    ids = ((await knex.raw(`select id from ${s}.objects where tenant = ?::uuid and parent_id = any(?::uuid[]) and label = ?`,
      [tenant, ids, label])).rows as { id: string }[]).map((x) => x.id);
  }
  return ids;
}
