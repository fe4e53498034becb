/**
 * Emits the OpenAPI 3.1 document served at `/specification/openapi.{yaml,json}`.
 *
 * The fixed part (security schemes, error payload, parameters, health and
 * administration paths) is text in `templates/openapi/base.yaml`; this module
 * adds what the metamodel decides: paths (`openapi/paths.ts`) and component
 * schemas (`openapi/schemas.ts`); and the plugins' calls, each plugin's
 * `openapi.ts` fragment (`openapi/plugins.ts`). This module puts them together.
 */
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import type { Metamodel } from '../../runtime/metamodel/model.ts';
import { header, stableJson, type Emitter } from '../emitter.ts';
import { restPaths } from './openapi/paths.ts';
import { pluginFragments } from './openapi/plugins.ts';
import { withFragments } from '../../runtime/openapi-fragment.ts';
import { addressable, historySchemas, listSchemas, polymorphicSchemas, typeSchemas, type Json } from './openapi/schemas.ts';

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
  document.components.schemas = merged('schema', document.components.schemas, typeSchemas(model), polymorphicSchemas(model), listSchemas(model), historySchemas(model));
  const withPlugins = withFragments(document, pluginFragments);
  withPlugins.tags = tags(model, withPlugins.tags as { name: string }[]);
  assertUniqueOperationIds(withPlugins.paths as Record<string, Json>);
  return withPlugins;
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

// ---------------------------------------------------------------- tags

/** The fixed tags of the template, the plugins' and one per addressable type, by name. */
function tags(model: Metamodel, fixed: { name: string }[]): { name: string }[] {
  const types = addressable(model).map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}) }));
  const all = [...fixed, ...types];
  const twice = all.find((t, i) => all.findIndex((u) => u.name === t.name) !== i);
  if (twice) throw new Error(`OpenAPI: tag ${twice.name} is generated twice`);
  return all.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}
