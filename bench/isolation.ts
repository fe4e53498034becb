/**
 * A long statement of the query interface must not hold anyone else
 * (issue "Hardening"): while one tenant's administrator runs a statement for
 * --query-seconds, a READ_ONLY user of another tenant GETs an object by its
 * technical key (--rate per second, the sign-in remembered as usual), and
 * users of that tenant sign in afresh (--sign-in-rate per second, each a
 * password check: a user who has not signed in before, half of --users for
 * each phase). Each stream's p99 is measured at rest and during the
 * statement, side by side in the same run, on the embedded database and on
 * PostgreSQL. Target: p99 within 200 ms during the statement, on both.
 *
 * The statement counts through a recursive query that never ends by itself
 * and is stopped by its statementTimeout; embedded, it runs on a copy of the
 * database (runtime/storage/pglite/readers.ts). The GETs start
 * --settle-seconds after it, so that it is running by then.
 *
 *   npx tsx bench/isolation.ts [--backend both|pglite|postgres] [--duration 10] [--rate 50] [--sign-in-rate 5] [--users 100] [--query-seconds 20]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../runtime/config.ts';
import { createService, type Service } from '../runtime/app.ts';
import { PLUGINS } from '../plugins/index.ts';
import { createClient, ok } from '../client/index.ts';
import type { LoadResult } from './load.ts';
import { loadGenerator, pgAdmin, PG_ADMIN_URL, requestLog, runWithHeapFlags } from './common.ts';

runWithHeapFlags();

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'both' },
    duration: { type: 'string', default: '10' },
    rate: { type: 'string', default: '50' },
    'sign-in-rate': { type: 'string', default: '5' },
    users: { type: 'string', default: '100' },
    'query-seconds': { type: 'string', default: '20' },
    'settle-seconds': { type: 'string', default: '3' },
  },
});
const SECONDS = Number(args.duration);
const RATE = Number(args.rate);
const SIGN_IN_RATE = Number(args['sign-in-rate']);
const USERS = Number(args.users);
const QUERY_MS = Number(args['query-seconds']) * 1000;
const SETTLE_MS = Number(args['settle-seconds']) * 1000;
const TARGET_MS = 200;
if (QUERY_MS < SETTLE_MS + SECONDS * 1000 + 2000) throw new Error('--query-seconds must outlast --settle-seconds and --duration by 2 s');
if (USERS < 2 * SIGN_IN_RATE * SECONDS) throw new Error('--users must be at least 2 × --sign-in-rate × --duration: every sign-in is a new user\'s');

const ADMIN = { user: 'admin', password: 'bench-admin-secret' };
const DB = 'iso';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const LONG = `with recursive r(n) as (select 1 union all select n + 1 from r where n < 2000000000) select count(*) as c from r`;

interface Fixture { objectPath: string; reader: Record<string, string>; signIns: Record<string, string>[][]; queryUser: { loginId: string; password: string } }

/** Tenant Other with a scheme, its reader and the users who sign in; an administrator of the default tenant runs the statement. */
async function prepare(url: string): Promise<Fixture> {
  const admin = createClient({ baseUrl: url, authorization: { loginId: ADMIN.user, password: ADMIN.password } });
  const inOther = createClient({ baseUrl: url, authorization: { loginId: ADMIN.user, password: ADMIN.password }, tenant: 'Other' });
  const db = DB;
  await ok(admin.POST('/api/admin/databases', { body: { name: db } }));
  await ok(admin.POST('/rest/{db}/tenants', { params: { path: { db } }, body: { _type: 'Tenant', label: 'Other' } }));
  const scheme = await ok(inOther.POST('/rest/{db}/schemes', { params: { path: { db } }, body: { _type: 'Scheme', label: 'Orders' } }));
  const password = 'bench-user-secret';
  await ok(admin.POST('/rest/{db}/users', { params: { path: { db } }, body: { _type: 'User', loginId: 'ada', accessLevel: 'ADMINISTRATOR', password } }));
  const users = Array.from({ length: 2 * Math.ceil(USERS / 2) + 1 }, (_, i) => ({ _type: 'User' as const, loginId: `user${i}`, accessLevel: 'READ_ONLY' as const, password }));
  // A few at a time: each password is hashed (argon2) once, as in the list write this replaced.
  for (let i = 0; i < users.length; i += 4) {
    await Promise.all(users.slice(i, i + 4).map((body) => ok(inOther.POST('/rest/{db}/users', { params: { path: { db } }, body }))));
  }
  const headers = (user: string) => ({ authorization: basic(user, password), 'service-tenant': 'Other' });
  return {
    objectPath: `/rest/${DB}/schemes/${scheme.id}`,
    reader: headers('user0'),
    // One half signs in at rest, the other during the statement: nobody's sign-in is remembered from before.
    signIns: [users.slice(1, 1 + Math.ceil(USERS / 2)), users.slice(1 + Math.ceil(USERS / 2))].map((half) => half.map((u) => headers(u.loginId))),
    queryUser: { loginId: 'ada', password },
  };
}

const getGenerator = loadGenerator();
const signInGenerator = loadGenerator();

/** Both streams at once, for SECONDS. */
async function measure(url: string, f: Fixture, phase: 0 | 1): Promise<{ get: LoadResult; signIn: LoadResult }> {
  const [get, signIn] = await Promise.all([
    getGenerator.run({ url, paths: [f.objectPath], headers: f.reader, connections: 8, seconds: SECONDS, rate: RATE }),
    signInGenerator.run({ url, paths: [f.objectPath], headers: {}, headerSets: f.signIns[phase], connections: 8, seconds: SECONDS, rate: SIGN_IN_RATE }),
  ]);
  return { get, signIn };
}

interface Row { backend: string; stream: string; rest: LoadResult; during: LoadResult; statementRanMs: number }

async function runBackend(backend: 'pglite' | 'postgres'): Promise<Row[]> {
  const pgName = `bench_iso_${randomBytes(4).toString('hex')}`;
  const storage: Record<string, string> = { SERVICE_DATA_DIR: 'memory://' };
  if (backend === 'postgres') {
    await pgAdmin(`create database ${pgName}`);
    const dbUrl = new URL(PG_ADMIN_URL);
    dbUrl.pathname = `/${pgName}`;
    storage.SERVICE_DATABASE_URL = dbUrl.toString();
  }
  let service: Service | undefined;
  try {
    const log = requestLog();
    service = await createService(loadConfig({
      PORT: '0', SERVICE_ADMIN_USER: ADMIN.user, SERVICE_ADMIN_PASSWORD: ADMIN.password, ...storage,
    }), { plugins: PLUGINS, log });
    const url = `http://127.0.0.1:${await service.listen()}`;
    const f = await prepare(url);
    // Warm-up: the reader's sign-in is remembered, the statement path is compiled.
    await fetch(`${url}${f.objectPath}`, { headers: f.reader });
    const queryClient = createClient({ baseUrl: url, authorization: f.queryUser });
    await ok(queryClient.PUT('/api/{db}/queries/download', { params: { path: { db: DB }, query: { format: 'CSV' } }, body: { sql: 'select count(*) from scheme_view' }, parseAs: 'text' }));
    const rest = await measure(url, f, 0);
    const started = Date.now();
    const statement = fetch(`${url}/api/${DB}/queries/download?format=CSV&statementTimeout=${QUERY_MS}`, {
      method: 'PUT', headers: { authorization: basic(f.queryUser.loginId, f.queryUser.password), 'content-type': 'application/json' }, body: JSON.stringify({ sql: LONG }),
    }).then(async (r) => ({ status: r.status, text: await r.text(), ms: Date.now() - started }));
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const during = await measure(url, f, 1);
    const measuredUntil = Date.now() - started;
    const ended = await statement;
    if (!/statement timeout/.test(ended.text)) throw new Error(`the statement did not run to its timeout: ${ended.status} ${ended.text}`);
    if (ended.ms < measuredUntil) throw new Error(`the statement ended (${ended.ms} ms) before the GETs did (${measuredUntil} ms)`);
    return [
      { backend, stream: `GET by technical key, ${RATE}/s`, rest: rest.get, during: during.get, statementRanMs: ended.ms },
      { backend, stream: `sign-in (password checked), ${SIGN_IN_RATE}/s`, rest: rest.signIn, during: during.signIn, statementRanMs: ended.ms },
    ];
  } finally {
    await service?.close();
    if (backend === 'postgres') await pgAdmin(`drop database if exists ${pgName} with (force)`);
  }
}

async function main() {
  const backends = args.backend === 'both' ? ['pglite', 'postgres'] as const : [args.backend as 'pglite' | 'postgres'];
  const rows: Row[] = [];
  try {
    for (const backend of backends) rows.push(...await runBackend(backend));
  } finally {
    getGenerator.kill();
    signInGenerator.kill();
  }
  console.log(`\nA statement of ${QUERY_MS / 1000} s by one tenant; another tenant's requests, ${SECONDS} s at rest and ${SECONDS} s during it`);
  console.log('backend   stream                                    p50 rest  p99 rest  p50 during  p99 during  ratio  target    result');
  for (const r of rows) {
    const bad = r.rest.non2xx + r.rest.errors + r.during.non2xx + r.during.errors;
    const pass = r.during.p99 <= TARGET_MS && !bad;
    console.log(`${r.backend.padEnd(9)} ${r.stream.padEnd(41)} ${r.rest.p50.toFixed(1).padStart(8)} ${r.rest.p99.toFixed(1).padStart(9)} ${r.during.p50.toFixed(1).padStart(11)} ${r.during.p99.toFixed(1).padStart(11)} ${(r.during.p99 / r.rest.p99).toFixed(2).padStart(6)}  ≤ ${TARGET_MS} ms  ${pass ? 'pass' : `FAIL${bad ? ` (${bad} errors)` : ''}`}`);
  }
  mkdirSync('.tmp', { recursive: true });
  writeFileSync('.tmp/bench-isolation.json', JSON.stringify(rows, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
