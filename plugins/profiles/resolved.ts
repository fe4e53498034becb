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
import { baseTypeOf, type BaseType } from './schema.ts';
import { KIND_TYPE, STEREOTYPE_PROPERTY } from './rules.ts';
import { STATUSES_KEY, TenantStatuses } from './status-rules.ts';
import { entriesOf, TEXT_LIMITS } from './values.ts';
import { annotationChain, extendsChain, extendsIn, isSetting, laterTypes, type ExtendsOf } from './vocabulary.ts';

type Definition = Record<string, unknown>;
type Json = Record<string, unknown>;

export interface Layer {
  kind: 'annotations' | 'profile';
  document: Definition;
}

/** Type → property → limits, as generated/limits.gen.ts has them. */
export type PropertyLimits = Record<string, Record<string, Record<string, unknown>>>;

const LABEL_KEYS = ['label', 'labelEn', 'title', 'titleEn'];
const FIELD_KEYS = ['order', 'group', 'hidden', 'readOnly', 'mandatory', 'literals', 'width', 'default', 'placeholder'];
/** The keys of the vocabulary (schema.ts), where each stands; every other key is handed on under `annotations`. */
const KNOWN = {
  type: new Set([...LABEL_KEYS, 'plural', 'pluralEn', 'gender', 'icon', 'extends', 'order', 'hidden', 'groups', 'stereotypes', 'properties', 'customProperties']),
  group: new Set([...LABEL_KEYS, 'order', 'hidden', 'icon']),
  stereotype: new Set([...LABEL_KEYS, 'icon', 'order', 'hidden', 'properties', 'customProperties']),
  property: new Set([...LABEL_KEYS, ...FIELD_KEYS]),
  custom: new Set([...LABEL_KEYS, ...FIELD_KEYS, 'baseType', 'cardinality']),
  literal: new Set([...LABEL_KEYS, 'order', 'group', 'hidden', 'icon', 'customProperties']),
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
  ID: { minLength: 1, maxLength: TEXT_LIMITS.ID },
  ENUM: { maxLength: TEXT_LIMITS.ENUM },
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

/** A stereotype as the layers say it: its own keys, and how it shows properties. */
interface Stereotype {
  own: Definition;
  properties: Map<string, Definition>;
}

/** Everything the layers say about one type, its supertypes and the type it extends. */
interface TypeAnnotations {
  own: Definition;
  groups: Map<string, Definition>;
  properties: Map<string, Gathered>;
  declarations: Map<string, Declaration>;
  placements: Map<string, Definition>;
  stereotypes: Map<string, Stereotype>;
}

function gather(model: Metamodel, type: TypeDef, layers: Layer[], extendsOf: ExtendsOf, kind?: string): TypeAnnotations {
  const found: TypeAnnotations = { own: {}, groups: new Map(), properties: new Map(), declarations: new Map(), placements: new Map(), stereotypes: new Map() };
  // A scheme's kind (its modelType) is addressed by its own name, on top of the type's entries (decisions §7.1).
  const chain = [...annotationChain(model, type.name, extendsOf), ...(kind !== undefined ? [kind] : [])];
  // The type-level keys (label, icon, plural …) of the type it extends, then its own, then its kind's: the nearest win.
  const ownChain = [...extendsChain(model, type.name, extendsOf), ...(kind !== undefined ? [kind] : [])];
  const place = (set: unknown) => {
    for (const c of entriesOf(set)) found.placements.set(c.name, { ...found.placements.get(c.name), ...c.definition });
  };
  for (const layer of layers) {
    for (const name of chain) {
      const definition = Object.hasOwn(layer.document, name) ? layer.document[name] : undefined;
      if (!isObject(definition)) continue;
      if (ownChain.includes(name)) Object.assign(found.own, definition);
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
      else place(definition.customProperties);
      for (const st of entriesOf(definition.stereotypes)) {
        const stereotype = found.stereotypes.get(st.name) ?? { own: {}, properties: new Map() };
        const { properties, customProperties, ...own } = st.definition ?? {};
        Object.assign(stereotype.own, own);
        for (const p of entriesOf(properties)) stereotype.properties.set(p.name, { ...stereotype.properties.get(p.name), ...p.definition });
        found.stereotypes.set(st.name, stereotype);
        if (layer.kind === 'annotations') declare(found, customProperties, name, { property: STEREOTYPE_PROPERTY, literal: st.name });
        else place(customProperties);
      }
    }
  }
  return found;
}

/** Declarations of custom properties, with those that apply while one of their literals is set, nested. */
function declare(found: TypeAnnotations, set: unknown, declaredBy: string, when?: Declaration['when']) {
  for (const c of entriesOf(set)) {
    // `name:` alone declares a text, as a declaration without `baseType` does.
    const definition = c.definition ?? {};
    const key = when ? `${when.property}\u0000${when.literal}\u0000${c.name}` : c.name;
    // A later declaration (a nearer type, a later layer) replaces the earlier one where that stood: the nearest wins.
    found.declarations.set(key, { name: c.name, definition, declaredBy, ...(when ? { when } : {}) });
    for (const l of entriesOf(definition.literals)) declare(found, l.definition?.customProperties, declaredBy, { property: c.name, literal: l.name });
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

/** What a field's form shows besides its label: width, placeholder, the value it starts with. */
const field = (d: Definition): Json => ({
  ...(typeof d.width === 'number' || typeof d.width === 'string' ? { width: d.width } : {}),
  ...(text(d.placeholder) !== undefined ? { placeholder: d.placeholder } : {}),
});

const iconOf = (d: Definition): Json => (text(d.icon) !== undefined ? { icon: d.icon } : {});

/** Literals in their order: by `order` where given, then as listed. */
function literalsOf(values: string[], annotated: Map<string, Definition>, language: Language): Json[] {
  const all = [...values, ...[...annotated.keys()].filter((v) => !values.includes(v))];
  return byOrder(all.map((value) => {
    const d = annotated.get(value) ?? {};
    return { value, ...labelled(d, value, undefined, language), ...presentation(d), ...iconOf(d), annotations: unknownKeys(d, KNOWN.literal) };
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
    // The value a form starts with: the annotations', else the metamodel's.
    ...(isScalar(d.default) ? { default: d.default } : p.default !== undefined ? { default: p.default } : {}),
    limits: limits[t.name]?.[p.name] ?? {},
    declaredBy: p.declaredBy,
    ...labelled(d, p.name, p.description, language),
    ...presentation(d),
    ...field(d),
    annotations: unknownKeys(d, KNOWN.property),
  };
}

function customProperty(c: Declaration, placement: Definition | undefined, language: Language): Json {
  const d = { ...c.definition, ...placement };
  const baseType = baseTypeOf(c.definition);
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
    ...(isScalar(d.default) ? { default: d.default } : {}),
    limits: CUSTOM_LIMITS[baseType] ?? {},
    declaredBy: c.declaredBy,
    ...(c.when ? { when: c.when } : {}),
    ...labelled(d, c.name, undefined, language),
    ...presentation(d),
    ...field(d),
    annotations: unknownKeys(d, KNOWN.custom),
  };
}

function resolveType(model: Metamodel, t: TypeDef, layers: Layer[], extendsOf: ExtendsOf, limits: PropertyLimits, language: Language, kind?: string): Json {
  const found = gather(model, t, layers, extendsOf, kind);
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
      ...field(d),
      readOnly: l.inverseOf !== undefined || d.readOnly === true,
      annotations: unknownKeys(d, KNOWN.property),
    };
  });
  const groups = [...found.groups.entries()].map(([name, d]) => ({
    name, ...labelled(d, name, undefined, language), ...presentation(d), ...iconOf(d), annotations: unknownKeys(d, KNOWN.group),
  }));
  const stereotypes = [...found.stereotypes.entries()].map(([name, s]) => ({
    name,
    ...labelled(s.own, name, undefined, language),
    ...presentation(s.own),
    ...iconOf(s.own),
    properties: Object.fromEntries([...s.properties.entries()].map(([p, d]) => [p, shownAs(d, language)])),
    annotations: unknownKeys(s.own, KNOWN.stereotype),
  }));
  const own = found.own;
  const plural = text(own.plural) ?? text(own.pluralEn);
  const pluralEn = text(own.pluralEn) ?? text(own.plural);
  return {
    name: t.name,
    ...(t.supertype ? { supertype: t.supertype } : {}),
    supertypes: t.supertypes,
    abstract: t.abstract,
    concreteTypes: t.concreteTypes,
    subtypes: Object.values(model.types).filter((s) => s.supertype === t.name).map((s) => s.name).sort(),
    plural: t.plural,
    root: t.root,
    ...(t.owners.length === 1 ? { owner: { property: t.owners[0].property, type: t.owners[0].range } } : {}),
    ...(t.owners.length ? { owners: t.owners.map((o) => ({ property: o.property, type: o.range, parentTypes: o.parentTypes })) } : {}),
    ...(t.modelTypes ? { modelTypes: t.modelTypes } : {}),
    ...(t.labelFrom ? { labelFrom: t.labelFrom } : {}),
    ...labelled(own, t.name, t.description, language),
    ...(plural !== undefined ? { pluralLabel: language === 'de' ? plural : pluralEn, pluralLabels: { de: plural, en: pluralEn } } : {}),
    ...(text(own.gender) !== undefined ? { gender: own.gender } : {}),
    ...iconOf(own),
    ...(text(own.extends) !== undefined && Object.hasOwn(model.types, own.extends as string) ? { extends: own.extends } : {}),
    ...(typeof own.order === 'number' ? { order: own.order } : {}),
    hidden: own.hidden === true,
    groups: byOrder(groups),
    stereotypes: byOrder(stereotypes),
    properties: byOrder([...standard, ...custom]),
    lists: byOrder(lists),
    annotations: unknownKeys(own, KNOWN.type),
  };
}

/** How a stereotype shows one property: only what it says, labels resolved. */
function shownAs(d: Definition, language: Language): Json {
  const hasLabel = text(d.label) !== undefined || text(d.labelEn) !== undefined;
  const { label, labels, description, descriptions } = labelled(d, '', undefined, language) as { label: string; labels: Json; description?: string; descriptions: Json };
  return {
    ...(hasLabel ? { label, labels } : {}),
    ...(description !== undefined ? { description, descriptions } : {}),
    ...(text(d.group) !== undefined ? { group: d.group } : {}),
    ...(typeof d.order === 'number' ? { order: d.order } : {}),
    ...(typeof d.hidden === 'boolean' ? { hidden: d.hidden } : {}),
    ...(typeof d.readOnly === 'boolean' ? { readOnly: d.readOnly } : {}),
    ...(typeof d.mandatory === 'boolean' ? { mandatory: d.mandatory } : {}),
    ...(isScalar(d.default) ? { default: d.default } : {}),
    ...field(d),
    annotations: unknownKeys(d, KNOWN.property),
  };
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/**
 * Top-level keys that are not types, known now or later (themes and the
 * like), the profile's over the annotations'. A profile's `statuses` is no
 * setting: its statuses are literals of `status` (statusLayer).
 */
function settingsOf(model: Metamodel, layers: Layer[]): Json {
  const later = laterTypes(model);
  const settings: Json = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.document)) {
      if (isSetting(key, model, later) && !(layer.kind === 'profile' && key === STATUSES_KEY)) settings[key] = value;
    }
  }
  return settings;
}

/**
 * The statuses the profiles declare beyond the standard ones (decisions §7.2),
 * as literals of `status` with their labels, under every other layer (whose
 * labels of the same literal win).
 */
function statusLayer(model: Metamodel, layers: Layer[]): Layer[] {
  const literals: Definition = {};
  for (const layer of layers) {
    if (layer.kind !== 'profile') continue;
    for (const [name, l] of new TenantStatuses(layer.document, model).declared) {
      literals[name] = { ...(l.label !== undefined ? { label: l.label } : {}), ...(l.labelEn !== undefined ? { labelEn: l.labelEn } : {}) };
    }
  }
  const root = Object.values(model.types).find((t) => t.properties.some((p) => p.name === 'status' && p.declaredBy === t.name));
  if (!root || !Object.keys(literals).length) return [];
  return [{ kind: 'annotations', document: { [root.name]: { properties: { status: { literals } } } } }];
}

/**
 * `scheme`: the view of one scheme (`?scheme=`): its kind's entries apply to
 * the types that have a kind (Scheme), on top of their own.
 */
export function resolveMetamodelFor(model: Metamodel, given: Layer[], limits: PropertyLimits, language: Language, scheme?: { kind?: string }): Json {
  const layers = [...statusLayer(model, given), ...given];
  const names = Object.keys(model.types).sort();
  const extendsOf = extendsIn(...layers.map((l) => l.document));
  const kindFor = (t: TypeDef) => (scheme?.kind !== undefined && (t.name === KIND_TYPE || t.supertypes.includes(KIND_TYPE)) ? scheme.kind : undefined);
  return {
    language,
    types: Object.fromEntries(names.map((name) => [name, resolveType(model, model.types[name], layers, extendsOf, limits, language, kindFor(model.types[name]))])),
    settings: settingsOf(model, layers),
  };
}
