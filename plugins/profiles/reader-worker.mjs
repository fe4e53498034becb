/**
 * The thread that reads uploaded profile files (reader.ts says why). Plain
 * JavaScript that registers the TypeScript loader itself: a worker does not
 * inherit the service's `--import tsx`.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { readProfile } = await import('./document.ts');
const { metamodel } = await import(pathToFileURL(join(workerData.generatedDir, 'metamodel.gen.ts')).href);

parentPort.on('message', ({ kind, bytes }) => {
  parentPort.postMessage(readProfile(kind, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), metamodel));
});
parentPort.postMessage('ready');
