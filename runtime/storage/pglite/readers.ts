/**
 * Where the embedded database runs long reads: copies of it (snapshots,
 * snapshot.ts), each opened in a thread of its own. PGlite is one
 * backend: a statement of the query interface that ran on it for minutes
 * held every REST call and sign-in of every tenant for as long. On a copy it
 * holds nobody but the queries queued behind it, and stopping it (its
 * timeout, its caller leaving) reopens only the copy.
 *
 * A reader is handed out only if its copy is at least as recent as the
 * database was when it was asked for, so a statement sees every change its
 * caller made before it. A copy whose database has changed since is
 * replaced when it is needed again; one left unused for `idleMs` is closed,
 * giving its memory back.
 */
import pg from 'pg';
import type { Knex } from 'knex';
import { PgliteHost, type StorageLog } from './host.ts';
import { createTemporaryDataDir, removeTemporaryDataDir } from './files.ts';
import { currentLsn, takeSnapshot } from './snapshot.ts';

/**
 * The copies' threads run at this nice value: a report that takes a core
 * for minutes yields it to the threads that answer people (the event loop,
 * the database's own thread, password checks) whenever they need it.
 */
export const READER_NICENESS = 10;

export interface SnapshotReadersOptions {
  /** The embedded database and its folder. */
  knex: Knex;
  dataDir: string;
  log: StorageLog;
  /** How many copies may be open at once: statements beyond that wait for one. */
  size: number;
  /** A copy unused this long is closed (default 60 s). */
  idleMs?: number;
}

/** A connection to a copy, lent to one run. */
export interface SnapshotLease {
  client: pg.Client;
  /** Stops the statement the copy is running (it fails with 57014); the lease stays usable. */
  interrupt(): void;
  /** Gives the copy back; `broken`: its connection is in an unknown state, the copy is closed. */
  release(broken: boolean): void;
}

interface Reader {
  dir: string;
  lsn: bigint;
  host: PgliteHost;
  client: pg.Client;
  busy: boolean;
  idleTimer?: NodeJS.Timeout;
}

/** Logs why no copy could be made, and fails the caller as an unavailable database does (503), not as its statement. */
function unavailable(what: string, err: unknown, log: StorageLog): Error {
  log.error({ err: err instanceof Error ? err.message : String(err) }, what);
  return Object.assign(new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`), { code: '57P03' });
}

export class SnapshotReaders {
  private readonly readers = new Set<Reader>();
  /** Copies being made count against the size too. */
  private opening = 0;
  private waiters: (() => void)[] = [];
  /** One snapshot at a time: PGlite's one session can hold one backup. */
  private snapshots: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Copies made so far (diagnostics and tests). */
  made = 0;

  constructor(private readonly options: SnapshotReadersOptions) {}

  /** A reader whose copy holds every change committed before this call; waits while all are busy. */
  async acquire(signal?: AbortSignal): Promise<SnapshotLease> {
    const wanted = await currentLsn(this.options.knex);
    for (;;) {
      if (this.closed) throw Object.assign(new Error('the embedded database is closing'), { code: '57P01' });
      signal?.throwIfAborted();
      const idle = [...this.readers].filter((r) => !r.busy);
      const fresh = idle.find((r) => r.lsn >= wanted);
      if (fresh) return this.lend(fresh);
      if (this.readers.size + this.opening < this.options.size) return this.lend(await this.open());
      if (idle.length) {
        // A stale copy makes room for a fresh one.
        await this.discard(idle[0]);
        continue;
      }
      await this.vacancy(signal);
    }
  }

  /** Copies running a statement, copies open and idle, and callers waiting for one (the instance's metrics). */
  figures(): { used: number; free: number; pending: number } {
    const busy = [...this.readers].filter((r) => r.busy).length;
    return { used: busy + this.opening, free: this.readers.size - busy, pending: this.waiters.length };
  }

  /** The memory of each open copy's database after its last statement (diagnostics and tests). */
  memoryBytes(): number[] {
    return [...this.readers].map((r) => r.host.lastMemoryBytes);
  }

  /** Closes every copy; statements running on them fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiters.splice(0)) wake();
    await this.snapshots.catch(() => undefined);
    await Promise.all([...this.readers].map((r) => this.discard(r)));
  }

  private lend(reader: Reader): SnapshotLease {
    reader.busy = true;
    clearTimeout(reader.idleTimer);
    let returned = false;
    return {
      client: reader.client,
      interrupt: () => {
        void reader.host.interrupt().catch((err) => this.options.log.warn({ err: String(err) }, 'interrupting a snapshot reader failed'));
      },
      release: (broken) => {
        if (returned) return;
        returned = true;
        reader.busy = false;
        if (broken || this.closed) void this.discard(reader);
        else reader.idleTimer = setTimeout(() => void this.discard(reader), this.options.idleMs ?? 60_000).unref();
        this.waiters.shift()?.();
      },
    };
  }

  private vacancy(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        signal?.removeEventListener('abort', wake);
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve();
      };
      this.waiters.push(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  /** Makes a copy of the database as it is now and opens it. */
  private async open(): Promise<Reader> {
    this.opening++;
    try {
      const { dir, lsn } = await this.snapshot();
      try {
        const host = await PgliteHost.open({ dataDir: dir, log: this.options.log, niceness: READER_NICENESS });
        const client = new pg.Client({ user: 'postgres', database: 'postgres', stream: () => host.socket() } as pg.ClientConfig);
        // A copy closed under a connection (a timeout, close()) fails its statement; the client's own error event is no news.
        client.on('error', () => undefined);
        try {
          await client.connect();
        } catch (err) {
          await host.close();
          throw err;
        }
        const reader: Reader = { dir, lsn, host, client, busy: false };
        this.readers.add(reader);
        this.made++;
        return reader;
      } catch (err) {
        await removeTemporaryDataDir(dir);
        throw unavailable('the copy of the embedded database cannot be opened', err, this.options.log);
      }
    } finally {
      this.opening--;
    }
  }

  /**
   * A copy in a new folder, one at a time. Tried twice: a backup breaks off
   * when the database's thread is replaced meanwhile (its memory had grown,
   * host.ts), and the next one then succeeds.
   */
  private async snapshot(): Promise<{ dir: string; lsn: bigint }> {
    const take = async () => {
      for (let attempt = 1; ; attempt++) {
        const dir = await createTemporaryDataDir();
        try {
          return { dir, lsn: (await takeSnapshot(this.options.knex, this.options.dataDir, dir)).lsn };
        } catch (err) {
          await removeTemporaryDataDir(dir);
          if (attempt >= 2) throw unavailable('the embedded database cannot be copied', err, this.options.log);
        }
      }
    };
    const snapshot = this.snapshots.catch(() => undefined).then(take);
    this.snapshots = snapshot;
    return snapshot;
  }

  private async discard(reader: Reader): Promise<void> {
    if (!this.readers.delete(reader)) return;
    clearTimeout(reader.idleTimer);
    await reader.client.end().catch(() => undefined);
    await reader.host.close().catch(() => undefined);
    await removeTemporaryDataDir(reader.dir);
    this.waiters.shift()?.();
  }
}
