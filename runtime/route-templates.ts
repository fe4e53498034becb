/**
 * The route template of a request, for the request figures
 * (runtime/metrics.ts): its address with every part a caller chooses
 * replaced by a name, e.g. `/rest/{db}/schemes/{key}/classifiers` or
 * `/api/{db}/jobs/{id}/statistics`. Database names, labels and technical
 * keys never become label values: each would be a series of its own, and
 * the figures would tell who keeps what. An address the service does not
 * serve is `unmatched`, also before authentication (a caller who is turned
 * away must not be able to make up series either).
 */
import type Router from '@koa/router';
import type { Metamodel } from './metamodel/model.ts';

export const UNMATCHED = 'unmatched';

/** Addresses of the service itself, below the context path. */
const FIXED = new Set(['/health', '/api/admin/databases',
  ...['', 'openapi.yaml', 'openapi.json', 'start.js', 'swagger-ui-bundle.js', 'swagger-ui.css'].map((name) => `/specification/${name}`)]);

export interface RouteSources {
  contextPath: string;
  /** Names that may stand where a REST path names a list: the metamodel's and the REST extensions' (e.g. accessKeys). */
  listNames: ReadonlySet<string>;
  /** Routers of the plugins (the one of /api/<db> first). */
  routers: Router[];
}

/** Every list name of the metamodel: top-level plurals and the lists below each type. */
export function metamodelListNames(model: Metamodel): string[] {
  return [...Object.keys(model.plurals), ...Object.values(model.types).flatMap((t) => t.lists.map((l) => l.name))];
}

export function routeTemplate(method: string, rawPath: string, sources: RouteSources): string {
  const { contextPath } = sources;
  if (contextPath && rawPath !== contextPath && !rawPath.startsWith(`${contextPath}/`)) return UNMATCHED;
  const path = rawPath.slice(contextPath.length) || '/';
  if (FIXED.has(path)) return path;
  if (/^\/api\/admin\/databases\/[^/]+\/?$/.test(path)) return '/api/admin/databases/{db}';
  if (path.startsWith('/rest/')) return restTemplate(path, sources.listNames);
  for (const router of sources.routers) {
    const layer = router.match(path, method).pathAndMethod.find((l) => l.methods.length && typeof l.path === 'string');
    if (layer) return (layer.path as string).replace(/:(\w+)/g, '{$1}');
  }
  return UNMATCHED;
}

/** Below /rest/<db>/, segments alternate list names and keys (runtime/rest/paths.ts). */
function restTemplate(path: string, listNames: ReadonlySet<string>): string {
  const segments = path.slice('/rest/'.length).split('/');
  if (segments.length < 2 || segments.some((s) => s === '')) return UNMATCHED;
  const parts = ['/rest/{db}'];
  for (let i = 1; i < segments.length; i++) {
    if (i % 2 === 0) parts.push('{key}');
    else if (listNames.has(segments[i])) parts.push(segments[i]);
    else return UNMATCHED;
  }
  return parts.join('/');
}
