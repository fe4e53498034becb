/**
 * Resolves a raw metamodel (as written in the checked-in definition or read
 * from the `meta` database) into the `Metamodel` the emitters work on:
 * inheritance flattened, plurals and concrete subtypes computed, every name
 * checked. Output order is sorted so that generation is deterministic.
 */
import type {
  ListDef, Metamodel, PropertyDef, RawMetamodel, RawProperty, TypeDef,
} from './model.ts';
import { DATA_TYPES, FIELD_DATA_TYPES, MODEL_TYPES } from './model.ts';

export class MetamodelError extends Error {}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function resolveMetamodel(raw: RawMetamodel): Metamodel {
  const types = raw.types ?? {};
  const enumerations: Record<string, string[]> = {};
  for (const name of Object.keys(raw.enumerations ?? {}).sort()) {
    const literals = raw.enumerations[name].literals ?? [];
    if (!literals.length) throw new MetamodelError(`enumeration ${name} has no literals`);
    enumerations[name] = [...literals];
  }
  const records = resolveRecords(raw, enumerations);
  const chain = (name: string): string[] => {
    const seen: string[] = [];
    let t = types[name]?.supertype;
    while (t) {
      if (!types[t]) throw new MetamodelError(`type ${name}: unknown supertype ${t}`);
      if (seen.includes(t) || t === name) throw new MetamodelError(`type ${name}: cyclic type hierarchy`);
      seen.push(t);
      t = types[t].supertype;
    }
    return seen;
  };
  const names = Object.keys(types).sort();
  const supertypesOf = Object.fromEntries(names.map((n) => [n, chain(n)]));
  const concreteTypesOf = (name: string) =>
    names.filter((n) => !types[n].abstract && (n === name || supertypesOf[n].includes(name)));

  const result: Metamodel = { types: {}, plurals: {}, rootLists: {}, enumerations };
  // A type's own kinds of model, else its nearest supertype's.
  const modelTypesOf = (name: string): string[] | undefined => {
    const declared = [name, ...supertypesOf[name]].map((n) => types[n].modelTypes).find((m) => m !== undefined && m !== null && m.trim() !== '');
    const kinds = declared?.split(/\s+/).filter(Boolean);
    for (const kind of kinds ?? []) {
      if (!enumerations[MODEL_TYPES]?.includes(kind)) throw new MetamodelError(`type ${name}: modelTypes names ${kind}, which is no literal of ${MODEL_TYPES}`);
    }
    return kinds && [...kinds].sort();
  };
  for (const name of names) {
    const raw = types[name];
    if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new MetamodelError(`type name ${name} must be PascalCase`);
    const properties: PropertyDef[] = [];
    const lists: ListDef[] = [];
    for (const declaredBy of [name, ...supertypesOf[name]]) {
      for (const [propName, p] of Object.entries(types[declaredBy].properties ?? {})) {
        if (properties.some((x) => x.name === propName) || lists.some((x) => x.name === propName)) continue;
        const where = `type ${declaredBy}, property ${propName}`;
        checkProperty(where, p, types, enumerations);
        if (p.dataType === 'RECORDS' && (!p.range || !records[p.range])) throw new MetamodelError(`${where}: unknown record structure ${p.range}`);
        if (p.dataType === 'LIST' || p.dataType === 'INVERSE') {
          lists.push({
            name: propName,
            itemType: p.range!,
            itemTypes: concreteTypesOf(p.range!),
            ...(p.inverseOf ? { inverseOf: p.inverseOf } : {}),
            ...(p.description ? { description: p.description } : {}),
            declaredBy,
          });
        } else {
          if (p.dataType === 'RECORDS' && p.cardinality === 'MANY') throw new MetamodelError(`${where}: RECORDS is a list already and cannot be MANY`);
          properties.push({
            ...valueProperty(propName, p as RawProperty & { dataType: PropertyDef['dataType'] }, enumerations, declaredBy),
            ...(p.dataType === 'RECORDS' ? { fields: records[p.range!] } : {}),
          });
        }
      }
    }
    properties.sort(byName);
    lists.sort(byName);
    const owners = properties.filter((p) => p.owner);
    for (const p of owners) {
      if (p.dataType !== 'REFERENCE' || p.many) throw new MetamodelError(`type ${name}, property ${p.name}: an owner property is a single REFERENCE`);
      if (p.required && owners.length > 1) throw new MetamodelError(`type ${name}, property ${p.name}: of several owner properties only one is set, so none can be mandatory`);
    }
    // An abstract type without a plural is not addressable (Resource).
    const plural = raw.plural ?? (raw.abstract ? '' : `${name.charAt(0).toLowerCase()}${name.slice(1)}s`);
    if (plural) {
      if (!/^[a-z][A-Za-z0-9]*$/.test(plural)) throw new MetamodelError(`type ${name}: invalid plural ${plural}`);
      if (result.plurals[plural]) throw new MetamodelError(`plural ${plural} used by ${result.plurals[plural]} and ${name}`);
      result.plurals[plural] = name;
    }
    const labelFrom = raw.labelFrom?.split(/\s+/).filter(Boolean);
    for (const p of labelFrom ?? []) {
      if (!properties.some((x) => x.name === p)) throw new MetamodelError(`type ${name}: labelFrom names unknown property ${p}`);
    }
    result.types[name] = {
      name,
      plural,
      ...(raw.supertype ? { supertype: raw.supertype } : {}),
      abstract: !!raw.abstract,
      root: !!raw.root,
      ...(labelFrom?.length ? { labelFrom } : {}),
      ...(raw.description ? { description: raw.description } : {}),
      supertypes: supertypesOf[name],
      concreteTypes: concreteTypesOf(name),
      properties,
      lists,
      owners: owners.map((p) => ({ property: p.name, range: p.range!, parentTypes: [] })),
      ...(modelTypesOf(name) ? { modelTypes: modelTypesOf(name) } : {}),
    };
    if (raw.root) result.rootLists[plural] = name;
  }
  for (const t of Object.values(result.types)) {
    for (const l of t.lists) {
      // `/rest/<db>/<plural>/<key>/history` is an object's history (runtime/rest/history.ts): no list may take that name.
      if (l.name === 'history') throw new MetamodelError(`type ${t.name}: a list may not be called history (the name of an object's versions)`);
      if (l.inverseOf) {
        const target = result.types[l.itemType].properties.find((p) => p.name === l.inverseOf);
        if (!target || target.dataType !== 'REFERENCE') {
          throw new MetamodelError(`type ${t.name}, list ${l.name}: inverseOf ${l.inverseOf} is not a reference of ${l.itemType}`);
        }
      }
    }
  }
  resolveOwners(result);
  return result;
}

/**
 * The parents each owner property names: the concrete types of its range
 * that hold the type in a child list. Every parent that can hold an object
 * of a type with owner properties is named by exactly one of them, so that
 * wherever the object stands one reference says where.
 */
function resolveOwners(model: Metamodel) {
  const holders = (typeName: string) => Object.values(model.types)
    .filter((t) => !t.abstract && t.lists.some((l) => !l.inverseOf && l.itemTypes.includes(typeName)))
    .map((t) => t.name);
  for (const t of Object.values(model.types)) {
    if (!t.owners.length) continue;
    const parents = t.abstract ? [] : holders(t.name);
    for (const o of t.owners) {
      o.parentTypes = model.types[o.range].concreteTypes.filter((c) => t.abstract || parents.includes(c)).sort();
      if (!t.abstract && !o.parentTypes.length) throw new MetamodelError(`type ${t.name}, owner property ${o.property}: no ${o.range} holds a ${t.name}`);
    }
    for (const parent of parents) {
      const naming = t.owners.filter((o) => o.parentTypes.includes(parent)).map((o) => o.property);
      if (naming.length !== 1) throw new MetamodelError(`type ${t.name}: a ${parent} holds it, which ${naming.length ? `${naming.join(' and ')} both name` : 'no owner property names'}`);
    }
  }
}

/** A property that holds values (not a list of objects), as resolved. */
function valueProperty(name: string, p: RawProperty & { dataType: PropertyDef['dataType'] }, enumerations: Record<string, string[]>, declaredBy: string): PropertyDef {
  return {
    name,
    dataType: p.dataType,
    ...(p.range ? { range: p.range } : {}),
    ...(p.dataType === 'ENUMERATION' ? { values: enumerations[p.range!] } : {}),
    required: p.required === 'MANDATORY',
    many: p.cardinality === 'MANY',
    readOnly: !!p.readOnly,
    writeOnly: !!p.writeOnly,
    owner: !!p.owner,
    ...(p.default !== undefined && p.default !== null ? { default: String(p.default) } : {}),
    ...(p.description ? { description: p.description } : {}),
    declaredBy,
  };
}

/** The record structures by name, each its fields sorted by name; a field holds one value of a simple kind. */
function resolveRecords(raw: RawMetamodel, enumerations: Record<string, string[]>): Record<string, PropertyDef[]> {
  const records: Record<string, PropertyDef[]> = {};
  for (const name of Object.keys(raw.records ?? {}).sort()) {
    if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new MetamodelError(`record ${name}: name must be PascalCase`);
    if (raw.types?.[name]) throw new MetamodelError(`record ${name}: a type has that name`);
    const fields = Object.entries(raw.records![name].fields ?? {});
    if (!fields.length) throw new MetamodelError(`record ${name} has no fields`);
    records[name] = fields.map(([fieldName, f]) => {
      const where = `record ${name}, field ${fieldName}`;
      checkProperty(where, f, {}, enumerations);
      if (!FIELD_DATA_TYPES.includes(f.dataType) || f.cardinality === 'MANY' || f.owner || f.readOnly || f.writeOnly || f.default !== undefined) {
        throw new MetamodelError(`${where}: a field holds one value of ${FIELD_DATA_TYPES.join(', ')}, with no default and no flags`);
      }
      return valueProperty(fieldName, f as RawProperty & { dataType: PropertyDef['dataType'] }, enumerations, name);
    }).sort(byName);
  }
  return records;
}

const PROPERTY_KEYS = new Set(['dataType', 'range', 'required', 'cardinality', 'readOnly', 'writeOnly', 'owner', 'default', 'inverseOf', 'description']);

function checkProperty(
  where: string, p: RawProperty, types: RawMetamodel['types'], enumerations: Record<string, string[]>,
) {
  for (const key of Object.keys(p ?? {})) {
    if (!PROPERTY_KEYS.has(key)) throw new MetamodelError(`${where}: unknown key ${key}`);
  }
  if (!/^_?[a-z][A-Za-z0-9]*$/.test(where.split(' ').pop()!)) throw new MetamodelError(`${where}: invalid name`);
  if (!DATA_TYPES.includes(p.dataType)) throw new MetamodelError(`${where}: unknown dataType ${p.dataType}`);
  if (p.dataType === 'ENUMERATION') {
    if (!p.range || !enumerations[p.range]) throw new MetamodelError(`${where}: unknown enumeration ${p.range}`);
    if (p.default !== undefined && !enumerations[p.range].includes(String(p.default))) {
      throw new MetamodelError(`${where}: default ${p.default} is not a literal of ${p.range}`);
    }
  }
  if (['REFERENCE', 'LIST', 'INVERSE'].includes(p.dataType) && (!p.range || !Object.hasOwn(types, p.range))) {
    throw new MetamodelError(`${where}: unknown range type ${p.range}`);
  }
  if (p.dataType === 'INVERSE' && !p.inverseOf) throw new MetamodelError(`${where}: INVERSE needs inverseOf`);
}
