/**
 * Resolves a REST path below `/rest/<db>/` to what it names: an object, a
 * list, or a place where PUT/PATCH may create an object. Segments alternate
 * list names and keys (a UUID or a label); the first is a type plural.
 */
import type { ListDef, Metamodel, TypeDef } from '../metamodel/model.ts';
import { createError } from '../errors.ts';
import type { ObjectStore, StoredObject } from '../storage/objects.ts';
import type { ListPlan } from '../metamodel/relations.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where a list lives: under an owner object, at the root, or all objects of a type. */
export type ListPlace =
  | { kind: 'children'; owner: StoredObject; list: ListDef }
  | { kind: 'root'; list: ListDef }
  | { kind: 'all'; type: TypeDef };

/** The last key of an object path: a technical key or a label. */
export interface PathKey {
  value: string;
  isId: boolean;
}

export type Target =
  | { kind: 'object'; object: StoredObject; place: ListPlace; key: PathKey }
  | { kind: 'missing'; place: ListPlace; key: PathKey }
  | { kind: 'list'; place: ListPlace };

/** Splits the raw path into decoded segments; rejects what cannot name anything. */
export function splitPath(rawPath: string): string[] {
  const parts = rawPath.split('/');
  const segments: string[] = [];
  for (const part of parts) {
    if (part === '') throw createError('INVALID_PATH', { path: rawPath });
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      throw createError('INVALID_PATH', { path: rawPath });
    }
    if (decoded === '.' || decoded === '..' || /[\u0000-\u001f]/.test(decoded) || decoded.trim() === '') {
      throw createError('INVALID_PATH', { path: rawPath });
    }
    segments.push(decoded);
  }
  return segments;
}

/** The list definition of a top-level plural: root objects, or all objects of the type. */
function topLevelPlace(model: Metamodel, plural: string): ListPlace | null {
  const typeName = model.plurals[plural];
  if (!typeName) return null;
  const type = model.types[typeName];
  if (model.rootLists[plural]) {
    return { kind: 'root', list: { name: plural, itemType: typeName, itemTypes: type.concreteTypes, declaredBy: typeName } };
  }
  return { kind: 'all', type };
}

export function placeTypes(model: Metamodel, place: ListPlace): string[] {
  return place.kind === 'all' ? place.type.concreteTypes : place.list.itemTypes;
}

export function placeName(place: ListPlace): string {
  return place.kind === 'all' ? place.type.plural : place.list.name;
}

/** The type every object of the list is, for messages. */
export function placeItemType(place: ListPlace): string {
  return place.kind === 'all' ? place.type.name : place.list.itemType;
}

/** Whose objects a request sees: its login tenant's; system administrators see every tenant object. */
export interface Scope {
  tenant: string;
  allTenants: boolean;
}

/** Whether the object is one of the list's: a child in it, an object naming the owner of an inverse list, a root of a root list. */
export function inList(o: StoredObject, place: ListPlace): boolean {
  if (place.kind === 'all') return true;
  if (place.kind === 'root') return o.parentId === null && o.list === place.list.name;
  if (place.list.inverseOf) return o.props[place.list.inverseOf] === place.owner.id;
  return o.parentId === place.owner.id && o.list === place.list.name;
}

/** Tenant objects belong to themselves, so reading them across tenants needs no tenant filter. */
export function scopeTenant(scope: Scope, types: string[]): string | null {
  return scope.allTenants && types.length === 1 && types[0] === 'Tenant' ? null : scope.tenant;
}

/** `links`: the object is the one the path names and is read: its links' facts are found by the same statement. */
async function lookup(store: ObjectStore, model: Metamodel, scope: Scope, place: ListPlace, key: string, links?: ListPlan): Promise<StoredObject | null> {
  const types = placeTypes(model, place);
  const tenant = scopeTenant(scope, types);
  if (UUID.test(key)) {
    const found = await store.byId(tenant, key.toLowerCase(), links);
    // A top-level plural reaches every object of its type by technical key, roots or not.
    return found && types.includes(found.type) && (place.kind !== 'children' || inList(found, place)) ? found : null;
  }
  if (place.kind === 'root') return store.child(tenant, null, place.list.name, key);
  if (place.kind === 'children' && !place.list.inverseOf) return store.child(tenant, place.owner.id, place.list.name, key);
  // Lists of all objects (and inverse lists) are found by label only where the label is unique.
  const matches = place.kind === 'all'
    ? await store.byTypeAndLabel(scope.tenant, types, key)
    : (await store.referencing(scope.tenant, types, place.list.inverseOf!, place.owner.id)).filter((o) => o.label === key);
  return matches.length === 1 ? matches[0] : null;
}

/**
 * `forRead`: the target is only read, so objects on the way may be known by
 * technical key and type alone. `links`: the object named is rendered, and
 * the statement that finds it by technical key finds what its links need too.
 */
export async function resolvePath(store: ObjectStore, model: Metamodel, scope: Scope, segments: string[], options: { forRead?: boolean; links?: ListPlan } = {}): Promise<Target> {
  let place = topLevelPlace(model, segments[0]);
  if (!place) throw createError('NOT_FOUND');
  const fast = options.forRead ? await resolveChain(store, model, scope, place, segments, options.links) : null;
  if (fast) return fast;
  for (let i = 1; ; i += 2) {
    if (i >= segments.length) return { kind: 'list', place };
    const key = { value: segments[i], isId: UUID.test(segments[i]) };
    const object = await lookup(store, model, scope, place, key.value, i + 1 >= segments.length ? options.links : undefined);
    if (!object) {
      if (i === segments.length - 1) return { kind: 'missing', place, key };
      throw createError('OBJECT_NOT_FOUND', { type: placeItemType(place), key: key.value });
    }
    if (i + 1 >= segments.length) return { kind: 'object', object, place, key };
    const type = model.types[object.type];
    const list = type.lists.find((l) => l.name === segments[i + 1]);
    if (!list) throw createError('NOT_FOUND');
    place = { kind: 'children', owner: object, list };
  }
}

/**
 * Paths of several keys are resolved in one query where that can be: a
 * root label or technical key first, then children by label or key. Any
 * surprise (a missing object, an inverse list, a type that does not fit)
 * leaves it to the step-by-step resolution, which knows what to answer.
 */
async function resolveChain(store: ObjectStore, model: Metamodel, scope: Scope, top: ListPlace, segments: string[], links?: ListPlan): Promise<Target | null> {
  if (segments.length < 4) return null;
  const firstKey = segments[1];
  const firstIsId = UUID.test(firstKey);
  if (!firstIsId && top.kind !== 'root') return null;
  if (scopeTenant(scope, placeTypes(model, top)) === null) return null;
  const steps: { list: string; key: string; isId: boolean }[] = [];
  for (let i = 3; i < segments.length; i += 2) {
    const isId = UUID.test(segments[i]);
    steps.push({ list: segments[i - 1], key: isId ? segments[i].toLowerCase() : segments[i], isId });
  }
  const first = firstIsId ? { id: firstKey.toLowerCase() } : { list: placeName(top), label: firstKey };
  // A path that ends with a key names the object read.
  const found = await store.chain(scope.tenant, first, steps, segments.length % 2 === 0 ? links : undefined);
  if (!found || !placeTypes(model, top).includes(found.path[0].type)) return null;
  // Objects on the way are known by key and type: enough to name lists and check types on a read.
  const onTheWay = found.path.map((p, i) => (i === found.path.length - 1 ? found.last : { ...found.last, id: p.id, type: p.type }));
  let place: ListPlace = top;
  for (let level = 1; level < onTheWay.length; level++) {
    const list = model.types[onTheWay[level - 1].type].lists.find((l) => l.name === steps[level - 1].list);
    if (!list || list.inverseOf || !list.itemTypes.includes(onTheWay[level].type)) return null;
    place = { kind: 'children', owner: onTheWay[level - 1], list };
  }
  // Keys stand at odd positions: an even count ends with a key, an odd one with a list name.
  const lastKey = segments[segments.length - 1];
  if (segments.length % 2 === 0) return { kind: 'object', object: found.last, place, key: { value: lastKey, isId: UUID.test(lastKey) } };
  const list = model.types[found.last.type].lists.find((l) => l.name === lastKey);
  if (!list) return null;
  return { kind: 'list', place: { kind: 'children', owner: found.last, list } };
}
