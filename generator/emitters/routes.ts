/**
 * The route table: the resolved metamodel the runtime's generic handlers
 * read (plurals, supertype aliases, lists and their item types, owners).
 */
import type { Emitter } from '../emitter.ts';
import { header, stableJson } from '../emitter.ts';

export const routesEmitter: Emitter = {
  name: 'routes',
  emit(model) {
    const content = [
      header('routes'),
      `import type { Metamodel } from '../runtime/metamodel/model.ts';`,
      '',
      `export const metamodel: Metamodel = ${stableJson(model)};`,
      '',
    ].join('\n');
    return [{ path: 'routes.gen.ts', content }];
  },
};
