/** Renders objects and lists in the HAL form of the specification. */
import type { Metamodel, PropertyDef, TypeDef } from '../metamodel/model.ts';
import { parentRelation } from '../metamodel/relations.ts';
import { plainObject, type LinkFacts, type StoredObject } from '../storage/objects.ts';

export interface Links {
  /** `<origin><context path>`: every href starts here. */
  base: string;
  db: string;
  /** Links to lists that plugins serve below an object (a user's `accessKeys`), by name, for this caller: list names. */
  more?: (plain: Record<string, unknown>) => string[];
}

const PLURALS = new WeakMap<Metamodel, Map<string, string>>();

/** The top-level list an object of the type is reached by: its own plural or its nearest supertype's. */
export function pluralOf(model: Metamodel, typeName: string): string {
  let known = PLURALS.get(model);
  if (!known) PLURALS.set(model, (known = new Map()));
  let plural = known.get(typeName);
  if (plural === undefined) {
    plural = 'assets';
    for (let t: string | undefined = typeName; t; t = model.types[t]?.supertype) {
      if (model.types[t]?.plural) {
        plural = model.types[t].plural;
        break;
      }
    }
    known.set(typeName, plural);
  }
  return plural;
}

/** What links and hides of a type's properties, found once per type: every rendered object asks. */
interface RenderedProperties {
  references: PropertyDef[];
  writeOnly: string[];
}

const RENDERED = new WeakMap<TypeDef, RenderedProperties>();

function renderedProperties(type: TypeDef): RenderedProperties {
  let found = RENDERED.get(type);
  if (!found) {
    found = { references: type.properties.filter((p) => p.dataType === 'REFERENCE'), writeOnly: type.properties.filter((p) => p.writeOnly).map((p) => p.name) };
    RENDERED.set(type, found);
  }
  return found;
}

export function objectHref(model: Metamodel, links: Links, typeName: string, id: string): string {
  return `${links.base}/rest/${links.db}/${pluralOf(model, typeName)}/${id}`;
}

/** The object's page in the user interface (`href`). */
export function webHref(model: Metamodel, links: Links, typeName: string, id: string): string {
  return `${links.base}/web/${links.db}/${pluralOf(model, typeName)}/${id}`;
}

/**
 * Adds `_links` (and the user interface's `href`) to a plain object as kept
 * in history: `self`, `parent` and the same link named after the relation
 * that holds the object (decisions §7.3, `parentRelation`), one per
 * reference, and one per list that holds something (`facts.lists`; facts
 * null: a version in history, which links no lists), plus the lists plugins
 * serve below it for this caller (`links.more`).
 */
export function halObject(model: Metamodel, links: Links, plain: Record<string, unknown>, facts: LinkFacts | null): Record<string, unknown> {
  const typeName = plain._type as string;
  const type = model.types[typeName];
  const self = objectHref(model, links, typeName, plain.id as string);
  const rel: Record<string, { href: string }> = { self: { href: self } };
  const out: Record<string, unknown> = { ...plain, db: links.db, href: webHref(model, links, typeName, plain.id as string) };
  const parentId = plain.parentId as string | null | undefined;
  if (parentId) {
    rel.parent = { href: `${links.base}/rest/${links.db}/assets/${parentId}` };
    if (facts?.parentType) rel[parentRelation(model, typeName, facts.parentType)] = { href: objectHref(model, links, facts.parentType, parentId) };
  }
  if (type) {
    const { references, writeOnly } = renderedProperties(type);
    for (const p of references) {
      if (typeof plain[p.name] === 'string') rel[p.name] = { href: objectHref(model, links, p.range!, plain[p.name] as string) };
    }
    for (const name of writeOnly) delete out[name];
    if (facts) for (const l of type.lists) if (facts.lists.includes(l.name)) rel[l.name] = { href: `${self}/${l.name}` };
  }
  for (const name of links.more?.(plain) ?? []) rel[name] = { href: `${self}/${name}` };
  out._links = rel;
  return out;
}

/** A stored object as read: its plain form with links. */
export function halStored(model: Metamodel, links: Links, db: string, o: StoredObject, facts: LinkFacts | null): Record<string, unknown> {
  return halObject(model, links, plainObject(o, db), facts);
}

export function halList(listName: string, selfHref: string, total: number, items: Record<string, unknown>[], next?: string) {
  return {
    total,
    _links: { self: { href: selfHref }, ...(next ? { next: { href: next } } : {}) },
    _embedded: { [listName]: items },
  };
}
