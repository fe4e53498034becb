/**
 * Writes of many objects in one transaction for plugins (the upload of a
 * model, decisions §8), through exactly the checks of the REST interface:
 * the same writer (types, properties, custom properties, statuses, labels,
 * references, keys), the same access rules, the same history with the
 * caller as the one who changed. The caller prepares each object under the
 * parent it names, then applies all of them at once; violations carry the
 * caller's index of the object (`3.label`), so that it can tell which of its
 * objects was refused.
 */
import type { Knex } from 'knex';
import type { ListDef, Metamodel } from '../metamodel/model.ts';
import { ViolationList, type Violation } from '../errors.ts';
import type { Principal } from '../auth/types.ts';
import { ObjectStore, type StoredObject } from '../storage/objects.ts';
import type { ListPlace } from './paths.ts';
import type { PreparedWrite } from './writer.ts';
import { applyWrites, authorize, writerOf, type RestDeps, type WriteCall } from './handlers.ts';

export type { PreparedWrite } from './writer.ts';

export interface ObjectWriteRequest {
  /** The object as a REST payload (`_type`, properties, `customProperties`); references by technical key. */
  payload: Record<string, unknown>;
  /** `put` replaces what the object has, `patch` keeps what the payload does not name. */
  mode: 'put' | 'patch';
  /** The object it stands under; null for a root list (`schemes`). */
  parent: StoredObject | null;
  /** The parent's list (or the root list) it stands in. */
  list: string;
  /** The object as stored, when the write changes one. */
  existing?: StoredObject;
  /** The caller's number of the object: violation paths begin with it. */
  index: number;
}

export interface ObjectWrites {
  /** The store on the write's transaction: reads see what the transaction wrote so far. */
  readonly store: ObjectStore;
  readonly trx: Knex.Transaction;
  readonly model: Metamodel;
  /** The transaction's time (epoch ms): every object it writes has it. */
  readonly now: number;
  /**
   * Hands the plugins' write observers (runtime/plugins.ts WriteObserver) the
   * payloads of the whole write, once, before `prepare`: they read what the
   * checks of every object need (e.g. the tenant's annotations) as they do
   * for a REST request. Since host API 1.8; `prepare` refuses to run before.
   */
  observe(payloads: Record<string, unknown>[], mode?: 'put' | 'patch'): Promise<void>;
  /**
   * The checks of one object that need no other object of the batch (type,
   * properties, custom properties, statuses, placement); violations are
   * returned, not thrown.
   */
  prepare(request: ObjectWriteRequest): Promise<{ prepared: PreparedWrite | null; violations: Violation[] }>;
  /**
   * Checks references and keys of the whole batch, then removes `leaving`
   * (with descendants and dependents) and writes what changed. Throws the
   * REST interface's ServiceError (400/403/409 with violations) and writes
   * nothing then. Returns what it removed.
   */
  apply(prepared: PreparedWrite[], leaving: StoredObject[]): Promise<{ removed: StoredObject[] }>;
}

/** Runs `work` in one transaction; told `changed` after it committed, with the types it wrote. */
export async function writeObjects<T>(deps: RestDeps, db: string, principal: Principal, work: (writes: ObjectWrites) => Promise<T>): Promise<T> {
  const touched = new Set<string>();
  const result = await deps.knex.transaction(async (trx) => {
    const store = new ObjectStore(trx, db);
    const call = { deps, principal, db, scope: { tenant: principal.tenant!, allTenants: principal.systemAdmin } };
    const now = await store.now();
    const { writer, observe, prepare } = observedWrites(call, store, now);
    const writes: ObjectWrites = {
      store, trx, model: deps.model, now, observe, prepare,
      async apply(prepared, leaving) {
        const types = [...new Set([...prepared.map((w) => w.object.type), ...leaving.map((o) => o.type)])];
        authorize(principal, types, true);
        const removed = await applyWrites(call, trx, store, writer, { prepared, leaving, violations: new ViolationList(), place: types[0] ?? '', creates: false });
        for (const t of [...types, ...removed.map((o) => o.type)]) touched.add(t);
        return { removed };
      },
    };
    return work(writes);
  });
  if (touched.size) deps.changed?.(db, [...touched]);
  return result;
}

/**
 * The REST writer of a plugin's write of many objects (the transaction's writes here, the bulk writes), with its
 * `observe` and `prepare`: the write observers see the payloads once, with a token of the write's own that the
 * checks of each object then get as their request (as a REST request's context); `prepare` checks one object at the
 * place its parent and list name (a violation where the parent holds no such list).
 */
export function observedWrites(call: WriteCall, store: ObjectStore, now: number) {
  const request = {};
  const writer = writerOf({ ...call, request }, store);
  let observed = false;
  return {
    writer,
    async observe(payloads: Record<string, unknown>[], mode: 'put' | 'patch' = 'put'): Promise<void> {
      const method = mode === 'put' ? 'PUT' : 'PATCH';
      for (const observer of call.deps.writeObservers ?? []) await observer({ request, method, principal: call.principal, db: call.db, body: payloads });
      observed = true;
    },
    async prepare(req: ObjectWriteRequest): Promise<{ prepared: PreparedWrite | null; violations: Violation[] }> {
      // Without it, the checks would read the annotations of no write: possibly stale ones, once per object.
      if (!observed) throw new Error('a write of many objects must observe its payloads before preparing them');
      const violations = new ViolationList();
      const place = placeOf(call.deps.model, req.parent, req.list);
      if (!place) return { prepared: null, violations: [{ path: `${req.index}`, key: 'notCreatableHere', params: { type: String(req.payload._type), list: req.list } }] };
      const prepared = await writer.prepare({ payload: req.payload, mode: req.mode, place, existing: req.existing, index: req.index }, now, violations);
      return { prepared, violations: violations.kept };
    },
  };
}

/** The place of a list below a parent, or of a root list; null where the parent has no such list. */
export function placeOf(model: Metamodel, parent: StoredObject | null, list: string): ListPlace | null {
  if (!parent) {
    const typeName = Object.hasOwn(model.rootLists, list) ? model.rootLists[list] : undefined;
    if (!typeName) return null;
    const def: ListDef = { name: list, itemType: typeName, itemTypes: model.types[typeName].concreteTypes, declaredBy: typeName };
    return { kind: 'root', list: def };
  }
  const def = model.types[parent.type]?.lists.find((l) => l.name === list && !l.inverseOf);
  return def ? { kind: 'children', owner: parent, list: def } : null;
}

