/**
 * The OpenAPI document's paths that the metamodel decides: one technical-key
 * path and one history path per type plural and one path per list of each
 * type, with the error responses each kind of call can answer with.
 *
 * Component schemas are built in `schemas.ts`; the document is put together in `../openapi.ts`.
 */
import type { ListDef, Metamodel, TypeDef } from '../../../runtime/metamodel/model.ts';
import { a, capitalized, addressable, listSchemaNames, objectSchema, ref, type Json } from './schemas.ts';
import { creatableAtTop } from '../../rest-routes.ts';

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

export function restPaths(model: Metamodel): Json {
  const paths: Json = {};
  for (const t of addressable(model)) {
    paths[`/rest/{db}/${t.plural}`] = topLevelPath(model, t);
    paths[`/rest/{db}/${t.plural}/{key}`] = objectPath(model, t);
    paths[`/rest/{db}/${t.plural}/{key}/history`] = historyPath(model, t);
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
  if (creatableAtTop(model, t)) item.post = createOperation(model, t);
  const writes = listWriteOperations(model, t, t.name, capitalized(t.plural), listSchema, {
    list: `all ${t.name} objects`,
    replace: `Replaces every listed ${t.name} as PUT on the object does (creating it if missing) and deletes every other ${t.name} of the caller's tenant.`,
    remove: `Deletes every ${t.name} of the caller's tenant, with what each one holds.`,
  });
  if (t.name === 'Tenant') writes.delete = { ...(writes.delete as Json), ...TENANT_LIST_DELETION };
  return { ...item, ...writes };
}

function createOperation(model: Metamodel, t: TypeDef): Json {
  const owners = [...new Set(t.concreteTypes.flatMap((c) => model.types[c].owners.map((o) => o.property)))].sort();
  const parent = owners.length
    ? `The new object's parent is the object named by ${owners.map((p) => `\`${p}\``).join(' or ')} (one of them; a parent of a type that cannot hold it, or a scheme of a kind that may not, is a 400).`
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

/** An object's versions (runtime/rest/history.ts); the metamodel reserves the list name `history`. */
function historyPath(model: Metamodel, t: TypeDef): Json {
  return {
    parameters: pathParameters(model, t),
    get: {
      operationId: `get${t.name}History`, tags: [t.name], summary: `Lists the versions of ${a(t.name)}`,
      description: `Every version of the ${t.name}, newest first: who changed it when, which properties changed, and the object as it read then. `
        + 'Readable by whoever may read the object, in the caller\'s tenant only. A deleted object\'s history stays readable by its technical key, '
        + 'its newest entry being the `delete`; a label names only an object that exists now.',
      parameters: parameters(PAGING_PARAMETERS),
      responses: { 200: jsonResponse('The versions.', ref('schemas', `${t.name}History`)), ...errorResponses(ERRORS_BY_CALL.read) },
    },
  };
}

/** Tenants are deleted by the runtime's own rules (runtime/rest/tenant-removal.ts). */
const TENANT_DELETION = {
  description: 'System administrators only. Deletes a tenant that holds nothing but its users, with them and their access keys, '
    + 'and the tenant\'s access rules, profiles and query jobs. The default tenant, and a tenant that holds other objects, answer 409.',
  responses: { 204: { description: 'The tenant was deleted.' }, ...errorResponses([...ERRORS_BY_CALL.deleteObject, 409].sort((x, y) => x - y)) },
};

/** Every tenant goes by the rules of deleting one: the default tenant is among them, so the whole request refuses. */
const TENANT_LIST_DELETION = {
  description: 'System administrators only. Each tenant goes by the rules of deleting one tenant, in one transaction: '
    + 'since the default tenant cannot be deleted, the request answers 409 and deletes nothing.',
  responses: { 204: { description: 'The tenants were deleted.' }, ...errorResponses([...ERRORS_BY_CALL.deleteList, 409].sort((x, y) => x - y)) },
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
  return list.inverseOf ? item : { ...item, ...listWriteOperations(model, t, list.itemType, name, listSchema, {
    list: `the ${list.name} of ${a(t.name)}`,
    replace: 'Replaces every listed object as PUT on the object does (creating it if missing) and deletes every existing object that is not listed.',
    remove: 'Deletes every object of the list.',
    create: `The new ${list.itemType}'s parent is the ${t.name} named in the path.`,
  }) };
}

function listDescription(t: TypeDef, list: ListDef): string {
  const what = list.inverseOf
    ? `Read-only: the ${list.itemType} objects whose \`${list.inverseOf}\` names this ${t.name}.`
    : `The ${t.name}'s direct children in its list \`${list.name}\`.`;
  return list.description ? `${list.description} ${what}` : what;
}

interface ListTexts {
  /** What the list is, in a summary: `the concepts of a Scheme`, `all Scheme objects`. */
  list: string;
  replace: string;
  remove: string;
  /** The description of POST, for a list that takes new objects through this operation. */
  create?: string;
}

function listWriteOperations(model: Metamodel, t: TypeDef, itemType: string, name: string, listSchema: Json, texts: ListTexts): Json {
  const item = objectSchema(model, itemType, 'write');
  const replaced = { 200: jsonResponse('The resulting list.', listSchema), ...errorResponses(ERRORS_BY_CALL.write) };
  const common = { tags: [t.name], requestBody: jsonBody(arrayOf(item)), responses: replaced };
  return {
    ...(texts.create ? {
      post: {
        operationId: `createIn${name}`, tags: [t.name], summary: `Creates an object in ${texts.list}`,
        description: texts.create,
        requestBody: jsonBody(item),
        responses: {
          201: jsonResponse('The created object.', objectSchema(model, itemType, 'read'), ['ETag', 'Location']),
          ...errorResponses(ERRORS_BY_CALL.write),
        },
      },
    } : {}),
    put: { ...common, operationId: `replace${name}`, summary: `Replaces ${texts.list}`, description: texts.replace },
    patch: {
      ...common, operationId: `update${name}`, summary: `Updates ${texts.list}`,
      description: 'Updates every listed object as PATCH on the object does (creating it if missing). Existing objects that are not listed are deleted only with `operation=REPLACE`.',
      parameters: parameters(['Operation']),
    },
    delete: {
      operationId: `delete${name}`, tags: [t.name], summary: `Deletes ${texts.list}`,
      description: texts.remove,
      responses: { 204: { description: 'The objects were deleted.' }, ...errorResponses(ERRORS_BY_CALL.deleteList) },
    },
  };
}
