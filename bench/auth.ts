/**
 * Sign-in benchmark: GET of a scheme by technical key with a warm bearer
 * token from a real OpenID provider (oidc-provider, in this process; it only
 * issues the token and serves the keys once) and with an access key (on the
 * same instance: OpenID Connect for people, keys for machines), each against
 *   (1) the same GET without authentication (bench/bench-auth.ts: a fixed
 *       principal, nothing checked, nothing looked up): target ≥ 0.8 each;
 *   (2) the same GET with basic authentication (its sign-in cache warm);
 *   (3) a bare Koa handler running the same single SQL query;
 * and, to show where the time goes, the same bearer GET with the verified-
 * token cache off (SERVICE_AUTH_CACHE_TTL=0: a signature check per request)
 * against (1). It also times the two steps of a cold bearer sign-in
 * in-process: the signature check and the core's user lookup
 * (directory.loginTenant, one query), which the sign-in cache saves.
 *
 *   npx tsx bench/auth.ts [--backend postgres|pglite] [--objects 1000] [--duration 10]
 *
 * PostgreSQL: every side is its own service instance on one throwaway
 * database (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 * PGlite in memory cannot be shared: there the unauthenticated driver joins
 * the OpenID Connect service (it stands aside when an Authorization header is
 * sent), and the basic and cache-off rows are left out.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import Koa from 'koa';
import type { Knex } from 'knex';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { loadConfig } from '../runtime/config.ts';
import { createService, type Service } from '../runtime/app.ts';
import { schemaOf } from '../runtime/storage/migrations.ts';
import { createDirectory } from '../runtime/auth/directory.ts';
import { PLUGINS } from '../plugins/index.ts';
import type { PluginManifest } from '../runtime/plugins.ts';
import { SERVICE_CLIENT_ID, startOidcProvider } from '../test/helpers/oidc-provider.ts';
import { createClient, ok } from '../client/index.ts';
import { benchAuthPlugin } from './bench-auth.ts';
import { compareSides, listen, loadGenerator, pgAdmin, PG_ADMIN_URL, requestLog, type Side } from './common.ts';

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
const ADMIN = { user: 'admin', password: 'bench-secret-1' };
const USER = { loginId: 'bench-user', password: 'bench-user-secret-1' };
const DB = 'bench';

interface Row { operation: string; service: number; baseline: number; ratio: number; target?: number; errors: number }

const generator = loadGenerator();
const load = (side: Side, seconds: number) => generator.run({ url: side.url, paths: side.paths, headers: side.headers ?? {}, connections: CONNECTIONS, seconds });

async function compare(operation: string, service: Side, baseline: Side, target?: number): Promise<Row> {
  const c = await compareSides(generator, service, baseline, { warmupSeconds: WARMUP, seconds: DURATION, connections: CONNECTIONS });
  return { operation, service: c.service, baseline: c.baseline, ratio: c.ratio, target, errors: c.errors };
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



/** Mean microseconds of `task` over `n` runs, one at a time. */
async function timeEach(n: number, task: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await task();
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await task();
  return Number(process.hrtime.bigint() - started) / 1000 / n;
}

async function main() {
  const backend = args.backend!;
  if (backend !== 'postgres' && backend !== 'pglite') throw new Error('--backend must be postgres or pglite');
  const pgName = backend === 'postgres' ? `bench_${randomBytes(4).toString('hex')}` : undefined;
  const closers: (() => Promise<void>)[] = [];
  if (pgName) await pgAdmin(`create database ${pgName}`);
  try {
    const provider = await startOidcProvider({ accounts: [
      { accountId: 'sub-bench-user', username: USER.loginId, password: USER.password, claims: { login_id: USER.loginId } },
      { accountId: 'sub-admin', username: ADMIN.user, password: ADMIN.password, claims: { login_id: ADMIN.user } },
    ] });
    closers.push(() => provider.close());
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${pgName}`;
    const passed = Object.entries(process.env).filter(([k]) => k.startsWith('SERVICE_') && !/DATABASE_URL|DATA_DIR/.test(k));
    const base = {
      ...Object.fromEntries(passed),
      PORT: '0', SERVICE_ADMIN_USER: ADMIN.user, SERVICE_ADMIN_PASSWORD: ADMIN.password, SERVICE_LOG_LEVEL: 'info',
      ...(pgName ? { SERVICE_DATABASE_URL: url.toString() } : { SERVICE_DATA_DIR: 'memory://' }),
    };
    const oidc = {
      ...base, SERVICE_OIDC_AUTHENTICATION: 'true', SERVICE_OIDC_CLIENT_ID: SERVICE_CLIENT_ID,
      SERVICE_OIDC_PROVIDER_URL: provider.issuer, SERVICE_OIDC_JWT_USER_ID: 'login_id',
    };
    // Request logging stays on, as in production, but goes nowhere.
    const log = requestLog();
    const start = async (env: Record<string, string>, plugins: PluginManifest[]): Promise<{ service: Service; url: string }> => {
      const service = await createService(loadConfig(env), { plugins, log });
      closers.push(() => service.close());
      return { service, url: `http://127.0.0.1:${await service.listen()}` };
    };
    let tenant = '';
    const benchAuth = benchAuthPlugin(() => tenant);

    const bearerService = await start(oidc, pgName ? PLUGINS : [...PLUGINS, benchAuth]);
    const adminToken = await provider.passwordToken(ADMIN.user, ADMIN.password);
    const admin = createClient({ baseUrl: bearerService.url, authorization: { bearer: adminToken } });
    await ok(admin.POST('/api/admin/databases', { body: { name: DB } }));
    tenant = (await bearerService.service.databases.get(DB))!.defaultTenant;
    // A few at a time: the document has no write of the whole top-level list.
    const ids: string[] = [];
    for (let i = 0; i < OBJECTS; i += 8) {
      const labels = Array.from({ length: Math.min(8, OBJECTS - i) }, (_, j) => `S${i + j}`);
      const created = await Promise.all(labels.map((label) => ok(admin.POST('/rest/{db}/schemes', { params: { path: { db: DB } }, body: { _type: 'Scheme', label } }))));
      ids.push(...created.map((s) => s.id!));
    }
    const user = await ok(admin.POST('/rest/{db}/users', { params: { path: { db: DB } }, body: { _type: 'User', loginId: USER.loginId, accessLevel: 'EDITOR' } }));
    const token = await provider.passwordToken(USER.loginId, USER.password);
    const byId = ids.map((id) => `/rest/${DB}/schemes/${id}`);
    const bearer: Side = { url: bearerService.url, paths: byId, headers: { authorization: `Bearer ${token}` } };
    const created = await ok(admin.POST('/rest/{db}/users/{key}/accessKeys', { params: { path: { db: DB, key: user.id! } }, body: { description: 'benchmark' } }));
    const keyed: Side = { url: bearerService.url, paths: byId, headers: { 'service-access-key': created.key } };
    const bare: Side = { url: await listen(baselineApp(bearerService.service.storage.knex), closers), paths: ids.map((id) => `/id/${id}`) };

    let none: Side = { url: bearerService.url, paths: byId };
    let basic: Side | undefined;
    let uncached: Side | undefined;
    if (pgName) {
      none = { url: (await start(base, [benchAuth])).url, paths: byId };
      const basicService = await start(base, PLUGINS);
      // The password is kept by the instance where passwords are on.
      const basicAdmin = createClient({ baseUrl: basicService.url, authorization: { loginId: ADMIN.user, password: ADMIN.password } });
      await ok(basicAdmin.PATCH('/rest/{db}/users/{key}', { params: { path: { db: DB, key: user.id! } }, body: { _type: 'User', password: USER.password } }));
      basic = { url: basicService.url, paths: byId, headers: { authorization: `Basic ${Buffer.from(`${USER.loginId}:${USER.password}`).toString('base64')}` } };
      uncached = { ...bearer, url: (await start({ ...oidc, SERVICE_AUTH_CACHE_TTL: '0' }, PLUGINS)).url };
    }
    for (const side of [bearer, keyed, none, bare, basic, uncached]) {
      if (!side) continue;
      const r = await fetch(side.url + side.paths[0], { headers: side.headers });
      if (r.status !== 200) throw new Error(`${side.url}${side.paths[0]}: ${r.status} ${await r.text()}`);
    }

    // In-process: what the verified-token cache saves, and the user lookup it cannot.
    const jwks = createLocalJWKSet({ keys: [provider.signingKey().publicJwk] });
    const verifyUs = await timeEach(2000, () => jwtVerify(token, jwks, { issuer: provider.issuer, algorithms: ['RS256'] }));
    const db = (await bearerService.service.databases.get(DB))!;
    const directory = createDirectory(bearerService.service.storage.knex, [ADMIN.user]);
    const lookupUs = await timeEach(2000, () => directory.loginTenant(db, USER.loginId, undefined));

    console.log(`${backend}, ${ids.length} schemes; concurrency ${CONNECTIONS}, ${DURATION} s per side`);
    // Every side once before any figure counts: the first comparison must not pay for the JIT alone.
    for (const side of [bearer, keyed, none, bare, basic, uncached]) if (side) await load(side, WARMUP);
    const rows: Row[] = [
      await compare('bearer (warm token) vs no authentication', bearer, none, 0.8),
      await compare('access key vs no authentication', keyed, none, 0.8),
    ];
    if (basic) rows.push(await compare('bearer (warm token) vs basic auth (warm)', bearer, basic));
    if (basic) rows.push(await compare('access key vs basic auth (warm)', keyed, basic));
    rows.push(await compare('bearer (warm token) vs bare SQL handler', bearer, bare));
    rows.push(await compare('access key vs bare SQL handler', keyed, bare));
    if (uncached) rows.push(await compare('bearer, token cache off vs no authentication', uncached, none));

    console.log(`\n${'GET /rest/bench/schemes/<id>'.padEnd(46)}  service  baseline  ratio  target  result`);
    for (const r of rows) {
      const result = r.errors ? `FAIL (${r.errors} errors)` : r.target === undefined ? '-' : r.ratio >= r.target ? 'pass' : 'FAIL';
      console.log(`${r.operation.padEnd(46)}  ${r.service.toFixed(0).padStart(7)}  ${r.baseline.toFixed(0).padStart(8)}  ${r.ratio.toFixed(2).padStart(5)}  ${r.target === undefined ? '     -' : `≥ ${r.target}`}  ${result}`);
    }
    console.log(`\nin-process, one at a time: RS256 token verification ${verifyUs.toFixed(0)} µs; `
      + `user lookup (directory.loginTenant) ${lookupUs.toFixed(0)} µs (both saved by the sign-in cache on a warm token)`);
  } finally {
    for (const close of closers.reverse()) await close();
    if (pgName) await pgAdmin(`drop database if exists ${pgName} with (force)`);
  }
}

try {
  await main();
} finally {
  generator.kill();
}
