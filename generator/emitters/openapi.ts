/**
 * Emits the OpenAPI 3.1 document served at `/specification/openapi.{yaml,json}`.
 *
 * The fixed part (security schemes, error payload, parameters, health and
 * administration paths) is text in `templates/openapi/base.yaml`; this module
 * adds what the metamodel decides: one technical-key path per type plural,
 * one path per list of each type, a read and a write schema per type and a
 * schema per list.
 */
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import type { ListDef, Metamodel, PropertyDef, TypeDef } from '../../runtime/metamodel/model.ts';
import { header, stableJson, type Emitter } from '../emitter.ts';

type Json = Record<string, unknown>;
type Form = 'read' | 'write';

export const openapiEmitter: Emitter = {
  name: 'openapi',
  emit(model) {
    const document = conventionalOrder(JSON.parse(stableJson(openapiDocument(model))));
    return [
      { path: 'openapi.gen.yaml', content: `${header('openapi', '#')}\n${stringify(document, { lineWidth: 0 })}` },
      { path: 'openapi.gen.json', content: `${JSON.stringify(document, null, 2)}\n` },
    ];
  },
};

/** Keys are sorted everywhere (stable output) except at the top, where readers expect `openapi` first. */
function conventionalOrder(document: Json): Json {
  const order = ['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'components'];
  const rest = Object.keys(document).filter((k) => !order.includes(k));
  return Object.fromEntries([...order, ...rest].filter((k) => k in document).map((k) => [k, document[k]]));
}

export function openapiDocument(model: Metamodel): Json {
  const document = parse(readTemplate('base.yaml')) as Json & { info: Json; paths: Json; components: { schemas: Json } };
  document.info.description = readTemplate('description.md');
  // JSON cannot carry the header comment, so the document says it itself.
  document.info['x-generated'] = header('openapi', '').trim();
  document.paths = merged('path', document.paths, restPaths(model));
  document.components.schemas = merged('schema', document.components.schemas, typeSchemas(model), polymorphicSchemas(model), listSchemas(model));
  document.tags = tags(model, document.tags as { name: string }[]);
  assertUniqueOperationIds(document.paths as Record<string, Json>);
  return document;
}

function readTemplate(name: string): string {
  return readFileSync(new URL(`../../templates/openapi/${name}`, import.meta.url), 'utf8');
}

/** Merges name→value maps, refusing a name twice: a type named like a fixed schema must not replace it silently. */
function merged(what: string, ...maps: Json[]): Json {
  const result: Json = {};
  for (const map of maps) {
    for (const [name, value] of Object.entries(map)) {
      if (name in result) throw new Error(`OpenAPI: ${what} ${name} is generated twice`);
      result[name] = value;
    }
  }
  return result;
}

function assertUniqueOperationIds(paths: Record<string, Json>) {
  const ids = Object.values(paths).flatMap((item) => Object.values(item).map((o) => (o as Json).operationId).filter(Boolean));
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new Error(`OpenAPI: operationId ${twice} is generated twice`);
}

// ---------------------------------------------------------------- names

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** The indefinite article for a type name in summaries. */
const a = (name: string) => (/^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`);
const ref = (kind: 'schemas' | 'parameters' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const schemaName = (type: string, form: Form) => (form === 'read' ? type : `${type}Write`);
const addressable = (model: Metamodel) => Object.values(model.types).filter((t) => t.plural);

/** A list's schema name; shared by all lists of the same name and item type (every asset's `attributedTo`). */
function listSchemaNames(model: Metamodel): Map<string, string> {
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

const STRING = { type: 'string' };
const UUID = { type: 'string', format: 'uuid' };
const VALUE_SCHEMAS: Record<PropertyDef['dataType'], Json> = {
  STRING, TEXT: STRING, ENUMERATION: STRING, UUID, REFERENCE: UUID, DATETIME: { type: 'integer', format: 'int64' },
  INTEGER: { type: 'integer' }, DECIMAL: { type: 'number' }, BOOLEAN: { type: 'boolean' },
};

function typeSchemas(model: Metamodel): Json {
  const schemas: Json = {};
  for (const t of Object.values(model.types)) {
    schemas[schemaName(t.name, 'read')] = readSchema(t);
    schemas[schemaName(t.name, 'write')] = writeSchema(t);
  }
  return schemas;
}

function readSchema(t: TypeDef): Json {
  const properties = t.properties.filter((p) => !p.writeOnly);
  return {
    type: 'object',
    ...(t.description ? { description: t.description } : {}),
    required: ['_links', '_type'],
    properties: {
      ...propertySchemas(properties, 'read'),
      _type: typeNameSchema(t),
      customProperties: ref('schemas', 'CustomProperties'),
      _links: linksSchema(t),
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
      ...propertySchemas(properties, 'write'),
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

function propertySchemas(properties: PropertyDef[], form: Form): Json {
  return Object.fromEntries(properties.map((p) => [p.name, propertySchema(p, form)]));
}

function propertySchema(p: PropertyDef, form: Form): Json {
  const value = p.values ? { ...VALUE_SCHEMAS[p.dataType], enum: p.values } : VALUE_SCHEMAS[p.dataType];
  const description = propertyDescription(p, form);
  return {
    ...(p.many ? { type: 'array', items: value } : value),
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

/** `_links`: `self`, `parent`, then one link per reference property and per list, as the HAL renderer writes them. */
function linksSchema(t: TypeDef): Json {
  const references = t.properties.filter((p) => p.dataType === 'REFERENCE' && !p.writeOnly);
  const link = ref('schemas', 'Link');
  return {
    type: 'object',
    required: ['self'],
    properties: {
      self: link,
      parent: { ...link, description: 'The parent object; absent for an object at the top level.' },
      ...Object.fromEntries(references.map((p) => [p.name, p.many ? { type: 'array', items: link } : link])),
      ...Object.fromEntries(t.lists.map((l) => [l.name, link])),
    },
  };
}

/** Whether an object reached as this type may be of several concrete types. */
const polymorphic = (t: TypeDef) => t.concreteTypes.length > 1 || (t.concreteTypes.length === 1 && t.concreteTypes[0] !== t.name);

/** The schema of one object of a type as sent or received: the type's own, or `Any<Type>` for several concrete types. */
function objectSchema(model: Metamodel, typeName: string, form: Form): Json {
  const name = polymorphic(model.types[typeName]) ? `Any${typeName}` : typeName;
  return ref('schemas', schemaName(name, form));
}

/** `Any<Type>`: one of the concrete types, told apart by `_type`. */
function polymorphicSchemas(model: Metamodel): Json {
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

function listSchemas(model: Metamodel): Json {
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

// ---------------------------------------------------------------- responses

const ERROR_RESPONSES: Record<number, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict',
  412: 'PreconditionFailed', 413: 'PayloadTooLarge', 415: 'UnsupportedMediaType', 429: 'TooManyRequests',
  503: 'ServiceUnavailable',
};

/** Which errors each kind of call can answer with. */
const ERRORS_BY_CALL = {
  read: [400, 401, 403, 404, 429, 503],
  write: [400, 401, 403, 404, 409, 413, 415, 429, 503],
  writeObject: [400, 401, 403, 404, 409, 412, 413, 415, 429, 503],
  deleteObject: [401, 403, 404, 412, 429, 503],
  deleteList: [401, 403, 404, 429, 503],
};

function errorResponses(codes: number[]): Json {
  return Object.fromEntries(codes.map((code) => [String(code), ref('responses', ERROR_RESPONSES[code])]));
}

function jsonResponse(description: string, schema: Json, headers: string[] = []): Json {
  return {
    description,
    ...(headers.length ? { headers: Object.fromEntries(headers.map((h) => [h, ref('headers', h)])) } : {}),
    content: { 'application/json': { schema } },
  };
}

function jsonBody(schema: Json): Json {
  return { required: true, content: { 'application/json': { schema } } };
}

const arrayOf = (schema: Json) => ({ type: 'array', items: schema });

// ---------------------------------------------------------------- paths

const READ_PARAMETERS = ['Version', 'AcceptVersion'];
const PAGING_PARAMETERS = ['Limit', 'Cursor'];
const parameters = (names: string[]) => names.map((n) => ref('parameters', n));

function restPaths(model: Metamodel): Json {
  const paths: Json = {};
  for (const t of addressable(model)) {
    paths[`/rest/{db}/${t.plural}`] = topLevelPath(model, t);
    paths[`/rest/{db}/${t.plural}/{key}`] = objectPath(model, t);
    for (const list of t.lists) paths[`/rest/{db}/${t.plural}/{key}/${list.name}`] = listPath(model, t, list);
  }
  return paths;
}

/** Parameters every metadata path takes; `key` is a label as well where the type stands at the root. */
function pathParameters(model: Metamodel, t?: TypeDef): Json[] {
  const key = t ? [model.rootLists[t.plural] ? 'RootObjectKey' : 'ObjectKey'] : [];
  return parameters(['Database', ...key, 'AcceptLanguage', 'ServiceTenant', 'ServiceAccessKey']);
}

function topLevelPath(model: Metamodel, t: TypeDef): Json {
  const listSchema = ref('schemas', listSchemaNames(model).get(`${t.plural} ${t.name}`)!);
  const item: Json = {
    parameters: pathParameters(model),
    get: {
      operationId: `list${capitalized(t.plural)}`,
      tags: [t.name],
      summary: `Lists all ${t.name} objects`,
      description: `All objects of type ${t.name} and its subtypes in the caller's tenant.`,
      parameters: parameters([...PAGING_PARAMETERS, ...READ_PARAMETERS]),
      responses: { 200: jsonResponse('The list.', listSchema), ...errorResponses(ERRORS_BY_CALL.read) },
    },
  };
  if (model.rootLists[t.plural] || t.ownerProperty) item.post = createOperation(model, t);
  return item;
}

function createOperation(model: Metamodel, t: TypeDef): Json {
  const parent = t.ownerProperty
    ? `The new object's parent is the object named by \`${t.ownerProperty}\`.`
    : 'The new object stands at the top level.';
  return {
    operationId: `create${t.name}`,
    tags: [t.name],
    summary: `Creates ${a(t.name)}`,
    description: parent,
    requestBody: jsonBody(objectSchema(model, t.name, 'write')),
    responses: {
      201: jsonResponse('The created object.', objectSchema(model, t.name, 'read'), ['ETag', 'Location']),
      ...errorResponses(ERRORS_BY_CALL.write),
    },
  };
}

function objectPath(model: Metamodel, t: TypeDef): Json {
  const read = objectSchema(model, t.name, 'read');
  const written = {
    200: jsonResponse('The object existed and now reads as returned.', read, ['ETag']),
    201: jsonResponse('The object did not exist and was created.', read, ['ETag', 'Location']),
    ...errorResponses(ERRORS_BY_CALL.writeObject),
  };
  const body = jsonBody(objectSchema(model, t.name, 'write'));
  const write = (verb: string, summary: string, description: string) => ({
    operationId: `${verb}${t.name}`, tags: [t.name], summary, description,
    parameters: parameters(['IfMatch']), requestBody: body, responses: written,
  });
  return {
    parameters: pathParameters(model, t),
    get: {
      operationId: `get${t.name}`, tags: [t.name], summary: `Reads ${a(t.name)}`,
      parameters: parameters(READ_PARAMETERS),
      responses: { 200: jsonResponse('The object.', read, ['ETag']), ...errorResponses(ERRORS_BY_CALL.read) },
    },
    put: write('replace', `Replaces ${a(t.name)}`, 'Sets the given properties and removes all others; creates the object if it does not exist.'),
    patch: write('update', `Updates ${a(t.name)}`, 'Sets the given properties and keeps all others; creates the object if it does not exist.'),
    delete: {
      operationId: `delete${t.name}`, tags: [t.name], summary: `Deletes ${a(t.name)}`,
      parameters: parameters(['IfMatch']),
      responses: { 204: { description: 'The object was deleted.' }, ...errorResponses(ERRORS_BY_CALL.deleteObject) },
      ...(t.name === 'Tenant' ? TENANT_DELETION : {}),
    },
  };
}

/** Tenants are deleted by the runtime's own rules (runtime/rest/tenant-removal.ts). */
const TENANT_DELETION = {
  description: 'System administrators only. Deletes a tenant that holds nothing but its users, with them and their access keys, '
    + 'and the tenant\'s access rules, profiles and query jobs. The default tenant, and a tenant that holds other objects, answer 409.',
  responses: { 204: { description: 'The tenant was deleted.' }, ...errorResponses([...ERRORS_BY_CALL.deleteObject, 409].sort((x, y) => x - y)) },
};

function listPath(model: Metamodel, t: TypeDef, list: ListDef): Json {
  const name = `${t.name}${capitalized(list.name)}`;
  const listSchema = ref('schemas', listSchemaNames(model).get(`${list.name} ${list.itemType}`)!);
  const item: Json = {
    parameters: pathParameters(model, t),
    get: {
      operationId: `list${name}`, tags: [t.name], summary: `Lists the ${list.name} of ${a(t.name)}`,
      description: listDescription(t, list),
      parameters: parameters([...PAGING_PARAMETERS, ...READ_PARAMETERS]),
      responses: { 200: jsonResponse('The list.', listSchema), ...errorResponses(ERRORS_BY_CALL.read) },
    },
  };
  // An inverse list is computed from references held by other objects: nothing to write here.
  return list.inverseOf ? item : { ...item, ...listWriteOperations(model, t, list, name, listSchema) };
}

function listDescription(t: TypeDef, list: ListDef): string {
  const what = list.inverseOf
    ? `Read-only: the ${list.itemType} objects whose \`${list.inverseOf}\` names this ${t.name}.`
    : `The ${t.name}'s direct children in its list \`${list.name}\`.`;
  return list.description ? `${list.description} ${what}` : what;
}

function listWriteOperations(model: Metamodel, t: TypeDef, list: ListDef, name: string, listSchema: Json): Json {
  const item = objectSchema(model, list.itemType, 'write');
  const replaced = { 200: jsonResponse('The resulting list.', listSchema), ...errorResponses(ERRORS_BY_CALL.write) };
  const common = { tags: [t.name], requestBody: jsonBody(arrayOf(item)), responses: replaced };
  return {
    post: {
      operationId: `createIn${name}`, tags: [t.name], summary: `Creates an object in the ${list.name} of ${a(t.name)}`,
      description: `The new ${list.itemType}'s parent is the ${t.name} named in the path.`,
      requestBody: jsonBody(item),
      responses: {
        201: jsonResponse('The created object.', objectSchema(model, list.itemType, 'read'), ['ETag', 'Location']),
        ...errorResponses(ERRORS_BY_CALL.write),
      },
    },
    put: {
      ...common, operationId: `replace${name}`, summary: `Replaces the ${list.name} of ${a(t.name)}`,
      description: 'Replaces every listed object as PUT on the object does (creating it if missing) and deletes every existing object that is not listed.',
    },
    patch: {
      ...common, operationId: `update${name}`, summary: `Updates the ${list.name} of ${a(t.name)}`,
      description: 'Updates every listed object as PATCH on the object does (creating it if missing). Existing objects that are not listed are deleted only with `operation=REPLACE`.',
      parameters: parameters(['Operation']),
    },
    delete: {
      operationId: `delete${name}`, tags: [t.name], summary: `Deletes the ${list.name} of ${a(t.name)}`,
      description: 'Deletes every object of the list.',
      responses: { 204: { description: 'The objects were deleted.' }, ...errorResponses(ERRORS_BY_CALL.deleteList) },
    },
  };
}

// ---------------------------------------------------------------- tags

/** The fixed tags of the template and one per addressable type, by name. */
function tags(model: Metamodel, fixed: { name: string }[]): { name: string }[] {
  const types = addressable(model).map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}) }));
  return [...fixed, ...types].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}
