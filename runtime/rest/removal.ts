/**
 * What a delete removes. Children cannot outlive their parent, and a relation
 * (an attribution, a derivation) cannot outlive the object it names; both go
 * in the same transaction, so no reference is left dangling.
 */
import type { Metamodel } from '../metamodel/model.ts';
import { createError } from '../errors.ts';
import type { ObjectStore, StoredObject } from '../storage/objects.ts';

interface Relations {
  types: string[];
  properties: string[];
}

/** Types whose objects are meaningless without the object a property names (e.g. the person of an attribution). */
const relationsOf = new WeakMap<Metamodel, Relations>();
function relations(model: Metamodel): Relations {
  if (!relationsOf.has(model)) {
    const found = Object.values(model.types).flatMap((t) => t.properties
      .filter((p) => p.dataType === 'REFERENCE' && p.required && !p.owner && !t.abstract)
      .map((p) => ({ type: t.name, property: p.name })));
    relationsOf.set(model, { types: [...new Set(found.map((f) => f.type))].sort(), properties: [...new Set(found.map((f) => f.property))].sort() });
  }
  return relationsOf.get(model)!;
}

/** What removing objects removes: them, their descendants, and the relations that name any of these. */
export async function removalOf(model: Metamodel, store: ObjectStore, tenant: string, roots: StoredObject[]): Promise<StoredObject[]> {
  // A tenant is deleted on its own (tenant-removal.ts), never as a descendant or an item of a list.
  if (roots.some((o) => o.type === 'Tenant')) throw createError('CONFLICT');
  const all = new Map(roots.map((o) => [o.id, o]));
  for (let frontier = roots; frontier.length;) {
    const ids = frontier.map((o) => o.id);
    const found = [
      ...await store.descendants(tenant, ids),
      ...await store.referencingAny(tenant, relations(model).types, relations(model).properties, ids),
    ];
    frontier = found.filter((o) => !all.has(o.id));
    for (const o of frontier) all.set(o.id, o);
  }
  return [...all.values()];
}
