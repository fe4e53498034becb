/**
 * The OpenAPI document's component schemas that the metamodel decides: a read
 * and a write schema per type, `Any<Type>` for polymorphic references, and a
 * schema per list; and the names by which paths refer to them.
 *
 * Paths are built in `paths.ts`; the document is put together in `../openapi.ts`.
 */
import type { Metamodel, PropertyDef, TypeDef } from '../../../runtime/metamodel/model.ts';
import { parentRelationNames } from '../../../runtime/metamodel/relations.ts';
import { readPropertySchema, writePropertySchema } from '../../property-kinds.ts';

export type Json = Record<string, unknown>;
export type Form = 'read' | 'write';

// ---------------------------------------------------------------- names

export const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** The indefinite article for a type name in summaries. */
export const a = (name: string) => (/^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`);
export const ref = (kind: 'schemas' | 'parameters' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });
export const schemaName = (type: string, form: Form) => (form === 'read' ? type : `${type}Write`);
export const addressable = (model: Metamodel) => Object.values(model.types).filter((t) => t.plural);

/** A list's schema name; shared by all lists of the same name and item type (every asset's `attributedTo`). */
export function listSchemaNames(model: Metamodel): Map<string, string> {
  const itemTypesByName = new Map<string, Set<string>>();
  for (const { name, itemType } of allLists(model)) {
    itemTypesByName.set(name, (itemTypesByName.get(name) ?? new Set()).add(itemType));
  }
  const names = new Map<string, string>();
  for (const [name, itemTypes] of itemTypesByName) {
    for (const itemType of itemTypes) {
      names.set(`${name} ${itemType}`, itemTypes.size === 1 ? `${capitalized(name)}List` : `${capitalized(name)}Of${itemType}List`);
    }
  }
  return names;
}

/** Every list a client can read: each top-level plural and each list below a type. */
function allLists(model: Metamodel): { name: string; itemType: string }[] {
  return [
    ...addressable(model).map((t) => ({ name: t.plural, itemType: t.name })),
    ...addressable(model).flatMap((t) => t.lists.map((l) => ({ name: l.name, itemType: l.itemType }))),
  ];
}

// ---------------------------------------------------------------- schemas

export function typeSchemas(model: Metamodel): Json {
  const schemas: Json = {};
  for (const t of Object.values(model.types)) {
    schemas[schemaName(t.name, 'read')] = readSchema(model, t);
    schemas[schemaName(t.name, 'write')] = writeSchema(t);
  }
  return schemas;
}

function readSchema(model: Metamodel, t: TypeDef): Json {
  const properties = t.properties.filter((p) => !p.writeOnly);
  return {
    type: 'object',
    ...(t.description ? { description: t.description } : {}),
    required: ['_links', '_type'],
    properties: {
      ...propertySchemas(t, properties, 'read'),
      _type: typeNameSchema(t),
      customProperties: ref('schemas', 'CustomProperties'),
      _links: linksSchema(model, t),
    },
  };
}

function writeSchema(t: TypeDef): Json {
  const properties = t.properties.filter((p) => !p.readOnly);
  return {
    type: 'object',
    description: `${capitalized(a(t.name))} as written with POST, PUT or PATCH. The service ignores \`_links\`, `
      + '`_embedded` and read-only properties, so an object read with GET may be sent back as it is, although this schema does not list them.',
    required: ['_type'],
    additionalProperties: false,
    properties: {
      ...propertySchemas(t, properties, 'write'),
      _type: typeNameSchema(t),
      customProperties: ref('schemas', 'CustomProperties'),
    },
  };
}

/** `_type` names the concrete type; an abstract type's schema admits each of its concrete types. */
function typeNameSchema(t: TypeDef): Json {
  const description = 'The object type.';
  if (!t.abstract) return { type: 'string', const: t.name, description };
  if (!t.concreteTypes.length) return { type: 'string', description };
  return { type: 'string', enum: t.concreteTypes, description };
}

function propertySchemas(t: TypeDef, properties: PropertyDef[], form: Form): Json {
  return Object.fromEntries(properties.map((p) => [p.name, propertySchema(t, p, form)]));
}

/**
 * The value's shape and limits are the validators' own (generator/property-kinds.ts):
 * in the write form an optional property may be null, as the validators accept.
 * In the read form, `parentId` is null for an object at the top level
 * (runtime/rest/writer.ts; found by test/contract/openapi.spec.ts).
 */
const NULL_WHEN_ABSENT = new Set(['parentId']);

function propertySchema(t: TypeDef, p: PropertyDef, form: Form): Json {
  const read = () => (NULL_WHEN_ABSENT.has(p.name) ? { anyOf: [readPropertySchema(p), { type: 'null' }] } : readPropertySchema(p));
  const description = propertyDescription(p, form);
  return {
    ...(form === 'write' ? writePropertySchema(t, p) : read()),
    ...(description ? { description } : {}),
    ...(p.default !== undefined ? { default: typedDefault(p) } : {}),
    ...(p.readOnly ? { readOnly: true } : {}),
    ...(p.writeOnly ? { writeOnly: true } : {}),
  };
}

/**
 * Mandatory properties are told in words, not in `required`: PATCH merges a
 * partial object, so a payload may rightly leave them out.
 */
function propertyDescription(p: PropertyDef, form: Form): string {
  return [
    p.description,
    p.dataType === 'REFERENCE' ? `Technical key of ${a(p.range!)}.` : undefined,
    p.dataType === 'DATETIME' && !/epoch/i.test(p.description ?? '') ? 'Epoch milliseconds.' : undefined,
    form === 'write' && p.required ? 'Mandatory: creating the object, or replacing it with PUT, without it is refused with 400.' : undefined,
    form === 'write' && p.owner ? 'Names the parent object.' : undefined,
  ].filter(Boolean).join(' ');
}

function typedDefault(p: PropertyDef): unknown {
  const value = p.dataType === 'INTEGER' || p.dataType === 'DECIMAL' ? Number(p.default)
    : p.dataType === 'BOOLEAN' ? p.default === 'true' : p.default;
  return p.many ? [value] : value;
}

/**
 * `_links`: `self`, `parent` and the same link under the relation that holds
 * the object, one link per reference property, and one per list while the
 * list holds something (decisions §7.3), as the HAL renderer writes them.
 * Only `self` is always there.
 */
function linksSchema(model: Metamodel, t: TypeDef): Json {
  const references = t.properties.filter((p) => p.dataType === 'REFERENCE' && !p.writeOnly);
  const link = ref('schemas', 'Link');
  const relations = parentRelationNames(model, t.name).filter((name) => !references.some((p) => p.name === name));
  return {
    type: 'object',
    required: ['self'],
    properties: {
      self: link,
      parent: { ...link, description: 'The parent object; absent for an object at the top level.' },
      ...Object.fromEntries(relations.map((name) => [name, { ...link, description: 'The parent object, named after the relation that holds this one.' }])),
      ...Object.fromEntries(references.map((p) => [p.name, p.many ? { type: 'array', items: link } : link])),
      ...Object.fromEntries(t.lists.map((l) => [l.name, { ...link, description: `The list ${l.name}; present only while it holds something.` }])),
    },
  };
}

/** Whether an object reached as this type may be of several concrete types. */
export const polymorphic = (t: TypeDef) => t.concreteTypes.length > 1 || (t.concreteTypes.length === 1 && t.concreteTypes[0] !== t.name);

/** The schema of one object of a type as sent or received: the type's own, or `Any<Type>` for several concrete types. */
export function objectSchema(model: Metamodel, typeName: string, form: Form): Json {
  const name = polymorphic(model.types[typeName]) ? `Any${typeName}` : typeName;
  return ref('schemas', schemaName(name, form));
}

/** `Any<Type>`: one of the concrete types, told apart by `_type`. */
export function polymorphicSchemas(model: Metamodel): Json {
  const schemas: Json = {};
  for (const t of Object.values(model.types).filter(polymorphic)) {
    for (const form of ['read', 'write'] as const) {
      const concrete = t.concreteTypes.map((c) => `#/components/schemas/${schemaName(c, form)}`);
      schemas[schemaName(`Any${t.name}`, form)] = {
        description: `Any ${t.name}: one of its concrete types, named by \`_type\`.`,
        oneOf: concrete.map(($ref) => ({ $ref })),
        discriminator: { propertyName: '_type', mapping: Object.fromEntries(t.concreteTypes.map((c, i) => [c, concrete[i]])) },
      };
    }
  }
  return schemas;
}

export function listSchemas(model: Metamodel): Json {
  const schemas: Json = {};
  const names = listSchemaNames(model);
  for (const { name, itemType } of allLists(model)) {
    schemas[names.get(`${name} ${itemType}`)!] = listSchema(model, name, itemType);
  }
  return schemas;
}

function listSchema(model: Metamodel, name: string, itemType: string): Json {
  return {
    type: 'object',
    description: `A list of ${itemType} objects as HAL JSON.`,
    required: ['_embedded', '_links', 'total'],
    properties: {
      total: { type: 'integer', minimum: 0, description: 'Number of objects in the list.' },
      _links: ref('schemas', 'ListLinks'),
      _embedded: {
        type: 'object',
        required: [name],
        properties: { [name]: { type: 'array', items: objectSchema(model, itemType, 'read') } },
      },
    },
  };
}

/** `<Type>History`: the versions of one object of a type, newest first (runtime/rest/history.ts). */
export function historySchemas(model: Metamodel): Json {
  return Object.fromEntries(addressable(model).map((t) => [`${t.name}History`, historySchema(model, t.name)]));
}

function historySchema(model: Metamodel, typeName: string): Json {
  const millis = (description: string) => ({ type: 'integer', minimum: 0, description });
  const entry = {
    type: 'object',
    required: ['version', 'operation', 'validFrom', 'validTo', 'changedBy', 'changes', 'object'],
    properties: {
      version: { type: 'integer', minimum: 1, description: 'The version (`_version`) this entry records.' },
      operation: { type: 'string', enum: ['create', 'update', 'delete'], description: 'The kind of change that made this version.' },
      validFrom: millis('When the version began, in epoch milliseconds.'),
      validTo: { anyOf: [millis('When the next version began.'), { type: 'null' }], description: 'When the version ended, in epoch milliseconds; null for the current version.' },
      changedBy: { type: ['string', 'null'], description: 'The login ID of the caller who made the change.' },
      changes: {
        type: 'array', items: { type: 'string' },
        description: 'The properties (by their REST names, e.g. `label`, `parentId`) whose values differ from the previous version; '
          + 'for a create, the properties it set; for a delete, none. Write-only properties are never named.',
      },
      object: { ...objectSchema(model, typeName, 'read'), description: 'The object as it read at this version (as `GET …?version=` reads it; write-only properties left out).' },
    },
  };
  return {
    type: 'object',
    description: `The versions of ${a(typeName)} as HAL JSON, newest first.`,
    required: ['_embedded', '_links', 'total'],
    properties: {
      total: { type: 'integer', minimum: 0, description: 'Number of versions.' },
      _links: ref('schemas', 'ListLinks'),
      _embedded: { type: 'object', required: ['history'], properties: { history: { type: 'array', items: entry } } },
    },
  };
}
