/**
 * Emits `routes.gen.ts`, the route table of the REST interface (every
 * method and path template with its operation, type and handler; the
 * runtime dispatches from it, runtime/rest/route-table.ts), and
 * `metamodel.gen.ts`, the resolved metamodel the generic handlers read
 * (plurals, supertype aliases, lists and their item types, owners).
 */
import type { Emitter } from '../emitter.ts';
import { header, stableJson } from '../emitter.ts';
import { restRoutes } from '../rest-routes.ts';

export const routesEmitter: Emitter = {
  name: 'routes',
  emit(model) {
    const routes = [
      header('routes'),
      `import type { RestRoute } from '../runtime/rest/route-table.ts';`,
      '',
      '/** Every REST route: method, path template, operation, type and the handler that serves it. */',
      `export const restRoutes: readonly RestRoute[] = [`,
      ...restRoutes(model).map((r) => `  ${JSON.stringify(r)},`),
      '];',
      '',
    ].join('\n');
    const metamodel = [
      header('routes'),
      `import type { Metamodel } from '../runtime/metamodel/model.ts';`,
      '',
      `export const metamodel: Metamodel = ${stableJson(model)};`,
      '',
    ].join('\n');
    return [{ path: 'routes.gen.ts', content: routes }, { path: 'metamodel.gen.ts', content: metamodel }];
  },
};
