/**
 * What the engine needs of the metamodel, derived generically from it (no
 * type is named here): which properties a record carries, which lists an
 * object's record is followed by, how a label is derived.
 */
import { WRITABLE_SYSTEM_PROPERTIES, type Metamodel, type PropertyDef, type TypeDef } from '../../runtime/host.ts';

const WRITABLE_SYSTEM = new Set<string>(WRITABLE_SYSTEM_PROPERTIES);
/** The properties an object keeps in columns of its own, not among its other properties (`props`). */
export const SYSTEM_COLUMNS: ReadonlySet<string> = new Set<string>(['label', 'title', 'description', 'status']);

/** An object as the engine reads it, current or as of a time. */
export interface Node {
  /**
   * Its key; null for an object a walk over a tree read without it (download.ts: of the objects of types that hold
   * nothing it reads, the leaves, it never asks for children).
   */
  id: string | null;
  type: string;
  parentId: string | null;
  list: string;
  label: string;
  title: string | null;
  description: string | null;
  status: string | null;
  /** Where the read gave it (a walk over a tree does not need it). */
  modelId?: string | null;
  props: Record<string, unknown>;
  custom: Record<string, unknown>;
  /** Whether it has children, where the read that found it said. */
  hasChildren?: boolean;
}

/** A Node read with its key: by key or label, or as one whose children a walk reads. */
export type KeyedNode = Node & { id: string };

/**
 * The properties a walk over a tree (downloads) has no use for in any object: those of no type's record and from
 * none of which a label is derived (the references to the parent, which the nesting says, and what the service
 * keeps for itself).
 */
export function unusedProperties(model: Metamodel): string[] {
  const used = new Set<string>();
  const all = new Set<string>();
  for (const type of Object.values(model.types)) {
    for (const p of type.properties) all.add(p.name);
    for (const p of recordProperties(type)) used.add(p.name);
    for (const name of type.labelFrom ?? []) used.add(name);
  }
  return [...all].filter((name) => !used.has(name) && !SYSTEM_COLUMNS.has(name)).sort();
}

/** The properties a record carries, in metamodel order: writable, readable, not the reference to the parent (the nesting says it). */
export function recordProperties(type: TypeDef): PropertyDef[] {
  return type.properties.filter((p) => !p.readOnly && !p.writeOnly && !p.owner && !type.owners.some((o) => o.property === p.name)
    && (WRITABLE_SYSTEM.has(p.name) || !SYSTEM_COLUMNS.has(p.name)));
}

/** The lists of children an object's record is followed by, in metamodel order (inverse lists are views, not children). */
export function childLists(type: TypeDef) {
  return type.lists.filter((l) => !l.inverseOf);
}

/** Whether a type's label is derived from references (technical keys): such lists are ordered by the keys the references name. */
export function labelFromReferences(model: Metamodel, typeName: string): boolean {
  const type = model.types[typeName];
  return !!type?.labelFrom?.some((name) => type.properties.find((p) => p.name === name)?.dataType === 'REFERENCE');
}

/** The label the service would derive from the properties (runtime/rest/writer.ts deriveLabel), or undefined. */
export function derivedLabel(type: TypeDef, values: (name: string) => unknown): string | undefined {
  if (!type.labelFrom) return undefined;
  const parts = type.labelFrom.map(values).filter((v) => v !== undefined && v !== null && v !== '');
  return parts.length ? parts.join(' ') : undefined;
}

/** Keys sorted at every depth of an object, so that the same value is written the same way. */
export function sortedValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedValue);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedValue((value as Record<string, unknown>)[k])]));
  }
  return value;
}
