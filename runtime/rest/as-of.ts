/**
 * As-of reads (`version` / `Accept-Version`): the same paths as the current
 * state, resolved against history, so that renamed and deleted objects are
 * found as they were at that time.
 */
import type { Metamodel } from '../metamodel/model.ts';
import { createError } from '../errors.ts';
import type { ObjectStore } from '../storage/objects.ts';
import { UUID, type Scope } from './paths.ts';

type Plain = Record<string, unknown>;

export type AsOfResult =
  | { kind: 'object'; object: Plain; types: string[] }
  | { kind: 'list'; name: string; items: Plain[]; types: string[] };

export async function resolvePathAt(store: ObjectStore, model: Metamodel, scope: Scope, segments: string[], at: number): Promise<AsOfResult> {
  const typeName = model.plurals[segments[0]];
  if (!typeName) throw createError('NOT_FOUND');
  const topType = model.types[typeName];
  const root = !!model.rootLists[segments[0]];
  let types = topType.concreteTypes;
  let owner = null as Plain | null;
  let listName = segments[0];
  let inverseOf: string | undefined;
  const tenant = scope.tenant;
  for (let i = 1; ; i += 2) {
    const atList = async (): Promise<Plain[]> => {
      if (!owner) return root ? store.childrenAt(tenant, null, listName, at) : store.ofTypesAt(tenant, types, at);
      if (inverseOf) return (await store.ofTypesAt(tenant, types, at)).filter((o) => o[inverseOf!] === owner!.id);
      return store.childrenAt(tenant, owner.id as string, listName, at);
    };
    if (i >= segments.length) return { kind: 'list', name: listName, items: await atList(), types };
    const key = segments[i];
    let found: Plain | null;
    if (UUID.test(key)) {
      found = await store.byIdAt(tenant, key.toLowerCase(), at);
      if (found && (!types.includes(found._type as string) || (owner && !inverseOf && found.parentId !== owner.id))) found = null;
    } else if (owner || root) {
      found = inverseOf ? (await atList()).find((o) => o.label === key) ?? null : await store.childAt(tenant, (owner?.id as string) ?? null, listName, key, at);
    } else {
      const matches = (await store.ofTypesAt(tenant, types, at)).filter((o) => o.label === key);
      found = matches.length === 1 ? matches[0] : null;
    }
    if (!found) throw createError('OBJECT_NOT_FOUND', { type: model.types[types[0]]?.name ?? typeName, key });
    if (i + 1 >= segments.length) return { kind: 'object', object: found, types: [found._type as string] };
    const list = model.types[found._type as string].lists.find((l) => l.name === segments[i + 1]);
    if (!list) throw createError('NOT_FOUND');
    owner = found;
    listName = list.name;
    types = list.itemTypes;
    inverseOf = list.inverseOf;
  }
}
