/**
 * The thread the embedded database (PGlite) runs in. The service's main
 * thread stays free while a statement runs, and can stop a statement that runs
 * too long by terminating this thread (PGlite has no cancel and ignores
 * statement_timeout); the database is then reopened from its folder.
 *
 * Plain JavaScript on purpose: Node 20 does not apply tsx's loader hooks to a
 * worker's own module, so a TypeScript worker would not load under
 * `tsx runtime/main.ts` nor under mocha with `--import tsx`.
 *
 * Messages from the main thread (runtime/storage/pglite/host.ts):
 *   {type: 'exec', id, bytes, reset, discard}: frontend protocol messages;
 *     answered by 'data' chunks (large results stream) and one 'done'
 *     (whether a transaction is open, the size of the database's memory).
 *   {type: 'close'}: shut the database down cleanly, answered by 'closed'.
 * workerData.niceness, when set, lowers this thread's priority (copies that
 * run long reads, runtime/storage/pglite/readers.ts).
 * workerData.mode 'template' instead creates a database in workerData.dataDir,
 * shuts it down and posts its files (one SharedArrayBuffer) so that later
 * empty databases are copies instead of each running initdb.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/** Results stream to the main thread in pieces of about this size. */
const CHUNK_BYTES = 256 * 1024;

const { mode, dataDir, template, niceness } = workerData;

/**
 * Gives this thread alone a lower scheduling priority (Linux: setpriority on
 * the thread's id, which /proc/thread-self names). A copy of the database
 * that runs a report for minutes then yields the cores to the threads that
 * answer people. Elsewhere, or where it is not allowed, nothing changes.
 */
function lowerPriority(value) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, value);
  } catch {
    // Not Linux, or not permitted: the thread keeps the process's priority.
  }
}

if (niceness) lowerPriority(niceness);

function pgliteOptions() {
  // Search's trigram indexes (runtime/storage/migrations.ts); every thread needs it, copies included.
  const options = { extensions: { pg_trgm } };
  if (workerData.pgliteWasmModule) options.pgliteWasmModule = workerData.pgliteWasmModule;
  if (workerData.initdbWasmModule) options.initdbWasmModule = workerData.initdbWasmModule;
  if (workerData.fsBundle) options.fsBundle = new Blob([new Uint8Array(workerData.fsBundle).slice()]);
  return options;
}

/** Every file below `root` as {path, offset, length} into one shared buffer; folders have length -1. */
function snapshot(root) {
  const entries = [];
  const files = [];
  let total = 0;
  (function walk(dir, rel) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        entries.push({ path, offset: 0, length: -1 });
        walk(join(dir, entry.name), path);
      } else if (entry.isFile()) {
        const bytes = readFileSync(join(dir, entry.name));
        entries.push({ path, offset: total, length: bytes.length });
        files.push(bytes);
        total += bytes.length;
      }
    }
  })(root, '');
  const buffer = new SharedArrayBuffer(total);
  const view = new Uint8Array(buffer);
  let offset = 0;
  for (const bytes of files) {
    view.set(bytes, offset);
    offset += bytes.length;
  }
  return { buffer, entries };
}

function restore(root, { buffer, entries }) {
  const view = new Uint8Array(buffer);
  for (const { path, offset, length } of entries) {
    if (length < 0) mkdirSync(join(root, path), { recursive: true });
    else writeFileSync(join(root, path), view.subarray(offset, offset + length));
  }
}

/** Collects the backend's answer to one 'exec'; copies out of PGlite's reused buffer and streams big results. */
class Answer {
  constructor(id, discard) {
    this.id = id;
    this.discard = discard;
    this.buffer = null;
    this.length = 0;
    this.write = (bytes) => {
      if (this.discard) return;
      if (this.buffer && this.length + bytes.length > this.buffer.length) {
        if (this.length >= CHUNK_BYTES) this.post('data');
        else this.grow(this.length + bytes.length);
      }
      if (!this.buffer) this.buffer = new Uint8Array(Math.max(bytes.length, 16 * 1024));
      this.buffer.set(bytes, this.length);
      this.length += bytes.length;
    };
  }

  grow(needed) {
    const next = new Uint8Array(Math.max(needed, this.buffer.length * 2));
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
  }

  post(type, extra = {}) {
    const buffer = this.buffer ? this.buffer.buffer : null;
    parentPort.postMessage({ type, id: this.id, buffer, length: this.length, ...extra }, buffer ? [buffer] : []);
    this.buffer = null;
    this.length = 0;
  }
}

/**
 * The size of the database's WebAssembly memory. It grows with the largest
 * value or sort a statement needed and never shrinks; the main thread reopens
 * the database in a new thread when it is too large (pglite/host.ts).
 */
function memoryBytes(pg) {
  return pg.mod?.HEAPU8?.byteLength ?? 0;
}

async function serve() {
  if (template && !existsSync(join(dataDir, 'PG_VERSION'))) restore(dataDir, template);
  const pg = new PGlite(dataDir, pgliteOptions());
  await pg.waitReady;

  const discardAll = () => undefined;
  /** A new connection starts without the state an ended one left (open transaction, settings, prepared statements). */
  async function resetSession() {
    const query = (sql) => {
      const text = Buffer.from(`${sql}\0`, 'utf8');
      const message = Buffer.alloc(5 + text.length);
      message.write('Q', 0, 'latin1');
      message.writeInt32BE(4 + text.length, 1);
      text.copy(message, 5);
      return pg.execProtocolRawStream(message, { onRawData: discardAll });
    };
    // Sync first: a connection that went away in the middle of the extended protocol may have left
    // the backend skipping messages until one.
    await pg.execProtocolRawStream(new Uint8Array([0x53, 0, 0, 0, 4]), { onRawData: discardAll });
    if (pg.isInTransaction()) await query('rollback');
    await query('discard all');
  }

  async function handle(message) {
    if (message.type === 'exec') {
      if (message.reset) await resetSession();
      const answer = new Answer(message.id, message.discard);
      await pg.execProtocolRawStream(message.bytes, { onRawData: answer.write });
      answer.post('done', { inTransaction: pg.isInTransaction(), memoryBytes: memoryBytes(pg) });
    } else if (message.type === 'close') {
      await pg.close();
      parentPort.postMessage({ type: 'closed' });
    }
  }

  // One message at a time, in order. PGlite's state is unknown after an exception: the thread
  // ends and the main thread opens the database again.
  let queue = Promise.resolve();
  parentPort.on('message', (message) => {
    queue = queue
      .then(() => handle(message))
      .catch((err) => {
        parentPort.postMessage({ type: 'crashed', message: String(err?.stack ?? (typeof err === 'object' ? JSON.stringify(err) : err)) });
        process.exit(1);
      });
  });
  parentPort.postMessage({ type: 'ready' });
}

async function createTemplate() {
  const pg = new PGlite(dataDir, pgliteOptions());
  await pg.waitReady;
  await pg.close();
  const { buffer, entries } = snapshot(dataDir);
  parentPort.postMessage({ type: 'template', buffer, entries });
}

if (mode === 'template') await createTemplate();
else await serve();
