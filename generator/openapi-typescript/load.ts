/**
 * Loads openapi-typescript with a TypeScript compiler API under it (see
 * typescript-hook.mjs for why it needs one found for it). Loaded on first use
 * only, so that the generator's other emitters and the tests that import them
 * do not pay for it.
 */
import { register } from 'node:module';

type OpenapiTypescript = typeof import('openapi-typescript');

let loaded: Promise<OpenapiTypescript> | undefined;

export function loadOpenapiTypescript(): Promise<OpenapiTypescript> {
  loaded ??= (async () => {
    register('./typescript-hook.mjs', import.meta.url);
    return import('openapi-typescript');
  })();
  return loaded;
}
