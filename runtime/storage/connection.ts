/**
 * Opens the storage: PostgreSQL when a URL is configured, otherwise an
 * embedded PGlite in the data folder. Both are driven through knex's `pg`
 * client, so the same SQL serves both.
 *
 * PGlite runs in a thread of its own (pglite/host.ts), reached through a
 * stream that pg uses as its socket: long statements do not block the event
 * loop, and interrupt() can stop one. `memory://` is a temporary folder,
 * removed on close(), so that the database survives the thread's replacement.
 * PGlite is one backend: long reads run on copies of the database in threads
 * of their own (openReaders(), pglite/readers.ts).
 */
import { mkdirSync } from 'node:fs';
import knexLib, { type Knex } from 'knex';
import pg from 'pg';
import { PgliteHost, type StorageLog } from './pglite/host.ts';
import { createTemporaryDataDir, emptyDatabaseTemplate, removeTemporaryDataDir } from './pglite/files.ts';
import { SnapshotReaders } from './pglite/readers.ts';
import { keepStatistics } from './pglite/analyze.ts';

export type { StorageLog } from './pglite/host.ts';

export interface Storage {
  knex: Knex;
  kind: 'postgres' | 'pglite';
  /**
   * Embedded database only: aborts the statement it is executing (which fails
   * with code 57014) by reopening the database; resolves once it is usable.
   */
  interrupt?(): Promise<void>;
  /**
   * Embedded database only: up to `size` copies of it (closed after `idleMs` unused), each in a thread of
   * its own, for statements that must not hold the database
   * (pglite/readers.ts). The caller closes them before the storage.
   */
  openReaders?(options: { size: number; idleMs?: number }): SnapshotReaders;
  close(): Promise<void>;
}

/** The embedded database's host on a PGlite storage (diagnostics and tests only). */
export const EMBEDDED_HOST = Symbol('embedded database host');

// Return bigint counts and timestamps as the REST interface needs them.
pg.types.setTypeParser(20, (v: string) => Number(v));

export interface StorageOptions {
  databaseUrl?: string;
  dataDir: string;
  poolSize?: number;
  /** Where the embedded database reports interrupts and crashes; standard error by default. */
  log?: StorageLog;
}

export async function openStorage(options: StorageOptions): Promise<Storage> {
  if (options.databaseUrl) {
    const knex = knexLib({
      client: 'pg',
      // No JIT for the service's own statements: PostgreSQL compiles a statement whose estimated cost passes
      // jit_above_cost, and the estimates of the link look-up's subplans (objects.ts) pass it for a page of a few
      // thousand objects, where compiling takes longer than running. (The query interface has a pool of its own.)
      connection: { connectionString: options.databaseUrl, options: '-c jit=off' },
      pool: { min: 0, max: options.poolSize ?? 10, acquireTimeoutMillis: 10_000 },
      acquireConnectionTimeout: 10_000,
    });
    return { knex, kind: 'postgres', close: () => knex.destroy() };
  }
  return openEmbedded(options.dataDir, options.log ?? stderrLog);
}

async function openEmbedded(dataDir: string, log: StorageLog): Promise<Storage> {
  const memory = dataDir.startsWith('memory://');
  const [dir, template] = memory
    ? await Promise.all([createTemporaryDataDir(), emptyDatabaseTemplate()])
    : [dataDir, null];
  if (!memory) mkdirSync(dir, { recursive: true });
  let host: PgliteHost;
  try {
    host = await PgliteHost.open({ dataDir: dir, template, log });
  } catch (err) {
    if (memory) await removeTemporaryDataDir(dir);
    throw err;
  }
  // PGlite is one backend: knex queues every transaction behind the last.
  // The `pg` client (not a PGlite dialect) counts deleted rows right and streams.
  // PGlite's only role and database: another name in the startup packet ends the backend.
  const knex = knexLib({
    client: 'pg',
    connection: () => ({ user: 'postgres', database: 'postgres', stream: () => host.socket() }) as never,
    pool: { min: 1, max: 1, acquireTimeoutMillis: 60_000 },
  });
  let closing: Promise<void> | undefined;
  const stopStatistics = keepStatistics(knex, log);
  const storage: Storage = {
    knex,
    kind: 'pglite',
    interrupt: () => host.interrupt(),
    openReaders: (options) => new SnapshotReaders({ knex, dataDir: dir, log, ...options }),
    close() {
      // The pool first, so that it opens no connection any more; then the database, which fails a
      // statement still running, so that the pool gets its connection back and can finish.
      closing ??= (async () => {
        stopStatistics();
        try {
          const destroyed = knex.destroy();
          await host.close();
          await destroyed;
        } finally {
          // Whatever failed above, a memory:// database leaves no folder behind.
          if (memory) await removeTemporaryDataDir(dir);
        }
      })();
      return closing;
    },
  };
  Object.defineProperty(storage, EMBEDDED_HOST, { value: host });
  return storage;
}

const stderrLog: StorageLog = {
  info: (obj, msg) => process.stderr.write(`${JSON.stringify({ level: 'info', ...obj, msg })}\n`),
  warn: (obj, msg) => process.stderr.write(`${JSON.stringify({ level: 'warn', ...obj, msg })}\n`),
  error: (obj, msg) => process.stderr.write(`${JSON.stringify({ level: 'error', ...obj, msg })}\n`),
};
