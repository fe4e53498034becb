/** Pieces the benchmarks share. */
import http from 'node:http';
import type Koa from 'koa';
import pg from 'pg';

/** The PostgreSQL server the benchmarks make their databases on. */
export const PG_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Serves a Koa app on a free loopback port; its closer goes into `closers`. */
export async function listen(app: Koa, closers: (() => Promise<void>)[]): Promise<string> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Runs one statement on the server's administrative database (create or drop a database). */
export async function pgAdmin(sql: string) {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
