/** The checked-in standard metamodel; the runtime owns the file because it loads it into `meta`. */
export { readStandardMetamodel, STANDARD_METAMODEL_PATH } from '../runtime/metamodel/standard.ts';
