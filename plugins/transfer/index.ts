/**
 * Metadata upload and download (decisions §8): whole models in and out as
 * files, by business key, uploads as jobs in the query plugin's address
 * space (host.jobs()). The engine (download.ts, upload.ts) turns stored
 * objects into records and records into writes; the formats (formats/)
 * turn records into files and back (records.ts).
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { Metamodel, PluginHost, PluginManifest } from '../../runtime/host.ts';
import { TRANSFER_MESSAGES } from './messages.ts';
import { registerRoutes } from './routes.ts';
import { openapi } from './openapi.ts';

/** The resolved metamodel the generator emitted (generated/metamodel.gen.ts), as the REST interface has it. */
async function metamodelOf(generatedDir: string): Promise<Metamodel> {
  const generated = await import(pathToFileURL(join(generatedDir, 'metamodel.gen.ts')).href);
  return generated.metamodel as Metamodel;
}

export const manifest: PluginManifest = {
  name: 'transfer',
  host: '^1.9',
  dependencies: ['query'],
  messages: TRANSFER_MESSAGES,
  openapi,
  async register(host: PluginHost) {
    registerRoutes(host, await metamodelOf(host.config.generatedDir));
  },
};
