/**
 * A module-resolution hook for openapi-typescript, which builds its output
 * with the TypeScript compiler's JavaScript API. The repository's own
 * TypeScript (7, native) has no such API, so openapi-typescript's imports of
 * `typescript`, and only those, are pointed at the compiler that ts-morph
 * (which the models emitter uses) brings with it. Registered by `load.ts`;
 * plain JavaScript because hooks run on a thread of their own before any
 * TypeScript loader.
 */
const shim = new URL('./typescript-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'typescript' && context.parentURL?.includes('/node_modules/openapi-typescript/')) {
    return { url: shim, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
