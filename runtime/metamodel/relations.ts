/**
 * What the metamodel says about how objects hang together, for links: the
 * relation that holds an object in its parent, and which lists each type
 * has. The HAL renderer (runtime/rest/hal.ts), the storage's look-up of
 * non-empty lists and the OpenAPI emitter all ask here, so they agree.
 */
import { ownerFor, type Metamodel } from './model.ts';

/**
 * Decisions §7.3: the link to an object's parent is also named after the
 * relation that holds it. The name is the type's owner reference for that
 * kind of parent where the metamodel gives one (`inScheme`, `inCollection`,
 * `inSystem`, `literalOf`, a business attribute's `hasDomain`, a person's
 * `agentOf`), else `in<ParentType>` after the parent's type
 * (`inOrganization`, `inDataset` …). One rule for every type, no table per
 * type.
 */
export function parentRelation(model: Metamodel, typeName: string, parentType: string): string {
  const type = model.types[typeName];
  return (type && ownerFor(type, parentType)?.property) ?? `in${parentType}`;
}

/** The concrete types that may hold an object of the type in one of their child lists. */
export function parentTypesOf(model: Metamodel, typeName: string): string[] {
  const concrete = model.types[typeName]?.concreteTypes ?? [];
  return Object.values(model.types)
    .filter((t) => !t.abstract && t.lists.some((l) => !l.inverseOf && l.itemTypes.some((i) => concrete.includes(i))))
    .map((t) => t.name)
    .sort();
}

/** Every name `parentRelation` can give an object reached as the type (its concrete types'), for the OpenAPI document. */
export function parentRelationNames(model: Metamodel, typeName: string): string[] {
  const names = new Set<string>();
  for (const concrete of model.types[typeName]?.concreteTypes ?? []) {
    for (const parent of parentTypesOf(model, concrete)) names.add(parentRelation(model, concrete, parent));
  }
  return [...names].sort();
}

/**
 * The lists of the metamodel as the look-up of non-empty lists needs them:
 * the child lists of each concrete type; inverse lists with the property of
 * their items that names the owner; the types whose parent relation needs
 * the parent's type (those without an owner reference).
 */
export interface ListPlan {
  children: { type: string; lists: string[] }[];
  inverse: { name: string; ownerTypes: string[]; itemTypes: string[]; property: string }[];
  parentTyped: string[];
}

const PLANS = new WeakMap<Metamodel, ListPlan>();

/** The metamodel's list plan, made once per metamodel. */
export function listPlanOf(model: Metamodel): ListPlan {
  let plan = PLANS.get(model);
  if (!plan) PLANS.set(model, (plan = makeListPlan(model)));
  return plan;
}

function makeListPlan(model: Metamodel): ListPlan {
  const concrete = Object.values(model.types).filter((t) => !t.abstract).sort((a, b) => (a.name < b.name ? -1 : 1));
  const inverse = new Map<string, { name: string; ownerTypes: Set<string>; itemTypes: string[]; property: string }>();
  for (const t of concrete) {
    for (const l of t.lists.filter((x) => x.inverseOf)) {
      const key = `${l.name} ${l.inverseOf} ${l.itemTypes.join(',')}`;
      const entry = inverse.get(key) ?? { name: l.name, ownerTypes: new Set<string>(), itemTypes: [...l.itemTypes].sort(), property: l.inverseOf! };
      entry.ownerTypes.add(t.name);
      inverse.set(key, entry);
    }
  }
  return {
    children: concrete.map((t) => ({ type: t.name, lists: t.lists.filter((l) => !l.inverseOf).map((l) => l.name) })).filter((c) => c.lists.length),
    inverse: [...inverse.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((e) => ({ ...e, ownerTypes: [...e.ownerTypes].sort() })),
    parentTyped: concrete.filter((t) => !t.owners.length && parentTypesOf(model, t.name).length).map((t) => t.name),
  };
}
