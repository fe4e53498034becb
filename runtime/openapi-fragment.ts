/**
 * A plugin's part of the OpenAPI document (decisions §10: the document
 * describes every public call, the plugins' included). Each plugin that
 * serves calls keeps its paths in `plugins/<name>/openapi.ts`, next to the
 * code that answers them, and the generator merges every such fragment into
 * `generated/openapi.gen.{yaml,json}`; a name defined twice stops it.
 *
 * Schemas a plugin already checks bodies with (its ajv schemas) are handed in
 * as they are, so the document and the check cannot drift apart. Fragments
 * refer to the fixed components of `templates/openapi/base.yaml` (error
 * responses, `Database`, `AcceptLanguage`, …) by `$ref`.
 */
type Json = Record<string, unknown>;

export interface OpenApiFragment {
  /** Paths below the context path, e.g. `/api/{db}/session`. */
  paths: Record<string, Json>;
  components?: { schemas?: Json; parameters?: Json; responses?: Json; headers?: Json };
  tags?: { name: string; description?: string }[];
}

/** `$ref` to a component of the document. */
export const ref = (kind: 'schemas' | 'parameters' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const ERROR_RESPONSES: Record<number, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict',
  412: 'PreconditionFailed', 413: 'PayloadTooLarge', 415: 'UnsupportedMediaType', 429: 'TooManyRequests',
  503: 'ServiceUnavailable',
};

/** The fixed error responses, by status, in the specification's error format. */
export function errors(...codes: number[]): Json {
  return Object.fromEntries(codes.map((code) => [String(code), ref('responses', ERROR_RESPONSES[code])]));
}

/** A JSON answer. */
export function json(description: string, schema: unknown, headers: string[] = []): Json {
  return {
    description,
    ...(headers.length ? { headers: Object.fromEntries(headers.map((h) => [h, ref('headers', h)])) } : {}),
    content: { 'application/json': { schema } },
  };
}

/** A JSON request body. */
export function jsonBody(schema: unknown, required = true): Json {
  return { required, content: { 'application/json': { schema } } };
}

/** Parameters of every call below `/api/{db}` and `/rest/{db}`: the database, the language of messages, the tenant and access key. */
export const DATABASE_PARAMETERS = ['Database', 'AcceptLanguage', 'ServiceTenant', 'ServiceAccessKey'].map((n) => ref('parameters', n));

/** A path parameter. */
export function pathParameter(name: string, description: string, schema: Json = { type: 'string', minLength: 1 }): Json {
  return { name, in: 'path', required: true, description, schema };
}

/** A query parameter. */
export function queryParameter(name: string, description: string, schema: Json): Json {
  return { name, in: 'query', description, schema };
}

/**
 * The document with the plugins' fragments added: their paths, components
 * and tags. A name defined twice (a path, a component, a tag, an
 * operationId) is refused, naming the plugin: one plugin must not replace
 * another's call, or the core's, silently. The generator adds the built-in
 * plugins' fragments; the service adds those of plugins loaded from outside
 * the repository (SERVICE_PLUGINS) to the document it serves.
 */
export function withFragments<D extends Json>(document: D, fragments: { plugin: string; fragment: OpenApiFragment }[]): D {
  const paths = { ...(document.paths as Json) };
  const components = { ...(document.components as Record<string, Json> | undefined) };
  const tags = [...((document.tags as { name: string }[] | undefined) ?? [])];
  const operationIds = new Set(operationIdsOf(paths));
  const add = (plugin: string, what: string, into: Json, from: Json | undefined) => {
    for (const [name, value] of Object.entries(from ?? {})) {
      if (name in into) throw new Error(`OpenAPI: plugin ${plugin} defines ${what} ${name}, which is defined already`);
      into[name] = value;
    }
  };
  for (const { plugin, fragment } of fragments) {
    if (!fragment || typeof fragment.paths !== 'object') throw new Error(`OpenAPI: plugin ${plugin} declares a fragment without paths`);
    for (const id of operationIdsOf(fragment.paths)) {
      if (operationIds.has(id)) throw new Error(`OpenAPI: plugin ${plugin} defines operationId ${id}, which is defined already`);
      operationIds.add(id);
    }
    add(plugin, 'path', paths, fragment.paths);
    for (const kind of ['schemas', 'parameters', 'responses', 'headers'] as const) {
      components[kind] = { ...components[kind] };
      add(plugin, kind.slice(0, -1), components[kind], fragment.components?.[kind]);
    }
    for (const tag of fragment.tags ?? []) {
      if (tags.some((t) => t.name === tag.name)) throw new Error(`OpenAPI: plugin ${plugin} defines tag ${tag.name}, which is defined already`);
      tags.push(tag);
    }
  }
  return { ...document, paths, components, tags };
}

function operationIdsOf(paths: Json): string[] {
  return Object.values(paths).flatMap((item) => Object.values(item as Json))
    .map((operation) => (operation as Json | undefined)?.operationId).filter((id): id is string => typeof id === 'string');
}
