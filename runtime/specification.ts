/**
 * `/specification/`: the OpenAPI document the service serves (YAML and JSON,
 * with `servers` naming where the service is reached: SERVICE_PUBLIC_URL and
 * the context path, or the context path alone) and a page to read it, Swagger
 * UI from the swagger-ui-dist package. Everything the page loads comes from
 * this service: its script and style from node_modules, its start script
 * from here (no inline script, so the Content-Security-Policy can forbid
 * them), the document from next door; the online validator Swagger UI would
 * ask is switched off. Public, like the description of any published
 * interface: it holds no metadata.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Context } from 'koa';
import { stringify } from 'yaml';
import { withServer } from './public-url.ts';
import { withFragments, type OpenApiFragment } from './openapi-fragment.ts';
import { PluginError, type PluginManifest } from './plugins.ts';

export const SPECIFICATION = '/specification/';

interface Asset {
  type: string;
  body: string | Buffer;
  /** Only the page itself needs a policy; assets of a page are governed by the page's. */
  page?: boolean;
}

/** The page may load only from this service and run only its own files; nothing may frame it. */
const PAGE_POLICY = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "connect-src 'self'", "font-src 'self' data:", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Metadata Management Service: interface</title>
<link rel="stylesheet" href="swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="swagger-ui-bundle.js"></script>
<script src="start.js"></script>
</body>
</html>
`;

/** Relative to the page, so that it works below any context path and behind any proxy. */
const START = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  validatorUrl: null,
  deepLinking: true,
});
`;

function swaggerUiFile(name: string): Buffer {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return readFileSync(join(dir, name));
}

/**
 * The generated document, with the calls of the plugins from outside the
 * repository (SERVICE_PLUGINS) that are on added: the generator knows only
 * the built-in ones. A plugin that defines a path, component or operationId
 * the document has already stops the start.
 */
export function servedOpenapi(openapi: { yaml: string; json: string }, outside: PluginManifest[]): { yaml: string; json: string } {
  const fragments = outside.filter((m) => m.openapi).map((m) => ({ plugin: m.name, fragment: m.openapi as OpenApiFragment }));
  if (!fragments.length) return openapi;
  let document: Record<string, unknown>;
  try {
    document = withFragments(JSON.parse(openapi.json) as Record<string, unknown>, fragments);
  } catch (err) {
    throw new PluginError('PLUGIN_INVALID', err instanceof Error ? err.message : String(err));
  }
  return { yaml: stringify(document, { lineWidth: 0 }), json: `${JSON.stringify(document, null, 2)}\n` };
}

/**
 * The handler of every address below `/specification/`, or undefined when
 * the path is not one of them. Built once: the files are read at start.
 */
export function specificationAssets(openapi: { yaml: string; json: string }, server: string): (path: string) => Asset | undefined {
  const described = withServer(openapi, server);
  const assets = new Map<string, Asset>([
    [`${SPECIFICATION}openapi.yaml`, { type: 'application/yaml', body: described.yaml }],
    [`${SPECIFICATION}openapi.json`, { type: 'application/json', body: described.json }],
    [SPECIFICATION, { type: 'text/html; charset=utf-8', body: PAGE, page: true }],
    [`${SPECIFICATION}start.js`, { type: 'text/javascript; charset=utf-8', body: START }],
    [`${SPECIFICATION}swagger-ui-bundle.js`, { type: 'text/javascript; charset=utf-8', body: swaggerUiFile('swagger-ui-bundle.js') }],
    [`${SPECIFICATION}swagger-ui.css`, { type: 'text/css; charset=utf-8', body: swaggerUiFile('swagger-ui.css') }],
  ]);
  return (path) => assets.get(path);
}

/** Answers the asset. */
export function sendAsset(ctx: Context, asset: Asset) {
  ctx.type = asset.type;
  if (asset.page) ctx.set('Content-Security-Policy', PAGE_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = asset.body;
}
