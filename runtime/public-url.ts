/**
 * SERVICE_PUBLIC_URL: the address clients reach the service at. Without it,
 * links (`_links`, `href`, `Location`, an error's `_links.self`) start with
 * the request's Host (or X-Forwarded-Host behind a trusted proxy), which any
 * client can set, and a cache or a proxy may hand such a link to others.
 * With it, Koa's request origin, host, protocol and href come from the
 * setting, so every link written anywhere starts there, and the OpenAPI
 * document names it in `servers`.
 */
import type Koa from 'koa';
import { parseDocument } from 'yaml';

/** The path and query of the request target, also when a client sent it in absolute form (`GET http://other/…`). */
function targetOf(originalUrl: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(originalUrl)) return originalUrl;
  try {
    const url = new URL(originalUrl);
    return url.pathname + url.search;
  } catch {
    return '/';
  }
}

export function usePublicUrl(app: Koa, publicUrl: string): void {
  const url = new URL(publicUrl);
  Object.defineProperties(app.request, {
    protocol: { get: () => url.protocol.slice(0, -1) },
    host: { get: () => url.host },
    hostname: { get: () => url.hostname },
    origin: { get: () => url.origin },
    href: {
      get(this: { originalUrl: string }) {
        return url.origin + targetOf(this.originalUrl);
      },
    },
  });
}

/** The OpenAPI document with the public address (and the context path) as its one server. */
export function withServer(openapi: { yaml: string; json: string }, server: string): { yaml: string; json: string } {
  const json = JSON.parse(openapi.json);
  json.servers = [{ url: server }];
  const yaml = parseDocument(openapi.yaml);
  yaml.set('servers', [{ url: server }]);
  return { yaml: yaml.toString(), json: JSON.stringify(json, null, 2) };
}
