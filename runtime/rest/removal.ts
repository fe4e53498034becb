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

/**
 * What removing objects removes: them, their descendants, and the relations
 * that are children of or name any of these. Each object is locked for
 * removal before what depends on it is looked for: writes that add a child
 * or a reference hold the parent or the named object (key share), so once
 * an object is locked nothing can be added that depends on it, and the next
 * statement sees all there is. The tree goes first, parents before
 * children; then the relations of all of it, in one statement in the order
 * of their technical keys. A relation is reached both as a child (of the
 * asset it is for) and as the relation of what it names, so two deletes
 * taking it at different depths of their trees would wait for each other;
 * taking relations last, all at once, keeps every delete in one order.
 * Objects a concurrent request removed first drop out; when a root did,
 * the caller sees it missing from the result.
 */
export async function removalOf(model: Metamodel, store: ObjectStore, tenant: string, roots: StoredObject[]): Promise<StoredObject[]> {
  // A tenant is deleted on its own (tenant-removal.ts), never as a descendant or an item of a list.
  if (roots.some((o) => o.type === 'Tenant')) throw createError('CONFLICT');
  const { types, properties } = relations(model);
  const all = new Map<string, StoredObject>();
  const added = (found: StoredObject[]) => {
    const fresh = found.filter((o) => !all.has(o.id));
    for (const o of fresh) all.set(o.id, o);
    return fresh;
  };
  for (let found = added(await store.lock(tenant, roots.map((o) => o.id), 'update')); found.length;) {
    const tree = [...found];
    for (let level = found; level.length;) {
      level = added(await store.childrenForRemoval(tenant, level.map((o) => o.id), types));
      tree.push(...level);
    }
    found = added(await store.relationsForRemoval(tenant, types, properties, tree.map((o) => o.id)));
  }
  return [...all.values()];
}
