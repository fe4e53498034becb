/**
 * What a REST write locks, and in which order. Deadlocks come from two
 * transactions taking the same rows in opposite orders: a cascading delete
 * closed the history of everything it removed and then deleted the objects,
 * while a PATCH of one of them updated the object and then closed its
 * history. So every writer now locks objects before it touches them or
 * their history, in one order:
 *
 * 1. what the write depends on, with `key share`: the objects its payload
 *    names (references, a new parent) and the owner of the list it creates
 *    in; this keeps them from being removed, and lets others change them;
 * 2. the objects it changes, with `no key update` (`update` to remove),
 *    in the order of their technical keys;
 * 3. when removing, what depends on the removed objects: their tree level
 *    by level, then all relations of it at once (removal.ts).
 *
 * A delete thus takes a parent before its children and a named object
 * before the relations naming it, as a writer does; and a write waits only
 * for writes of the same objects, never for unrelated ones. One order is
 * not promised: a payload naming an object and its own descendant (an
 * organization's attribution to its own person) locks them by technical
 * key, not by depth; a delete of that tree meeting it is a deadlock the
 * database detects, and the retry resolves.
 */
import type { Metamodel } from '../metamodel/model.ts';
import type { ObjectStore, RowLock, StoredObject } from '../storage/objects.ts';
import { RaceLost } from '../storage/retry.ts';
import { inList, placeTypes, scopeTenant, UUID, type ListPlace, type Scope, type Target } from './paths.ts';

const referenceNamesOf = new WeakMap<Metamodel, Set<string>>();

/** The properties that name another object, in any type. */
function referenceNames(model: Metamodel): Set<string> {
  if (!referenceNamesOf.has(model)) {
    const names = Object.values(model.types).flatMap((t) => t.properties.filter((p) => p.dataType === 'REFERENCE').map((p) => p.name));
    referenceNamesOf.set(model, new Set(names));
  }
  return referenceNamesOf.get(model)!;
}

/** The technical keys a payload (an object or a list of them) names in reference properties. */
function namedKeys(model: Metamodel, payload: unknown): string[] {
  const names = referenceNames(model);
  const keys = new Set<string>();
  for (const item of Array.isArray(payload) ? payload : [payload]) {
    if (!item || typeof item !== 'object') continue;
    // By the few reference names, not the payload's keys: a body of 800,000 unknown keys costs nothing here.
    for (const name of names) {
      const value = Object.hasOwn(item, name) ? (item as Record<string, unknown>)[name] : undefined;
      if (typeof value === 'string' && UUID.test(value)) keys.add(value.toLowerCase());
    }
  }
  return [...keys];
}

/** Whether the path's last key still names the object, in the place where the path found it. */
function stillNamed(o: StoredObject, target: Extract<Target, { kind: 'object' }>): boolean {
  const { place, key } = target;
  if (!key.isId) return o.label === key.value && inList(o, place);
  return place.kind !== 'children' || inList(o, place);
}

/**
 * Takes the locks of steps 1 and 2 for a write to a resolved path and
 * returns the target as it is now. When what the path named changed its
 * place, its key, or went away between the path's reading and the lock,
 * the whole transaction is repeated (RaceLost), so that the path is
 * resolved again on what is current.
 */
export async function lockTarget(store: ObjectStore, model: Metamodel, scope: Scope, target: Target, method: string, payload: unknown): Promise<Target> {
  const creates = target.kind === 'missing' || (target.kind === 'list' && method !== 'DELETE');
  const owner = creates && target.place.kind === 'children' ? [target.place.owner.id] : [];
  const named = [...namedKeys(model, payload), ...owner];
  const held = named.length ? await store.lock(scope.tenant, named, 'key share') : [];
  if (owner.length && !held.some((o) => o.id === owner[0])) throw new RaceLost();
  if (target.kind !== 'object') return target;
  const mode: RowLock = method === 'DELETE' ? 'update' : 'no key update';
  const [current] = await store.lock(scopeTenant(scope, placeTypes(model, target.place)), [target.object.id], mode);
  if (!current || !stillNamed(current, target)) throw new RaceLost();
  return { ...target, object: current };
}

/** Locks the objects of a list that a list write changes or replaces; those gone or moved meanwhile are left out. */
export async function lockListed(store: ObjectStore, tenant: string | null, place: ListPlace, listed: StoredObject[]): Promise<StoredObject[]> {
  const current = await store.lock(tenant, listed.map((o) => o.id), 'no key update');
  return current.filter((o) => inList(o, place));
}
