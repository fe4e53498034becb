/**
 * Access-key benchmark: GET of a scheme by technical key, signed in with an
 * access key, against (1) a bare Koa handler running the same single SQL
 * query on the same knex pool, and (2) the same GET with basic
 * authentication (its sign-in cache warm). As in bench/rest.ts every figure
 * that matters is a ratio measured in the same run; the load generator runs
 * in a child process (bench/load.ts).
 *
 *   npx tsx bench/auth-access-key.ts [--backend postgres|pglite] [--objects 1000] [--duration 10]
 *
 * Target: the access-key GET at ≥ 0.8 × each baseline. A warm key costs no
 * query (its owner is remembered for SERVICE_ACCESS_KEY_CACHE_TTL, default
 * 5 s); run with SERVICE_ACCESS_KEY_CACHE_TTL=0 to see one indexed lookup
 * per request. The bare handler costs one query in all, so that ratio shows
 * what the whole service, not only the key, adds.
 */
import http from 'node:http';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Koa from 'koa';
import type { Knex } from 'knex';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../runtime/config.ts';
import { createService } from '../runtime/app.ts';
import { schemaOf } from '../runtime/storage/migrations.ts';
import { PLUGINS } from '../plugins/index.ts';
import type { LoadJob, LoadResult } from './load.ts';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'postgres' },
    objects: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
  },
});
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const OBJECTS = Number(args.objects);
const PG_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN = { user: 'admin', password: 'bench-secret-1' };
const DB = 'bench';
const TARGET = 0.8;

interface Side { url: string; paths: string[]; headers?: Record<string, string> }

const loader = fork(fileURLToPath(new URL('./load.ts', import.meta.url)), { execArgv: ['--import', 'tsx'] });

function load(side: Side, seconds: number): Promise<LoadResult> {
  const job: LoadJob = { url: side.url, paths: side.paths, headers: side.headers ?? {}, connections: CONNECTIONS, seconds };
  return new Promise((resolve) => {
    loader.once('message', (r) => resolve(r as LoadResult));
    loader.send(job);
  });
}

/** Warms both sides, then alternates them twice for half the duration each; 2xx answers per second. */
async function compare(operation: string, service: Side, baseline: Side) {
  await load(service, WARMUP);
  await load(baseline, WARMUP);
  const sum = [{ ok: 0, s: 0, bad: 0 }, { ok: 0, s: 0, bad: 0 }];
  for (let round = 0; round < 2; round++) {
    for (const [i, side] of [service, baseline].entries()) {
      const r = await load(side, DURATION / 2);
      sum[i].ok += r.ok;
      sum[i].s += r.seconds;
      sum[i].bad += r.non2xx + r.errors;
    }
  }
  const [a, b] = sum.map((x) => x.ok / x.s);
  const errors = sum[0].bad + sum[1].bad;
  return { operation, service: a, baseline: b, ratio: a / b, pass: a / b >= TARGET && errors === 0, errors };
}

function baselineApp(knex: Knex): Koa {
  const s = `"${schemaOf(DB)}"`;
  const app = new Koa();
  app.use(async (ctx) => {
    const r = await knex.raw(`select * from ${s}.objects where id = ?`, [ctx.path.slice('/id/'.length)]);
    if (r.rows[0]) ctx.body = r.rows[0];
    else ctx.status = 404;
  });
  return app;
}

async function listen(app: Koa, closers: (() => Promise<void>)[]): Promise<string> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function pgAdmin(sql: string) {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function main() {
  const backend = args.backend!;
  if (backend !== 'postgres' && backend !== 'pglite') throw new Error('--backend must be postgres or pglite');
  const pgName = backend === 'postgres' ? `bench_${randomBytes(4).toString('hex')}` : undefined;
  const closers: (() => Promise<void>)[] = [];
  if (pgName) await pgAdmin(`create database ${pgName}`);
  try {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${pgName}`;
    const passed = Object.entries(process.env).filter(([k]) => k.startsWith('SERVICE_') && !/DATABASE_URL|DATA_DIR/.test(k));
    const env = {
      ...Object.fromEntries(passed),
      PORT: '0', SERVICE_ADMIN_USER: ADMIN.user, SERVICE_ADMIN_PASSWORD: ADMIN.password, SERVICE_LOG_LEVEL: 'info',
      ...(pgName ? { SERVICE_DATABASE_URL: url.toString() } : { SERVICE_DATA_DIR: 'memory://' }),
    };
    // Request logging stays on, as in production, but goes nowhere.
    const log = pino({ level: 'info', base: undefined }, pino.destination({ dest: '/dev/null', sync: false }));
    const service = await createService(loadConfig(env), { plugins: PLUGINS, log });
    closers.push(() => service.close());
    const serviceUrl = `http://127.0.0.1:${await service.listen()}`;
    const basicAuth = { authorization: `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString('base64')}` };
    const rest = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(serviceUrl + path, { method, headers: { ...basicAuth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${(await r.text()).slice(0, 300)}`);
      return r.json();
    };
    await rest('POST', '/api/admin/databases', { name: DB });
    const schemes = await rest('PUT', `/rest/${DB}/schemes`, Array.from({ length: OBJECTS }, (_, i) => ({ _type: 'Scheme', label: `S${i}` })));
    const ids: string[] = schemes._embedded.schemes.map((s: { id: string }) => s.id);
    // The key's user is an ordinary tenant user, as a program's would be.
    const robot = await rest('POST', `/rest/${DB}/users`, { _type: 'User', loginId: 'robot', accessLevel: 'EDITOR', serviceUser: true });
    const { key } = await rest('POST', `/rest/${DB}/users/${robot.id}/accessKeys`, { description: 'benchmark' });
    const baselineUrl = await listen(baselineApp(service.storage.knex), closers);
    const byId = ids.map((id) => `/rest/${DB}/schemes/${id}`);
    const withKey = { url: serviceUrl, paths: byId, headers: { 'service-access-key': key } };
    console.log(`${backend}, ${ids.length} schemes; concurrency ${CONNECTIONS}, ${DURATION} s per side`);
    const rows = [
      await compare('GET scheme by technical key: access key vs bare SQL', withKey, { url: baselineUrl, paths: ids.map((id) => `/id/${id}`) }),
      await compare('GET scheme by technical key: access key vs basic auth', withKey, { url: serviceUrl, paths: byId, headers: basicAuth }),
    ];
    console.log(`\n${'operation'.padEnd(56)}  service  baseline  ratio  target  result`);
    for (const r of rows) {
      console.log(`${r.operation.padEnd(56)}  ${r.service.toFixed(0).padStart(7)}  ${r.baseline.toFixed(0).padStart(8)}  ${r.ratio.toFixed(2).padStart(5)}  ≥ ${TARGET}  ${r.pass ? 'pass' : r.errors ? `FAIL (${r.errors} errors)` : 'FAIL'}`);
    }
  } finally {
    for (const close of closers.reverse()) await close();
    if (pgName) await pgAdmin(`drop database if exists ${pgName} with (force)`);
  }
}

try {
  await main();
} finally {
  loader.kill();
}
