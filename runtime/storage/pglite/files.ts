/**
 * What the embedded database's threads share within one process: PGlite's
 * WebAssembly modules and file bundle, compiled and read once instead of once
 * per thread; the empty database that `memory://` databases are copied from,
 * so that each one costs a copy instead of an initdb; and the temporary
 * folders that stand behind `memory://` (a database that lives only in a
 * thread's memory would be lost when the thread is terminated).
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export const WORKER_URL = new URL('./worker.mjs', import.meta.url);

export interface PgliteArtifacts {
  pgliteWasmModule?: WebAssembly.Module;
  initdbWasmModule?: WebAssembly.Module;
  fsBundle?: SharedArrayBuffer;
}

/** The files of a freshly created, cleanly shut down database; folders have length -1. */
export interface DatabaseTemplate {
  buffer: SharedArrayBuffer;
  entries: { path: string; offset: number; length: number }[];
}

let artifacts: Promise<PgliteArtifacts> | undefined;
let template: Promise<DatabaseTemplate | null> | undefined;
const temporaryDirs = new Set<string>();

/** Without them (e.g. an unexpected package layout) each thread lets PGlite load its own. */
export function pgliteArtifacts(): Promise<PgliteArtifacts> {
  artifacts ??= (async () => {
    // createRequire, not import.meta.resolve: the latter is missing where this module is compiled to CommonJS (mocha via tsx).
    const dist = pathToFileURL(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')) + '/');
    const [pglite, initdb, bundle] = await Promise.all(
      ['pglite.wasm', 'initdb.wasm', 'pglite.data'].map((file) => readFile(new URL(file, dist))),
    );
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([WebAssembly.compile(pglite), WebAssembly.compile(initdb)]);
    const fsBundle = new SharedArrayBuffer(bundle.length);
    new Uint8Array(fsBundle).set(bundle);
    return { pgliteWasmModule, initdbWasmModule, fsBundle };
  })().catch(() => ({}));
  return artifacts;
}

/** Created once per process in a thread of its own; null if that fails (each database then runs initdb). */
export function emptyDatabaseTemplate(): Promise<DatabaseTemplate | null> {
  template ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mms-pglite-template-'));
    try {
      const worker = new Worker(WORKER_URL, { workerData: { mode: 'template', dataDir: dir, ...(await pgliteArtifacts()) }, execArgv: [] });
      try {
        return await new Promise<DatabaseTemplate>((resolve, reject) => {
          worker.once('message', (message: DatabaseTemplate) => resolve({ buffer: message.buffer, entries: message.entries }));
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new Error(`the template thread exited with code ${code}`)));
        });
      } finally {
        await worker.terminate();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })().catch(() => null);
  return template;
}

/** A new empty folder under the system's temporary folder, removed at the latest when the process exits. */
export async function createTemporaryDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mms-pglite-'));
  if (!temporaryDirs.size) process.once('exit', removeLeftovers);
  temporaryDirs.add(dir);
  return dir;
}

export async function removeTemporaryDataDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  temporaryDirs.delete(dir);
  if (!temporaryDirs.size) process.off('exit', removeLeftovers);
}

function removeLeftovers(): void {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
}
