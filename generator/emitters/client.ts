/**
 * Emits `api.gen.ts`: the TypeScript types of every path, operation and
 * schema of the OpenAPI document, in openapi-typescript's form, which the
 * typed client (`client/index.ts`, over openapi-fetch) is parameterised with.
 * It reads the document the openapi emitter wrote in the same run, so the
 * client describes exactly the interface that is published, plugins' calls
 * included as far as the document has them.
 */
import { header, type DerivedEmitter } from '../emitter.ts';
import { loadOpenapiTypescript } from '../openapi-typescript/load.ts';

export const clientEmitter: DerivedEmitter = {
  name: 'client',
  async emit(files) {
    const document = files.find((f) => f.path === 'openapi.gen.json');
    if (!document) throw new Error('client: no emitter wrote the OpenAPI document openapi.gen.json');
    const { default: openapiTS, astToString } = await loadOpenapiTypescript();
    // silent: a warning must not pass unnoticed in a log; openapi-typescript throws on what it cannot translate.
    // defaultNonNullable off: a property with a default (a status) is optional to write, so it must not become required in the types.
    // emptyObjectsUnknown: an object without properties (a row of a query result) may hold anything, not nothing.
    const nodes = await openapiTS(JSON.parse(document.content), { silent: true, defaultNonNullable: false, emptyObjectsUnknown: true });
    return [{ path: 'api.gen.ts', content: `${header('client')}\n${astToString(nodes)}` }];
  },
};
