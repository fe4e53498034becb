/**
 * The metamodel as the user interface draws it (`GET /api/<db>/metamodel`,
 * decisions §9): every type with its properties and lists as the generator
 * resolved them, laid over with the profiles that apply to one tenant.
 *
 * Layers, each over the one before: the standard annotations, the standard
 * profile, the tenant's annotations, the tenant's profile. Within a layer a
 * type's own entry is laid over its supertypes' (farthest first); across
 * layers the later layer wins, so what the tenant uploaded for `Asset` beats
 * what the standard profile says for `Classifier`. Custom properties are
 * declared only by annotations (the nearest declaration wins, as on writes);
 * a profile only places them.
 *
 * Flags of standard properties only ever add: an annotation may show an
 * optional property as mandatory or a writable one as read-only, never the
 * other way round, because the REST interface accepts what the metamodel says
 * (README "What the annotations change"); `required` keeps the metamodel's
 * word beside the presented `mandatory`. Keys this module does not know are
 * handed on under `annotations`, so the interface can grow without the
 * server. Pure: no database, no request.
 */
import type { Language, Metamodel, PropertyDef, TypeDef } from '../../runtime/host.ts';
import type { BaseType } from './schema.ts';
import { TYPE_KEY } from './schema.ts';
import { entriesOf, TEXT_LIMITS } from './values.ts';

type Definition = Record<string, unknown>;
type Json = Record<string, unknown>;

export interface Layer {
  kind: 'annotations' | 'profile';
  document: Definition;
}

/** Type → property → limits, as generated/limits.gen.ts has them. */
export type PropertyLimits = Record<string, Record<string, Record<string, unknown>>>;

const LABEL_KEYS = ['label', 'labelEn', 'title', 'titleEn'];
const KNOWN = {
  type: new Set([...LABEL_KEYS, 'hidden', 'groups', 'properties', 'customProperties']),
  group: new Set([...LABEL_KEYS, 'order', 'hidden']),
  property: new Set([...LABEL_KEYS, 'order', 'group', 'hidden', 'readOnly', 'mandatory', 'literals']),
  custom: new Set([...LABEL_KEYS, 'order', 'group', 'hidden', 'readOnly', 'mandatory', 'literals', 'baseType', 'cardinality']),
  literal: new Set([...LABEL_KEYS, 'order', 'hidden', 'customProperties']),
};

/** Limits of a custom property's value by base type (values.ts checks the same). */
const CUSTOM_LIMITS: Record<BaseType, Json> = {
  STRING: { maxLength: TEXT_LIMITS.STRING },
  TEXT: { maxLength: TEXT_LIMITS.TEXT },
  INTEGER: { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  DECIMAL: {},
  BOOLEAN: {},
  DATE: { format: 'date' },
  DATETIME: { format: 'date-time' },
  REFERENCE: { format: 'uuid' },
};

const isObject = (v: unknown): v is Definition => !!v && typeof v === 'object' && !Array.isArray(v);

/** A presentation gathered over layers: later keys replace earlier ones; literals are gathered by value. */
class Gathered {
  readonly keys: Definition = {};
  readonly literals = new Map<string, Definition>();

  add(definition: Definition | null) {
    if (!definition) return;
    for (const [key, value] of Object.entries(definition)) {
      if (key === 'literals') {
        for (const l of entriesOf(value)) this.literals.set(l.name, { ...this.literals.get(l.name), ...withoutCustom(l.definition) });
      } else {
        this.keys[key] = value;
      }
    }
  }
}

const withoutCustom = (d: Definition | null): Definition => {
  if (!d) return {};
  const { customProperties: _ignored, ...rest } = d;
  return rest;
};

interface Declaration {
  name: string;
  definition: Definition;
  declaredBy: string;
  when?: { property: string; literal: string };
}

/** Everything the layers say about one type and its supertypes. */
interface TypeAnnotations {
  own: Definition;
  groups: Map<string, Definition>;
  properties: Map<string, Gathered>;
  declarations: Map<string, Declaration>;
  placements: Map<string, Definition>;
}

function gather(type: TypeDef, layers: Layer[]): TypeAnnotations {
  const found: TypeAnnotations = { own: {}, groups: new Map(), properties: new Map(), declarations: new Map(), placements: new Map() };
  const chain = [...type.supertypes].reverse().concat(type.name);
  for (const layer of layers) {
    for (const name of chain) {
      const definition = layer.document[name];
      if (!isObject(definition)) continue;
      if (name === type.name) Object.assign(found.own, definition);
      for (const g of entriesOf(definition.groups)) found.groups.set(g.name, { ...found.groups.get(g.name), ...g.definition });
      for (const p of entriesOf(definition.properties)) {
        const gathered = found.properties.get(p.name) ?? new Gathered();
        gathered.add(p.definition);
        found.properties.set(p.name, gathered);
        if (layer.kind === 'annotations') {
          for (const l of entriesOf(p.definition?.literals)) declare(found, l.definition?.customProperties, name, { property: p.name, literal: l.name });
        }
      }
      if (layer.kind === 'annotations') declare(found, definition.customProperties, name);
      else for (const c of entriesOf(definition.customProperties)) found.placements.set(c.name, { ...found.placements.get(c.name), ...c.definition });
    }
  }
  return found;
}

/** Declarations of custom properties, with those that apply while one of their literals is set, nested. */
function declare(found: TypeAnnotations, set: unknown, declaredBy: string, when?: Declaration['when']) {
  for (const c of entriesOf(set)) {
    if (!c.definition) continue;
    const key = when ? `${when.property}\u0000${when.literal}\u0000${c.name}` : c.name;
    // A later declaration (a nearer type, a later layer) replaces the earlier one where that stood: the nearest wins.
    found.declarations.set(key, { name: c.name, definition: c.definition, declaredBy, ...(when ? { when } : {}) });
    for (const l of entriesOf(c.definition.literals)) declare(found, l.definition?.customProperties, declaredBy, { property: c.name, literal: l.name });
  }
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Labels in both languages (German is the annotations' default language) and the one asked for. */
function labelled(d: Definition, fallback: string, description: string | undefined, language: Language): Json {
  const labels = { de: text(d.label) ?? text(d.labelEn) ?? fallback, en: text(d.labelEn) ?? text(d.label) ?? fallback };
  const de = text(d.title) ?? text(d.titleEn) ?? description;
  const en = text(d.titleEn) ?? text(d.title) ?? description;
  const descriptions = { ...(de !== undefined ? { de } : {}), ...(en !== undefined ? { en } : {}) };
  const chosen = descriptions[language];
  return { label: labels[language], labels, ...(chosen !== undefined ? { description: chosen } : {}), descriptions };
}

/** The keys nobody here knows, handed on as they are. */
const unknownKeys = (d: Definition, known: Set<string>): Json => Object.fromEntries(Object.entries(d).filter(([k]) => !known.has(k)));

const presentation = (d: Definition): Json => ({
  ...(text(d.group) !== undefined ? { group: d.group } : {}),
  ...(typeof d.order === 'number' ? { order: d.order } : {}),
  hidden: d.hidden === true,
});

/** Literals in their order: by `order` where given, then as listed. */
function literalsOf(values: string[], annotated: Map<string, Definition>, language: Language): Json[] {
  const all = [...values, ...[...annotated.keys()].filter((v) => !values.includes(v))];
  return byOrder(all.map((value) => {
    const d = annotated.get(value) ?? {};
    return { value, ...labelled(d, value, undefined, language), ...(typeof d.order === 'number' ? { order: d.order } : {}), hidden: d.hidden === true, annotations: unknownKeys(d, KNOWN.literal) };
  }));
}

/** Sorted by `order` where given (those without come last), otherwise as they were: a stable sort. */
function byOrder<T extends Json>(items: T[]): T[] {
  const rank = (i: T) => (typeof i.order === 'number' ? i.order : Infinity);
  return items.map((item, index) => ({ item, index })).sort((a, b) => rank(a.item) - rank(b.item) || a.index - b.index).map((e) => e.item);
}

/** The metamodel's own rule (generator/property-kinds.ts isMandatory): the label is the business key unless formed from other properties. */
const requiredOf = (t: TypeDef, p: PropertyDef) => (p.name === 'label' ? !t.labelFrom : p.required);

function standardProperty(t: TypeDef, p: PropertyDef, found: TypeAnnotations, limits: PropertyLimits, language: Language): Json {
  const gathered = found.properties.get(p.name) ?? new Gathered();
  const d = gathered.keys;
  const required = requiredOf(t, p);
  const literals = p.dataType === 'ENUMERATION' || gathered.literals.size ? literalsOf(p.values ?? [], gathered.literals, language) : undefined;
  return {
    name: p.name,
    custom: false,
    dataType: p.dataType,
    many: p.many,
    ...(p.range !== undefined ? { range: p.range } : {}),
    ...(literals ? { literals } : {}),
    required,
    mandatory: required || d.mandatory === true,
    readOnly: p.readOnly || d.readOnly === true,
    writeOnly: p.writeOnly,
    owner: p.owner,
    ...(p.default !== undefined ? { default: p.default } : {}),
    limits: limits[t.name]?.[p.name] ?? {},
    declaredBy: p.declaredBy,
    ...labelled(d, p.name, p.description, language),
    ...presentation(d),
    annotations: unknownKeys(d, KNOWN.property),
  };
}

function customProperty(c: Declaration, placement: Definition | undefined, language: Language): Json {
  const d = { ...c.definition, ...placement };
  const baseType = c.definition.baseType as BaseType;
  const annotated = new Map(entriesOf(c.definition.literals).map((l) => [l.name, withoutCustom(l.definition)]));
  const literals = c.definition.literals === undefined ? undefined : literalsOf([], annotated, language);
  const mandatory = c.definition.mandatory === true;
  return {
    name: c.name,
    custom: true,
    baseType,
    many: c.definition.cardinality === 'MANY',
    ...(literals ? { literals } : {}),
    required: mandatory,
    mandatory,
    readOnly: d.readOnly === true,
    writeOnly: false,
    limits: CUSTOM_LIMITS[baseType] ?? {},
    declaredBy: c.declaredBy,
    ...(c.when ? { when: c.when } : {}),
    ...labelled(d, c.name, undefined, language),
    ...presentation(d),
    annotations: unknownKeys(d, KNOWN.custom),
  };
}

function resolveType(model: Metamodel, t: TypeDef, layers: Layer[], limits: PropertyLimits, language: Language): Json {
  const found = gather(t, layers);
  const standard = t.properties.map((p) => standardProperty(t, p, found, limits, language));
  const custom = [...found.declarations.values()].map((c) => customProperty(c, found.placements.get(c.name), language));
  const lists = t.lists.map((l) => {
    const d = found.properties.get(l.name)?.keys ?? {};
    return {
      name: l.name,
      itemType: l.itemType,
      itemTypes: l.itemTypes,
      inverse: l.inverseOf !== undefined,
      ...(l.inverseOf !== undefined ? { inverseOf: l.inverseOf } : {}),
      declaredBy: l.declaredBy,
      ...labelled(d, l.name, l.description, language),
      ...presentation(d),
      readOnly: l.inverseOf !== undefined || d.readOnly === true,
      annotations: unknownKeys(d, KNOWN.property),
    };
  });
  const groups = [...found.groups.entries()].map(([name, d]) => ({
    name, ...labelled(d, name, undefined, language), ...presentation(d), annotations: unknownKeys(d, KNOWN.group),
  }));
  const owner = t.ownerProperty ? t.properties.find((p) => p.name === t.ownerProperty) : undefined;
  return {
    name: t.name,
    ...(t.supertype ? { supertype: t.supertype } : {}),
    supertypes: t.supertypes,
    abstract: t.abstract,
    concreteTypes: t.concreteTypes,
    subtypes: Object.values(model.types).filter((s) => s.supertype === t.name).map((s) => s.name).sort(),
    plural: t.plural,
    root: t.root,
    ...(owner ? { owner: { property: owner.name, type: owner.range } } : {}),
    ...(t.labelFrom ? { labelFrom: t.labelFrom } : {}),
    ...labelled(found.own, t.name, t.description, language),
    hidden: found.own.hidden === true,
    groups: byOrder(groups),
    properties: byOrder([...standard, ...custom]),
    lists: byOrder(lists),
    annotations: unknownKeys(found.own, KNOWN.type),
  };
}

/** Top-level keys that are not types (themes and the like), the profile's over the annotations'. */
function settingsOf(layers: Layer[]): Json {
  const settings: Json = {};
  for (const layer of layers) for (const [key, value] of Object.entries(layer.document)) if (!TYPE_KEY.test(key)) settings[key] = value;
  return settings;
}

export function resolveMetamodelFor(model: Metamodel, layers: Layer[], limits: PropertyLimits, language: Language): Json {
  const names = Object.keys(model.types).sort();
  return {
    language,
    types: Object.fromEntries(names.map((name) => [name, resolveType(model, model.types[name], layers, limits, language)])),
    settings: settingsOf(layers),
  };
}
