/**
 * The metamodel module: its definition (the checked-in standard metamodel),
 * its types and its resolver, in one leaf folder that both the generator and
 * the runtime import. It imports nothing from `runtime/` or `generator/`
 * outside itself (test/metamodel/leaf.spec.ts holds it to that), so the
 * generator can run without the runtime's storage and the runtime never
 * reaches into the generator.
 */
export * from './model.ts';
export { MetamodelError, resolveMetamodel } from './resolve.ts';
export { readStandardMetamodel, STANDARD_METAMODEL_PATH } from './standard.ts';
