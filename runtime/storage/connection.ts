/**
 * Opens the storage: PostgreSQL when a URL is configured, otherwise an
 * embedded PGlite in the data folder (`memory://` keeps it in memory).
 * Both are driven through knex's `pg` client, so the same SQL serves both.
 */
import { mkdirSync } from 'node:fs';
import knexLib, { type Knex } from 'knex';
import pg from 'pg';

export interface Storage {
  knex: Knex;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

// Return bigint counts and timestamps as the REST interface needs them.
pg.types.setTypeParser(20, (v: string) => Number(v));

export async function openStorage(options: { databaseUrl?: string; dataDir: string; poolSize?: number }): Promise<Storage> {
  if (options.databaseUrl) {
    const knex = knexLib({
      client: 'pg',
      connection: options.databaseUrl,
      pool: { min: 0, max: options.poolSize ?? 10, acquireTimeoutMillis: 10_000 },
      acquireConnectionTimeout: 10_000,
    });
    return { knex, kind: 'postgres', close: () => knex.destroy() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const memory = options.dataDir.startsWith('memory://');
  if (!memory) mkdirSync(options.dataDir, { recursive: true });
  const pglite = new PGlite(memory ? undefined : options.dataDir);
  await pglite.waitReady;
  const pgConfig = createPgConfig(pglite);
  // PGlite is one connection: knex queues every transaction behind the last.
  const knex = knexLib({ client: 'pg', connection: () => pgConfig as never, pool: { min: 1, max: 1, acquireTimeoutMillis: 60_000 } });
  return {
    knex,
    kind: 'pglite',
    async close() {
      await knex.destroy();
      await pglite.close();
    },
  };
}
