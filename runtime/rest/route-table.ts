/**
 * The REST interface's route table: every method and path template of
 * `/rest/{db}/…` with its operation and the generic handler that serves it,
 * as the generator emits it into generated/routes.gen.ts from the metamodel
 * (generator/rest-routes.ts; the OpenAPI document names the same operations).
 *
 * Paths below a list may go on through business keys to any depth
 * (`/rest/{db}/schemes/{key}/classifiers/{key}/attributes`); such a path is
 * served by the route of its last step, found once the path is resolved:
 * the list of the owner's type (`/rest/{db}/classifiers/{key}/attributes`)
 * or the object's type (`/rest/{db}/businessAttributes/{key}`).
 */
import { createError } from '../errors.ts';
import type { Metamodel } from '../metamodel/model.ts';
import { placeItemType, placeName, type Target } from './paths.ts';

/** The generic handlers of runtime/rest/handlers.ts a route may name. */
export type RestHandlerName =
  | 'readList' | 'createInList' | 'replaceList' | 'updateList' | 'deleteList'
  | 'readObject' | 'replaceObject' | 'updateObject' | 'deleteObject'
  | 'readHistory';

export type RestMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RestRoute {
  method: RestMethod;
  /** OpenAPI path template, e.g. `/rest/{db}/schemes/{key}/classifiers`. */
  path: string;
  /** The operationId of the OpenAPI document. */
  operation: string;
  /** The type of the objects the route reads or writes (a list's item type). */
  type: string;
  handler: RestHandlerName;
}

export class RouteTable {
  private readonly byKey = new Map<string, RestRoute>();
  private readonly allowed = new Map<string, string>();

  constructor(routes: readonly RestRoute[]) {
    const methods = new Map<string, string[]>();
    for (const r of routes) {
      this.byKey.set(`${r.method} ${r.path}`, r);
      methods.set(r.path, [...(methods.get(r.path) ?? []), r.method]);
    }
    for (const [path, list] of methods) {
      // HEAD is served wherever GET is.
      const all = list.includes('GET') ? [...list, 'HEAD'] : list;
      this.allowed.set(path, ORDER.filter((m) => all.includes(m)).join(', '));
    }
  }

  /** The route of a method on a path template: 405 with `Allow` when the path has others, 404 when it has none. */
  find(method: string, path: string): RestRoute {
    const route = this.byKey.get(`${method === 'HEAD' ? 'GET' : method} ${path}`);
    if (route) return route;
    const allow = this.allowed.get(path);
    if (allow) throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: allow });
    throw createError('NOT_FOUND');
  }
}

const ORDER = ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'];

const pluralOf = (model: Metamodel, typeName: string) => {
  const t = model.types[typeName];
  // An abstract item type may have no plural of its own; its concrete types' object routes are all alike.
  return t.plural || model.types[t.concreteTypes[0]]?.plural || '';
};

/** The path template of the route that serves a resolved target: the route of its last step. */
export function routePathOf(model: Metamodel, target: Target): string {
  if (target.kind === 'object') return `/rest/{db}/${model.types[target.object.type].plural}/{key}`;
  if (target.kind === 'missing') return `/rest/{db}/${pluralOf(model, placeItemType(target.place))}/{key}`;
  const { place } = target;
  if (place.kind !== 'children') return `/rest/{db}/${placeName(place)}`;
  return `/rest/{db}/${model.types[place.owner.type].plural}/{key}/${place.list.name}`;
}
