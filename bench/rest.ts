/**
 * REST read benchmark: the service against a bare Koa handler that runs the
 * equivalent single SQL query on the same knex pool, in the same process.
 * Every figure is a ratio measured in the same run, so that a noisy machine
 * moves both sides alike. See bench/README.md.
 *
 *   npx tsx bench/rest.ts [--backend postgres|pglite|both] [--objects 10000[,100000]] [--duration 10] [--dataset foundation|spread]
 *
 * `--dataset spread` spreads the objects over the second edition's types
 * (bench/dataset-spread.ts) and reads objects of every type; the default,
 * `foundation`, is the foundation issue's scheme of classifiers and
 * attributes (bench/dataset.ts).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Koa from 'koa';
import type { Knex } from 'knex';
import { loadConfig } from '../runtime/config.ts';
import { createService } from '../runtime/app.ts';
import { schemaOf } from '../runtime/storage/migrations.ts';
import { PLUGINS } from '../plugins/index.ts';
import { benchAuthPlugin } from './bench-auth.ts';
import { createClient, ok } from '../client/index.ts';
import { loadDataset } from './dataset.ts';
import { loadSpreadDataset, type KeyPath, type Reachable } from './dataset-spread.ts';
import { analyzeAfterLoad, compareSides, listen, loadGenerator, pgAdmin, PG_ADMIN_URL, requestLog, runWithHeapFlags, type Side } from './common.ts';

runWithHeapFlags();

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'both' },
    objects: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    dataset: { type: 'string', default: 'foundation' },
    profile: { type: 'string' },
  },
});
if (args.dataset !== 'foundation' && args.dataset !== 'spread') throw new Error('--dataset must be foundation or spread');
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const ADMIN = { user: 'admin', password: 'bench-secret-1' };
const DB = 'bench';
const SAMPLE = 10_000;

interface Row {
  operation: string;
  service: number;
  baseline: number | null;
  ratio: number | null;
  target: number;
  pass: boolean;
  errors?: number;
  latencyMs?: { service: [number, number]; baseline: [number, number] };
  cpuMicros?: { service: number; baseline: number };
}
interface Run { backend: string; objects: number; dataset: string; counts?: Record<string, number>; loadSeconds: number; rows: Row[] }

const generator = loadGenerator();

async function compare(operation: string, target: number, service: Side, baseline: Side): Promise<Row> {
  const c = await compareSides(generator, service, baseline, { warmupSeconds: WARMUP, seconds: DURATION, connections: CONNECTIONS });
  return {
    operation, service: c.service, baseline: c.baseline, ratio: c.ratio, target, pass: c.ratio >= target && c.errors === 0,
    errors: c.errors, latencyMs: c.latencyMs, cpuMicros: c.cpuMicros,
  };
}

/**
 * `--profile <dir>`: the service side of a comparison once more, `DURATION` seconds under V8's CPU profiler (only the
 * service answers meanwhile), written to `<dir>/<name>.cpuprofile` for Chrome DevTools' Performance tab.
 */
async function profileSide(name: string, side: Side): Promise<void> {
  if (!args.profile) return;
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const r = await generator.run({ url: side.url, paths: side.paths, headers: side.headers ?? {}, connections: CONNECTIONS, seconds: DURATION });
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(args.profile, { recursive: true });
    const file = `${args.profile}/${name}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    console.log(`  profile of ${name} (${Math.round(r.ok / r.seconds)} req/s while profiled): ${file}`);
  } finally {
    session.disconnect();
  }
}

/** The bare handler: /id/<uuid> and /path/<scheme>/<list>/<key>/<list>/<key>/<list>/<key>, one SQL each. */
function baselineApp(knex: Knex, db: string): Koa {
  const s = `"${schemaOf(db)}"`;
  const byPath = `select l3.* from ${s}.objects l0
    join ${s}.objects l1 on l1.parent_id = l0.id and l1.list = ? and l1.label = ?
    join ${s}.objects l2 on l2.parent_id = l1.id and l2.list = ? and l2.label = ?
    join ${s}.objects l3 on l3.parent_id = l2.id and l3.list = ? and l3.label = ?
    where l0.parent_id is null and l0.list = 'schemes' and l0.label = ?`;
  const app = new Koa();
  app.use(async (ctx) => {
    const [kind, ...keys] = ctx.path.slice(1).split('/').map(decodeURIComponent);
    const r = kind === 'id'
      ? await knex.raw(`select * from ${s}.objects where id = ?`, keys)
      : await knex.raw(byPath, [...keys.slice(1), keys[0]]);
    if (r.rows[0]) ctx.body = r.rows[0];
    else ctx.status = 404;
  });
  return app;
}

/** What a comparison reads: objects by technical key, and 4-level business-key paths. */
interface Reads { byId: Reachable[]; paths: KeyPath[]; counts?: Record<string, number>; loadSeconds: number; listPut: { objects: number; seconds: number } }

async function loadReads(client: ReturnType<typeof createClient>, objects: number): Promise<Reads> {
  if (args.dataset === 'spread') {
    const data = await loadSpreadDataset(client, DB, objects);
    return { byId: data.objects, paths: data.paths, counts: data.counts, loadSeconds: data.loadSeconds, listPut: data.listPut };
  }
  const data = await loadDataset(client, DB, objects);
  return {
    byId: data.attributes.map((a) => ({ id: a.id, list: 'attributes' })),
    paths: data.attributes.filter((a) => a.keys).map(({ keys }) => ({ scheme: keys![0], steps: [['collections', keys![1]], ['classifiers', keys![2]], ['attributes', keys![3]]] })),
    loadSeconds: data.loadSeconds, listPut: data.listPut,
  };
}

const pathOf = (p: KeyPath) => [p.scheme, ...p.steps.flat()].map(encodeURIComponent);

function sample<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, SAMPLE);
}

async function runOne(backend: string, objects: number): Promise<Run> {
  const pgName = backend === 'postgres' ? `bench_${randomBytes(4).toString('hex')}` : undefined;
  const closers: (() => Promise<void>)[] = [];
  if (pgName) await pgAdmin(`create database ${pgName}`);
  try {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${pgName}`;
    // SERVICE_* settings of the caller (e.g. SERVICE_AUTH_CACHE_TTL) reach the service; storage is the bench's own.
    const passed = Object.entries(process.env).filter(([k]) => k.startsWith('SERVICE_') && !/DATABASE_URL|DATA_DIR/.test(k));
    const env = {
      ...Object.fromEntries(passed),
      PORT: '0', SERVICE_ADMIN_USER: ADMIN.user, SERVICE_ADMIN_PASSWORD: ADMIN.password, SERVICE_LOG_LEVEL: 'info',
      ...(pgName ? { SERVICE_DATABASE_URL: url.toString() } : { SERVICE_DATA_DIR: 'memory://' }),
    };
    // Request logging stays on, as in production, but goes nowhere.
    const log = requestLog();
    let tenant = '';
    const benchAuth = benchAuthPlugin(() => tenant);
    // The bench driver joins the one service, on both backends: authenticated and unauthenticated GETs then differ in
    // their authentication alone. (A second instance with only the bench driver, as on PostgreSQL before, also differed
    // in its plugins, connections and caches; its ratio moved by 0.1 between runs for reasons of its own.)
    const service = await createService(loadConfig(env), { plugins: [...PLUGINS, benchAuth], log });
    closers.push(() => service.close());
    const serviceUrl = `http://127.0.0.1:${await service.listen()}`;
    const auth = { authorization: `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString('base64')}` };
    const client = createClient({ baseUrl: serviceUrl, authorization: { loginId: ADMIN.user, password: ADMIN.password } });
    await ok(client.POST('/api/admin/databases', { body: { name: DB } }));
    tenant = (await service.databases.get(DB))!.defaultTenant;
    console.log(`${backend}, ${objects} objects (${args.dataset}): loading…`);
    const data = await loadReads(client, objects);
    console.log(`  loaded in ${data.loadSeconds.toFixed(1)} s; list PUT of ${data.listPut.objects} in ${data.listPut.seconds.toFixed(2)} s`);
    if (data.counts) console.log(`  ${data.byId.length} objects: ${Object.entries(data.counts).map(([list, count]) => `${list} ${count}`).join(', ')}`);
    await analyzeAfterLoad(service);

    const baselineUrl = await listen(baselineApp(service.storage.knex, DB), closers);
    const reachable = sample(data.byId);
    const keys = sample(data.paths).map(pathOf);
    const byId = reachable.map((o) => `/rest/${DB}/${o.list}/${o.id}`);
    const listPutRate = data.listPut.objects / data.listPut.seconds;
    const rows: Row[] = [
      { operation: 'list PUT 10,000 attributes (objects/s)', service: listPutRate, baseline: null, ratio: null, target: 2000, pass: listPutRate >= 2000 },
      await compare('GET by technical key vs bare SQL', 0.7,
        { url: serviceUrl, paths: byId, headers: auth },
        { url: baselineUrl, paths: reachable.map((o) => `/id/${o.id}`) }),
      await compare('GET by 4-level path vs bare SQL join', 0.6,
        { url: serviceUrl, paths: keys.map(([s, ...steps]) => `/rest/${DB}/schemes/${s}/${steps.join('/')}`), headers: auth },
        { url: baselineUrl, paths: keys.map((k) => `/path/${k.join('/')}`) }),
      await compare('GET by technical key, basic auth vs none', 0.9,
        { url: serviceUrl, paths: byId, headers: auth },
        { url: serviceUrl, paths: byId }),
    ];
    await profileSide('get-by-key', { url: serviceUrl, paths: byId, headers: auth });
    return { backend, objects, dataset: args.dataset!, counts: data.counts, loadSeconds: data.loadSeconds, rows };
  } finally {
    for (const close of closers.reverse()) await close();
    if (pgName) await pgAdmin(`drop database if exists ${pgName} with (force)`);
  }
}

/** Which code was measured: the commit and the files changed since (the tree may hold uncommitted work). */
function codeState() {
  const git = (...a: string[]) => execFileSync('git', a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { commit: git('rev-parse', '--short', 'HEAD'), changed: git('status', '--porcelain', '--', 'runtime', 'plugins', 'generated').split('\n').filter(Boolean) };
  } catch {
    return { commit: 'unknown', changed: [] };
  }
}

const num = (x: number | null, digits = 0) => (x === null ? '-' : x.toFixed(digits));

function printTable(title: string, header: string[], lines: string[][]) {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (l: string[]) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(`\n${title}\n${fmt(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const l of lines) console.log(fmt(l));
}

/** PGlite figures over PostgreSQL's, for each operation and size run on both. */
function crossBackend(runs: Run[]) {
  const out: { objects: number; operation: string; service: number; baseline: number | null }[] = [];
  for (const lite of runs.filter((r) => r.backend === 'pglite')) {
    const pgRun = runs.find((r) => r.backend === 'postgres' && r.objects === lite.objects);
    if (!pgRun) continue;
    lite.rows.forEach((row, i) => {
      const other = pgRun.rows[i];
      out.push({
        objects: lite.objects, operation: row.operation, service: row.service / other.service,
        baseline: row.baseline !== null && other.baseline !== null ? row.baseline / other.baseline : null,
      });
    });
  }
  return out;
}

async function main() {
  const backends = args.backend === 'both' ? ['postgres', 'pglite'] : [args.backend!];
  if (backends.some((b) => b !== 'postgres' && b !== 'pglite')) throw new Error('--backend must be postgres, pglite or both');
  const code = codeState();
  const runs: Run[] = [];
  for (const objects of args.objects!.split(',').map(Number)) {
    for (const backend of backends) runs.push(await runOne(backend, objects));
  }
  for (const run of runs) {
    printTable(`${run.backend}, ${run.objects} objects, ${run.dataset} dataset (concurrency ${CONNECTIONS}, ${DURATION} s per side)`,
      ['operation', 'service', 'baseline', 'ratio', 'target', 'result', 'CPU µs/req'],
      run.rows.map((r) => [r.operation, num(r.service), num(r.baseline), num(r.ratio, 2), `≥ ${r.target}`,
        r.pass ? 'pass' : r.errors ? `FAIL (${r.errors} errors)` : 'FAIL',
        r.cpuMicros ? `${num(r.cpuMicros.service)} / ${num(r.cpuMicros.baseline)}` : '-']));
  }
  const cross = crossBackend(runs);
  if (cross.length) {
    printTable('PGlite / PostgreSQL', ['operation', 'objects', 'service', 'baseline'],
      cross.map((c) => [c.operation, String(c.objects), num(c.service, 2), num(c.baseline, 2)]));
  }
  const file = fileURLToPath(new URL('../.tmp/bench-rest.json', import.meta.url));
  mkdirSync(fileURLToPath(new URL('../.tmp/', import.meta.url)), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), code, connections: CONNECTIONS, duration: DURATION, runs, pgliteOverPostgres: cross }, null, 2)}\n`);
  console.log(`\nwritten to ${file}`);
}

try {
  await main();
} finally {
  generator.kill();
}
