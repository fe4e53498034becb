/**
 * Writes of many objects for bulk work (the upload of a model, decisions
 * §8) through exactly the checks of the REST interface, as object-writes.ts,
 * without holding the database while the work is prepared:
 *
 * 1. `prepare` and `check` run outside any transaction, on what is
 *    committed: the writer's checks of each object (types, properties,
 *    custom properties, statuses, placement), then those of the batch
 *    (references, places, keys, users) and the access rules. Nothing is
 *    written; a dry run stops here.
 * 2. `commit` stages the rows to write in parts (runtime/storage/staging.ts),
 *    each a short statement of its own that no read ever sees, giving way to
 *    interactive requests between parts (runtime/interactive.ts);
 * 3. then writes them in one transaction of set-based statements over the
 *    staged rows (removals, updates, inserts, history, secrets). On the
 *    embedded database, whose one connection a transaction holds, this is
 *    the only time requests wait for the bulk work; on PostgreSQL it gives
 *    way between its parts too.
 *
 * Either everything is written or nothing: staged rows are read by their
 * writer only, and the write is one transaction. What the checks read may
 * change before it: the transaction locks what the writes depend on and
 * finds such a change (an object changed or gone, a removal that grew, a key
 * or label taken: a version, the unique indexes) as a race. Then the whole
 * work runs again on what is current, as REST writes do (storage/retry.ts),
 * so that its checks see the change and report it as they would have; after
 * ATTEMPTS, 503. A batch whose writer stopped (its instance died) stays
 * unseen and is removed later (staging.ts).
 */
import type { Metamodel } from '../metamodel/model.ts';
import { createError, ViolationList, type Violation } from '../errors.ts';
import type { Principal } from '../auth/types.ts';
import type { InteractiveGate } from '../interactive.ts';
import { ObjectStore, type StoredObject } from '../storage/objects.ts';
import { StagedBatch } from '../storage/staging.ts';
import { isRetryable, RaceLost } from '../storage/retry.ts';
import { checkUserWrites } from '../auth/user-writes.ts';
import { changesNothing, type PreparedWrite } from './writer.ts';
import { assertNoViolations } from './write-violations.ts';
import { removalOf } from './removal.ts';
import { removeTenant } from './tenant-removal.ts';
import { authorize, keepSecrets, writerOf, type RestDeps, type WriteCall } from './handlers.ts';
import { observedWrites, type ObjectWriteRequest } from './object-writes.ts';

/** How often the whole work runs when it keeps losing races. */
export const ATTEMPTS = 3;
/** Objects staged by one statement. */
export const STAGE_PART = 2000;
/**
 * On the embedded database, while people use the instance (InteractiveGate.browsing()), a part is made as small as
 * holds the database about this long: a request arriving meanwhile waits for the part before it runs, and a part of
 * STAGE_PART objects took it 40-60 ms (a GET takes 4-6 ms at rest). With parts of 4 ms a GET took 5 ms at the median
 * while an upload staged its rows and was over twice its p99 at rest in 4-10 % of them; with 2 ms, 2.8 ms and 2 %
 * (bench/transfer-upload.ts, 110,000 objects, 2026-11-28), for about 0.7 s more of the upload's 18 s.
 */
export const STAGE_PART_MS = 2;
/** The smallest part then (each is a statement, with its own cost), and the first one's size. */
export const STAGE_PART_MIN = 50;
export const STAGE_PART_FIRST = 500;
/**
 * Objects per statement of the checks' look-ups (ObjectStore: keyUses, labelClashes) on the embedded database: each
 * holds its one connection, and a GET waited for a part of 5,000 (15-25 ms; LOOKUP_PART elsewhere); of 1,000, for
 * 3-5 ms, which was still among the slowest GETs of an upload.
 */
export const ONE_CONNECTION_LOOKUP_PART = 500;
/** Objects written by one statement of the final transaction. */
export const APPLY_PART = 5000;

export interface BulkWriteOptions {
  /** Bulk work asks it before each part: interactive requests go first. */
  gate?: InteractiveGate;
  /** The database has one connection, which the final transaction holds: pausing in it would only make it longer. */
  oneConnection?: boolean;
}

/** A batch that passed every check, to commit. */
export interface CheckedWrites {
  readonly prepared: PreparedWrite[];
  /** What the write removes: the objects left out, their descendants and dependents. */
  readonly removed: StoredObject[];
}

interface Checked extends CheckedWrites {
  leavingRoots: StoredObject[];
  leavingTenants: StoredObject[];
  removal: StoredObject[];
  below: Map<PreparedWrite, StoredObject[]>;
  types: string[];
}

export interface BulkWrites {
  /** The store outside any transaction: reads see what is committed. */
  readonly store: ObjectStore;
  readonly model: Metamodel;
  /** The write's time (epoch ms): every object it writes has it. */
  readonly now: number;
  /** As ObjectWrites.observe: the write observers see the payloads, once, before `prepare`. Since host API 1.8. */
  observe(payloads: Record<string, unknown>[], mode?: 'put' | 'patch'): Promise<void>;
  /** As ObjectWrites.prepare: the checks of one object; violations are returned, not thrown. */
  prepare(request: ObjectWriteRequest): Promise<{ prepared: PreparedWrite | null; violations: Violation[] }>;
  /**
   * The checks of the whole batch and the access rules, removing `leaving`
   * (with descendants and dependents); throws the REST interface's
   * ServiceError (400/403/409 with violations). Writes nothing.
   */
  check(prepared: PreparedWrite[], leaving: StoredObject[]): Promise<CheckedWrites>;
  /** Writes a checked batch (stage, then one transaction); listeners are told after it committed. */
  commit(checked: CheckedWrites): Promise<void>;
}

/**
 * Runs `work` until it completes without losing a race, at most ATTEMPTS
 * times, each with a fresh BulkWrites; a race is never the caller's fault:
 * once the attempts are used up, 503.
 */
export async function bulkWrites<T>(deps: RestDeps, db: string, principal: Principal, options: BulkWriteOptions, work: (writes: BulkWrites) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(await bulkWritesOf(deps, db, principal, options));
    } catch (err) {
      if (!isRetryable(err)) throw err;
      if (attempt >= ATTEMPTS) throw createError('UNAVAILABLE', {}, [], { 'Retry-After': '1' });
    }
  }
}

async function bulkWritesOf(deps: RestDeps, db: string, principal: Principal, options: BulkWriteOptions): Promise<BulkWrites> {
  const store = new ObjectStore(deps.knex, db, options.oneConnection ? ONE_CONNECTION_LOOKUP_PART : undefined);
  const call: WriteCall = { deps, principal, db, scope: { tenant: principal.tenant!, allTenants: principal.systemAdmin } };
  const now = await store.now();
  const { writer, observe, prepare } = observedWrites(call, store, now);
  return {
    store, model: deps.model, now, observe, prepare,
    async check(prepared, leaving) {
      const types = [...new Set([...prepared.map((w) => w.object.type), ...leaving.map((o) => o.type)])];
      authorize(principal, types, true);
      const violations = new ViolationList();
      const turn = () => options.gate?.turn();
      const below = await writer.checkTargets(prepared, violations, turn);
      const leavingTenants = leaving.filter((o) => o.type === 'Tenant');
      const leavingRoots = leaving.filter((o) => o.type !== 'Tenant');
      const removal = await removalOf(deps.model, store, call.scope.tenant, leavingRoots);
      const freed = [...removal, ...leavingTenants].map((o) => o.id);
      await writer.checkKeys(prepared, freed, violations, call.scope.allTenants, turn);
      // It locks login IDs, so it wants a transaction; the final one checks again.
      if (prepared.some((w) => w.object.type === 'User')) await deps.knex.transaction((trx) => checkUserWrites(trx, db, principal, prepared, freed, violations));
      assertNoViolations(violations, types[0] ?? '', false);
      // A write that would leave an object as it is does not write it, and its version stays.
      for (const w of prepared) if (changesNothing(w)) w.object = w.existing!;
      const checked: Checked = { prepared, removed: [...leavingTenants, ...removal], leavingRoots, leavingTenants, removal, below, types };
      return checked;
    },
    async commit(checked) {
      await commitChecked(call, options, writer, now, checked as Checked);
    },
  };
}

async function commitChecked(call: WriteCall, options: BulkWriteOptions, writer: ReturnType<typeof writerOf>, now: number, checked: Checked): Promise<void> {
  const { deps, db, principal } = call;
  const { prepared, below } = checked;
  const changed = prepared.filter((w) => w.object !== w.existing);
  const batch = new StagedBatch(deps.knex, db);
  const gate = options.gate;
  try {
    await batch.open();
    // Changes first, so that a new object may take a label an existing one gives up; what stands below an object
    // that moved to another model follows it there.
    const parts: ['create' | 'update', StoredObject[]][] = [
      ['update', changed.filter((w) => w.existing).map((w) => w.object)],
      ['update', writer.followModel(below)],
      ['create', changed.filter((w) => !w.existing).map((w) => w.object)],
    ];
    // Parts timed to STAGE_PART_MS while people use the embedded database, else of STAGE_PART objects.
    let size = STAGE_PART;
    let timed = false;
    // While a part's lines are made, requests go first.
    const between = () => gate?.turn();
    for (const [operation, objects] of parts) {
      for (let at = 0; at < objects.length;) {
        await gate?.pause();
        const browsing = options.oneConnection === true && gate?.browsing() === true;
        if (!browsing) size = STAGE_PART;
        else if (!timed) size = STAGE_PART_FIRST;
        timed = browsing;
        const part = objects.slice(at, at + size);
        at += part.length;
        // The time the part's COPY waited for and held the connection.
        const ms = Math.max(await batch.stage(operation, part, between), 0.1);
        if (browsing) size = Math.max(STAGE_PART_MIN, Math.min(STAGE_PART, Math.round(part.length * STAGE_PART_MS / ms)));
        await gate?.giveWay(0, 0);
      }
    }
    await deps.knex.transaction(async (trx) => {
      const store = new ObjectStore(trx, db);
      await lockDependencies(deps.model, store, call.scope.tenant, prepared, changed);
      const violations = new ViolationList();
      const freed = [...checked.removal, ...checked.leavingTenants].map((o) => o.id);
      await checkUserWrites(trx, db, principal, prepared, freed, violations);
      assertNoViolations(violations, checked.types[0] ?? '', false);
      const removal = await removalOf(deps.model, store, call.scope.tenant, checked.leavingRoots);
      if (!sameObjects(removal, checked.removal)) throw new RaceLost();
      for (const tenant of checked.leavingTenants) await removeTenant(trx, store, tenant, principal.loginId);
      await store.remove(removal, principal.loginId);
      for (const group of batch.groups) {
        // Updates in one go: labels given up by one may be taken by another (staging.ts).
        const step = group.operation === 'update' ? group.to - group.from : APPLY_PART;
        for (let at = group.from; at < group.to; at += step) {
          if (!options.oneConnection) await gate?.pause();
          await batch.apply(trx, group, at, Math.min(group.to, at + step), now, principal.loginId);
        }
      }
      await keepSecrets(call, trx, changed, { prepared, leaving: [], violations: new ViolationList(), place: checked.types[0] ?? '', creates: false });
    });
  } finally {
    // After the commit too: the rows are nobody's once written, and removing them need not hold the write.
    await batch.close(undefined, () => gate?.pause()).catch(() => undefined);
  }
  const touched = new Set([...checked.types, ...checked.removed.map((o) => o.type)]);
  if (touched.size) deps.changed?.(db, [...touched]);
}

/**
 * Locks what the writes depend on, as REST writes do (locks.ts): the objects
 * they name where checkReferences checked them (new parents, changed
 * references) against removal, and the objects of the batch left as they
 * are against change; any of them gone or changed since the checks read it
 * is a lost race. The changed ones are found by their versions when written
 * (staging.ts).
 */
async function lockDependencies(model: Metamodel, store: ObjectStore, tenant: string, prepared: PreparedWrite[], changed: PreparedWrite[]): Promise<void> {
  const written = new Set(changed.map((w) => w.object.id));
  const versions = new Map<string, number | undefined>();
  for (const w of prepared) if (w.existing && !written.has(w.existing.id)) versions.set(w.existing.id, w.existing.version);
  const named = (id: string | null | undefined) => {
    if (id && !written.has(id) && !versions.has(id)) versions.set(id, undefined);
  };
  for (const w of changed) {
    if (!w.existing || w.existing.parentId !== w.object.parentId) named(w.object.parentId);
    for (const p of model.types[w.object.type].properties) {
      const value = w.object.props[p.name];
      if (p.dataType === 'REFERENCE' && typeof value === 'string' && w.existing?.props[p.name] !== value) named(value);
    }
  }
  if (!versions.size) return;
  const held = new Map((await store.lock(tenant, [...versions.keys()], 'key share')).map((o) => [o.id, o.version]));
  for (const [id, version] of versions) {
    // A named object must still be there; one the batch leaves as it is must also be as it was.
    if (!held.has(id) || (version !== undefined && held.get(id) !== version)) throw new RaceLost();
  }
}

function sameObjects(a: StoredObject[], b: StoredObject[]): boolean {
  if (a.length !== b.length) return false;
  const ids = new Set(a.map((o) => o.id));
  return b.every((o) => ids.has(o.id));
}
