/**
 * Where query statements run: on PostgreSQL, a pool of its own
 * (SERVICE_QUERY_POOL_SIZE connections, application_name `query`), so that a
 * long export never takes a connection the REST interface needs; on the
 * embedded database, copies of it in threads of their own
 * (runtime/storage/pglite/readers.ts). Either way a run gets a `Connection`:
 * statements over the extended protocol, COPY where the server has it, a way
 * to stop what it is doing, and its release.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import type { SnapshotReaders, Storage } from '../../runtime/host.ts';
import { CopyOut } from './copy-out.ts';
import type { Format } from './formats.ts';

export interface Connection {
  query(text: string, values?: unknown[], rowMode?: 'array'): Promise<pg.QueryResult>;
  copyOut?(sql: string, format: Format): CopyOut;
  /** Stops whatever the connection is doing (the run was abandoned). */
  kill(): void;
  release(broken: boolean): void;
}

export class QueryConnections {
  private readonly pool?: pg.Pool;
  /** Embedded: copies of the database that statements run on, so that they hold no request of anyone else. */
  readonly readers?: SnapshotReaders;

  constructor(private readonly options: { storage: Storage; databaseUrl?: string; poolSize: number; log: Logger }) {
    if (options.storage.kind === 'postgres') {
      this.pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize, idleTimeoutMillis: 10_000, application_name: 'query' } as pg.PoolConfig);
      // An idle connection that the server closes must not take the process down.
      this.pool.on('error', (err) => options.log.warn({ err: String(err) }, 'query pool connection lost'));
    } else {
      this.readers = options.storage.openReaders?.({ size: options.poolSize });
      if (!this.readers) throw new Error(`the ${options.storage.kind} storage cannot run query statements`);
    }
  }

  async close() {
    await this.pool?.end();
    await this.readers?.close();
  }

  figures() {
    const pool = this.pool;
    return pool ? { used: pool.totalCount - pool.idleCount, free: pool.idleCount, pending: pool.waitingCount } : this.readers?.figures();
  }

  async connect(signal?: AbortSignal): Promise<Connection> {
    const extended = (client: pg.ClientBase) => (text: string, values: unknown[] = [], rowMode?: 'array') =>
      client.query({ text, values, rowMode, queryMode: 'extended' } as pg.QueryConfig);
    if (this.pool) {
      const client = await this.pool.connect();
      // A connection killed on purpose (or lost) fails the statement running on it; the client's own error event is no news.
      const lost = (err: Error) => this.options.log.debug({ err: String(err) }, 'query connection closed');
      client.on('error', lost);
      return {
        query: extended(client),
        copyOut: (sql, format) => client.query(new CopyOut(sql, format)),
        kill: () => (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy(),
        release: (broken) => {
          client.off('error', lost);
          client.release(broken ? new Error('query connection abandoned') : undefined);
        },
      };
    }
    const lease = await this.readers!.acquire(signal);
    return {
      query: extended(lease.client),
      kill: () => lease.interrupt(),
      release: (broken) => lease.release(broken),
    };
  }
}
