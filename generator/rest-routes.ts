/**
 * The REST routes the metamodel decides, in one list that the route table
 * (emitters/routes.ts, which the runtime dispatches from) is made of and
 * that the OpenAPI paths name the same operations as
 * (test/generator/routes.spec.ts compares them): per type plural its list,
 * its objects by key and each one's history, per list of a type that list
 * below an object.
 */
import type { ListDef, Metamodel, TypeDef } from '../runtime/metamodel/model.ts';
import type { RestHandlerName, RestMethod, RestRoute } from '../runtime/rest/route-table.ts';

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const route = (method: RestMethod, path: string, operation: string, type: string, handler: RestHandlerName): RestRoute =>
  ({ method, path, operation, type, handler });

/** Whether objects can be created through a top-level list: a root list, or one of types placed by their owner reference or standing at the root. */
export const creatableAtTop = (model: Metamodel, t: TypeDef) =>
  model.rootLists[t.plural] !== undefined || t.concreteTypes.some((c) => model.types[c].owners.length || model.types[c].root);

function topLevelRoutes(model: Metamodel, t: TypeDef): RestRoute[] {
  const path = `/rest/{db}/${t.plural}`;
  const name = capitalized(t.plural);
  return [
    route('GET', path, `list${name}`, t.name, 'readList'),
    ...(creatableAtTop(model, t) ? [route('POST', path, `create${t.name}`, t.name, 'createInList')] : []),
    route('PUT', path, `replace${name}`, t.name, 'replaceList'),
    route('PATCH', path, `update${name}`, t.name, 'updateList'),
    route('DELETE', path, `delete${name}`, t.name, 'deleteList'),
  ];
}

function objectRoutes(t: TypeDef): RestRoute[] {
  const path = `/rest/{db}/${t.plural}/{key}`;
  return [
    route('GET', path, `get${t.name}`, t.name, 'readObject'),
    route('PUT', path, `replace${t.name}`, t.name, 'replaceObject'),
    route('PATCH', path, `update${t.name}`, t.name, 'updateObject'),
    route('DELETE', path, `delete${t.name}`, t.name, 'deleteObject'),
    // The metamodel reserves the list name `history` (runtime/metamodel/resolve.ts), so this path is no list's.
    route('GET', `${path}/history`, `get${t.name}History`, t.name, 'readHistory'),
  ];
}

function listRoutes(t: TypeDef, list: ListDef): RestRoute[] {
  const path = `/rest/{db}/${t.plural}/{key}/${list.name}`;
  const name = `${t.name}${capitalized(list.name)}`;
  const read = route('GET', path, `list${name}`, list.itemType, 'readList');
  // An inverse list is computed from references held by other objects: nothing to write there.
  if (list.inverseOf) return [read];
  return [
    read,
    route('POST', path, `createIn${name}`, list.itemType, 'createInList'),
    route('PUT', path, `replace${name}`, list.itemType, 'replaceList'),
    route('PATCH', path, `update${name}`, list.itemType, 'updateList'),
    route('DELETE', path, `delete${name}`, list.itemType, 'deleteList'),
  ];
}

/** Every REST route, sorted by path and method so that the emitted table is stable. */
export function restRoutes(model: Metamodel): RestRoute[] {
  const types = Object.values(model.types).filter((t) => t.plural).sort((a, b) => (a.name < b.name ? -1 : 1));
  const routes = types.flatMap((t) => [...topLevelRoutes(model, t), ...objectRoutes(t), ...t.lists.flatMap((l) => listRoutes(t, l))]);
  return routes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.method < b.method ? -1 : a.method > b.method ? 1 : 0));
}
