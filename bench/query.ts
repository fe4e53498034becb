/**
 * Query interface benchmark, on PostgreSQL: exports of one large result
 * (`select * from attribute_view`, ROWS rows) as CSV, JSON and XML through
 * the service, side by side in the same run with psql's
 * `COPY (same select) TO STDOUT WITH CSV HEADER` under the same role, views
 * and settings. Both are started by a child process (bench/exporter.ts)
 * and their output is counted by `wc -c`, so the service's process holds
 * only the service; its CPU time per export is reported. psql also runs the
 * very COPY statement the service runs for CSV ("psql fmt", "psql, service
 * SQL"), which formats timestamps and booleans in SQL: what that costs the
 * database is the part of the CSV ratio the service's own code cannot win.
 *
 * Targets (issue "The query interface"): CSV ≤ 1.25 × psql's COPY, JSON and
 * XML ≤ 3 ×; the service's memory (RSS) grows by less than 100 MB during an
 * export; a REST GET keeps its p99 within 2 × of its p99 at rest while an
 * export runs (the load comes from a child process, bench/load.ts).
 *
 * The GETs are measured twice: at a fixed rate (--rate, default 200 GETs/s,
 * open-loop: people browsing while a report runs; the target applies here),
 * and as fast as the service answers (for context: on two cores a saturating
 * load shares the CPU with the export's own database backend, so even psql's
 * COPY, which the service takes no part in, raises that p99 several times).
 *
 * Each export under GETs is measured right after its own measurement at
 * rest, so that a drift of the machine between phases is not read as the
 * export's doing.
 *
 * --formats chooses what is measured under GETs (psql stands for psql's
 * COPY), and with --exports-only which of the service's formats are timed; --nice-client runs curl and psql at nice 19, standing in for
 * clients on another machine (on this two-core box they otherwise take CPU
 * the GETs need).
 *
 * --repeat N measures the GETs at the fixed rate N times, each at rest and
 * then during the exports, and reports the median ratio: on this box the p99
 * of one run is often decided by one clustered stall of the whole machine.
 *
 * An export started while people browse (a request answered in the last
 * BROWSING_MS, runtime/interactive.ts) runs without PostgreSQL's parallel
 * workers; here each starts right after its measurement at rest, as when
 * somebody starts a report while others work. --quiet-start waits
 * BROWSING_MS first, so that the export starts with its parallel plan and
 * the GETs begin 0.5 s later. --fixed-only skips the measurement as fast as
 * answered. --database NAME keeps the PostgreSQL database with its generated rows for
 * the next run with the same name (for trying settings one after another);
 * without it a fresh database is generated and dropped.
 *
 *   npx tsx bench/query.ts [--rows 1000000] [--rounds 2] [--duration 10] [--rate 200] [--repeat 1] [--bulk-rate B] [--exports-only] [--formats psql,CSV,JSON,XML] [--nice-client] [--database NAME] [--fixed-only] [--quiet-start]
 */
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../runtime/config.ts';
import { createService, type Service } from '../runtime/app.ts';
import { schemaOf } from '../runtime/storage/migrations.ts';
import { PLUGINS } from '../plugins/index.ts';
import { createClient, ok } from '../client/index.ts';
import { BROWSING_MS } from '../runtime/interactive.ts';
import { describeSql, resultSql } from '../plugins/query/compose.ts';
import type { LoadResult } from './load.ts';
import { loadGenerator, median, pgAdmin, PG_ADMIN_URL, requestLog, runWithHeapFlags } from './common.ts';
import type { ProcessRun, ProcessRunResult } from './exporter.ts';

runWithHeapFlags();

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '8' },
    rate: { type: 'string', default: '200' },
    'exports-only': { type: 'boolean', default: false },
    formats: { type: 'string', default: 'psql,CSV,JSON,XML' },
    'nice-client': { type: 'boolean', default: false },
    repeat: { type: 'string', default: '1' },
    'bulk-rate': { type: 'string' },
    database: { type: 'string' },
    'fixed-only': { type: 'boolean', default: false },
    'quiet-start': { type: 'boolean', default: false },
  },
});
const ROWS = Number(args.rows);
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const RATE = Number(args.rate);
const REPEAT = Math.max(1, Number(args.repeat));
const FORMATS = args.formats.split(',').filter((f) => ['psql', 'CSV', 'JSON', 'XML'].includes(f));
/** psql's COPY of the service's own CSV statement (timestamps and booleans formatted in SQL). */
const FORMATTED = 'psql fmt';
/** The service's formats timed against psql's COPY: all of them, or with --exports-only those --formats names. */
const EXPORTS = ['CSV', 'JSON', 'XML'].filter((f) => !args['exports-only'] || FORMATS.includes(f));
const ADMIN = { user: 'admin', password: 'bench-secret-1' };
const DB = 'bench';
const ROLE = 'service_readonly';
const SELECT = 'select * from attribute_view';
const AUTH = `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString('base64')}`;

interface Timed { seconds: number; bytes: number }


/** ROWS attributes under 1,000 classifiers of one scheme, written by SQL straight into the objects table. */
async function generate(service: Service, tenant: string) {
  const s = `"${schemaOf(DB)}"`;
  const knex = service.storage.knex;
  const started = performance.now();
  await knex.raw(`insert into ${s}.objects (id, tenant, type, parent_id, list, label, status, version, created_by, date_created, modified_by, date_modified)
    values (gen_random_uuid(), ?, 'Scheme', null, 'schemes', 'Bench', 'WORKING', 1, 'bench', now(), 'bench', now())`, [tenant]);
  await knex.raw(`insert into ${s}.objects (id, tenant, type, parent_id, list, label, status, version, created_by, date_created, modified_by, date_modified)
    select gen_random_uuid(), ?, 'Classifier', (select id from ${s}.objects where label = 'Bench' and type = 'Scheme'), 'classifiers',
           'K' || lpad(n::text, 4, '0'), 'WORKING', 1, 'bench', now(), 'bench', now()
    from generate_series(1, 1000) n`, [tenant]);
  await knex.raw(`insert into ${s}.objects (id, tenant, type, parent_id, list, label, title, description, status, version, created_by, date_created, modified_by, date_modified, props)
    select gen_random_uuid(), ?, 'BusinessAttribute', k.id, 'attributes', 'attribute ' || n, 'Attribute ' || n,
           case when n % 10 = 0 then 'A description with "quotes", commas
and a line break' when n % 3 = 0 then null else 'Plain description of attribute ' || n end,
           case when n % 5 = 0 then 'ACCEPTED' else 'WORKING' end, 1 + n % 4, 'bench', now() - n * interval '1 second', 'bench', now() - n * interval '1 millisecond',
           jsonb_build_object('dataType', 'STRING', 'identifying', n % 7 = 0, 'minCardinality', n % 3, 'maxCardinality', 1 + n % 5,
                              'required', case when n % 2 = 0 then 'MANDATORY' else 'OPTIONAL' end, 'cardinality', 'ONE')
    from generate_series(1, ?) n
    join (select id, row_number() over (order by label) - 1 as i from ${s}.objects where type = 'Classifier') k on k.i = n % 1000`, [tenant, ROWS]);
  // Frozen, with hint bits set and written out: otherwise the first exports write the whole table back,
  // and autovacuum and a checkpoint work through it while the GETs are measured.
  await knex.raw(`vacuum (freeze, analyze) ${s}.objects`);
  await knex.raw('checkpoint');
  console.log(`generated ${ROWS} attributes in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Runs a process in the exporter child (bench/exporter.ts), which counts its output and times it. */
const exporter = fork(fileURLToPath(new URL('./exporter.ts', import.meta.url)), { execArgv: ['--import', 'tsx'] });
let runs = 0;
const running = new Map<number, (r: ProcessRunResult) => void>();
exporter.on('message', (r: ProcessRunResult) => { running.get(r.id)?.(r); running.delete(r.id); });

async function timedProcess(command: string, argv: string[], input?: string): Promise<Timed> {
  const id = ++runs;
  const r = await new Promise<ProcessRunResult>((resolve) => {
    running.set(id, resolve);
    exporter.send({ id, command, argv, input, nice: args['nice-client'] } satisfies ProcessRun);
  });
  if (r.error !== undefined) throw new Error(r.error);
  return { seconds: r.seconds!, bytes: r.bytes! };
}

const SETTINGS = (tenant: string) => `select set_config('search_path', '"${schemaOf(DB)}"', true), set_config('service.tenants', '${tenant}', true),
  set_config('service.language', 'en', true), set_config('TimeZone', 'UTC', true), set_config('DateStyle', 'ISO, YMD', true)`;

/**
 * psql's COPY of the same select, with the same role and settings the service sets; or of `copy`, a whole
 * COPY statement (the one the service runs for CSV, which formats timestamps and booleans).
 */
function psqlCopy(dbUrl: string, tenant: string, copy = `copy (${SELECT}) to stdout with csv header`): Promise<Timed> {
  const script = `begin transaction isolation level repeatable read, read only;
${SETTINGS(tenant)} \\g /dev/null
set local role ${ROLE};
${copy};
rollback;
`;
  return timedProcess('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', dbUrl, '-f', '-'], script);
}

/** The COPY statement the service runs for a CSV export of SELECT (plugins/query/compose.ts). */
async function serviceCsvCopy(dbUrl: string, tenant: string): Promise<string> {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    await client.query('begin read only');
    await client.query(SETTINGS(tenant));
    await client.query(`set local role ${ROLE}`);
    const described = await client.query(describeSql(SELECT));
    return resultSql('CSV', described.fields.map((f) => ({ name: f.name, type: f.dataTypeID })), 'copy', SELECT);
  } finally {
    await client.end();
  }
}

function serviceExport(url: string, format: string, sql = SELECT): Promise<Timed> {
  return timedProcess('curl', ['-sS', '--fail', '-X', 'PUT', '-H', `authorization: ${AUTH}`, '-H', 'content-type: application/json',
    '--data', JSON.stringify({ sql }), `${url}/api/${DB}/queries/download?format=${format}&statementTimeout=0`]);
}

/** The service's memory growth (RSS, MB) while the task runs, sampled every 50 ms. */
async function withMemory<T>(task: () => Promise<T>): Promise<{ result: T; rssMb: number; heapMb: number; cpuSeconds: number; systemSeconds: number }> {
  global.gc?.();
  const cpu = process.cpuUsage();
  const base = process.memoryUsage();
  let rss = 0;
  let heap = 0;
  const sample = setInterval(() => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss - base.rss);
    heap = Math.max(heap, m.heapUsed - base.heapUsed);
  }, 50);
  try {
    const result = await task();
    const used = process.cpuUsage(cpu);
    return { result, rssMb: rss / 2 ** 20, heapMb: heap / 2 ** 20, cpuSeconds: (used.user + used.system) / 1e6, systemSeconds: used.system / 1e6 };
  } finally {
    clearInterval(sample);
  }
}

const generator = loadGenerator();

function load(url: string, paths: string[], seconds: number, rate?: number): Promise<LoadResult> {
  return generator.run({ url, paths, headers: { authorization: AUTH }, connections: CONNECTIONS, seconds, rate });
}

async function main() {
  const kept = args.database;
  if (kept !== undefined && !/^[a-z][a-z0-9_]{0,62}$/.test(kept)) throw new Error(`--database ${kept}: not a database name`);
  const pgName = kept ?? `bench_q_${randomBytes(4).toString('hex')}`;
  const reuse = kept !== undefined && (await pgAdmin(`select 1 from pg_database where datname = '${kept}'`)).length > 0;
  if (!reuse) await pgAdmin(`create database ${pgName}`);
  const dbUrl = new URL(PG_ADMIN_URL);
  dbUrl.pathname = `/${pgName}`;
  let service: Service | undefined;
  try {
    const log = requestLog();
    service = await createService(loadConfig({
      PORT: '0', SERVICE_ADMIN_USER: ADMIN.user, SERVICE_ADMIN_PASSWORD: ADMIN.password, SERVICE_DATABASE_URL: dbUrl.toString(),
      ...(args['bulk-rate'] === undefined ? {} : { SERVICE_QUERY_BULK_RATE: args['bulk-rate'] }),
    }), { plugins: PLUGINS, log });
    const url = `http://127.0.0.1:${await service.listen()}`;
    if (!reuse) {
      const admin = createClient({ baseUrl: url, authorization: { loginId: ADMIN.user, password: ADMIN.password } });
      await ok(admin.POST('/api/admin/databases', { body: { name: DB } }));
    }
    const tenant = (await service.databases.get(DB))!.defaultTenant;
    if (!reuse) await generate(service, tenant);
    else console.log(`reusing ${pgName}`);

    // Warm-up: the first sign-in verifies the password (argon2) and PostgreSQL reads the table into its cache.
    await serviceExport(url, 'CSV', `${SELECT} limit 10`);
    await psqlCopy(dbUrl.toString(), tenant);

    // Exports, alternating with psql, ROUNDS times; the best of each.
    const best: Record<string, Timed & { rssMb: number; heapMb: number; cpuSeconds: number; systemSeconds: number }> = {};
    const keep = (name: string, t: Timed, rssMb = 0, heapMb = 0, cpuSeconds = 0, systemSeconds = 0) => {
      const b = best[name];
      best[name] = {
        seconds: Math.min(b?.seconds ?? Infinity, t.seconds), bytes: t.bytes, rssMb: Math.max(b?.rssMb ?? 0, rssMb),
        heapMb: Math.max(b?.heapMb ?? 0, heapMb), cpuSeconds: Math.min(b?.cpuSeconds ?? Infinity, cpuSeconds),
        systemSeconds: cpuSeconds < (b?.cpuSeconds ?? Infinity) ? systemSeconds : b!.systemSeconds,
      };
    };
    // psql's COPY of the statement the service runs for CSV: the database's share of the CSV export's time.
    const formattedCopy = await serviceCsvCopy(dbUrl.toString(), tenant);
    for (let round = 0; round < ROUNDS; round++) {
      keep('psql COPY', await psqlCopy(dbUrl.toString(), tenant));
      if (EXPORTS.includes('CSV')) keep(FORMATTED, await psqlCopy(dbUrl.toString(), tenant, formattedCopy));
      for (const format of EXPORTS) {
        const m = await withMemory(() => serviceExport(url, format));
        keep(format, m.result, m.rssMb, m.heapMb, m.cpuSeconds, m.systemSeconds);
      }
    }

    if (args['exports-only']) {
      for (const name of ['psql COPY', ...(EXPORTS.includes('CSV') ? [FORMATTED] : []), ...EXPORTS]) {
        const b = best[name];
        console.log(`${name.padEnd(10)} ${b.seconds.toFixed(2)} s  ratio ${(b.seconds / best['psql COPY'].seconds).toFixed(2)}  RSS +${b.rssMb.toFixed(0)} MB  service CPU ${b.cpuSeconds.toFixed(2)} s (system ${b.systemSeconds.toFixed(2)} s)`);
      }
      return;
    }

    // REST GETs at rest, then while exports run back to back.
    const ids = (await service.storage.knex.raw(`select id from "${schemaOf(DB)}".objects where type = 'BusinessAttribute' order by random() limit 2000`)).rows.map((r: { id: string }) => r.id);
    const paths = ids.map((id: string) => `/rest/${DB}/attributes/${id}`);
    await load(url, paths, 2);
    // The service's event-loop delay tells its own share of a slower GET from the machine's (the export's backend, curl).
    const loopDelay = async <T>(task: () => Promise<T>) => {
      const histogram = monitorEventLoopDelay({ resolution: 5 });
      histogram.enable();
      try {
        return { result: await task(), loopP99Ms: histogram.percentile(99) / 1e6, loopMaxMs: histogram.max / 1e6 };
      } finally {
        histogram.disable();
      }
    };
    // The service remembers a password sign-in for SERVICE_AUTH_CACHE_TTL (10 s). A phase that starts after a
    // longer pause (the last export of the phase before can take 16 s) would find it expired, and its first GETs
    // would wait for one argon2 verification: a cost of Basic authentication after idling, not of the export.
    const signIn = async () => {
      const r = await fetch(`${url}${paths[0]}`, { headers: { authorization: AUTH } });
      if (r.status !== 200) throw new Error(`GET ${paths[0]}: ${r.status}`);
      await r.arrayBuffer();
    };
    type Measured = { rest: Record<string, LoadResult>; restLoop: Record<string, number>; busy: Record<string, LoadResult>; busyLoop: Record<string, number> };
    const measure = async (rate?: number): Promise<Measured> => {
      const m: Measured = { rest: {}, restLoop: {}, busy: {}, busyLoop: {} };
      // psql's COPY too: what the same export costs a GET when the service does nothing for it.
      for (const format of FORMATS) {
        await signIn();
        const atRest = await loopDelay(() => load(url, paths, DURATION, rate));
        m.rest[format] = atRest.result;
        m.restLoop[format] = atRest.loopP99Ms;
        atRest.result.serviceLoopMaxMs = atRest.loopMaxMs;
        if (args['quiet-start']) await new Promise((r) => setTimeout(r, BROWSING_MS + 500));
        let exporting = true;
        const once = () => (format === 'psql' ? psqlCopy(dbUrl.toString(), tenant) : serviceExport(url, format));
        const took: number[] = [];
        const exports = (async () => { while (exporting) took.push((await once()).seconds); })();
        await new Promise((r) => setTimeout(r, 500));
        if (process.env.BENCH_TRACE) console.error(`${new Date().toISOString()} GETs at ${rate ?? 'full'} rate during ${format}`);
        await signIn();
        const measured = await loopDelay(() => load(url, paths, DURATION, rate));
        m.busy[format] = measured.result;
        m.busyLoop[format] = measured.loopP99Ms;
        measured.result.serviceLoopMaxMs = measured.loopMaxMs;
        exporting = false;
        await exports;
        // The first export ran under the GETs from start to end (an export takes less than DURATION).
        measured.result.exportSeconds = took[0];
      }
      return m;
    };
    const fixedRates: Measured[] = [];
    for (let i = 0; i < REPEAT; i++) fixedRates.push(await measure(RATE));
    const saturated = args['fixed-only'] ? undefined : await measure();

    const copy = best['psql COPY'];
    const rows = [
      { name: 'psql COPY (CSV)', ...copy, ratio: 1, target: null },
      { name: 'psql, service SQL', ...best[FORMATTED], ratio: best[FORMATTED].seconds / copy.seconds, target: null },
      ...['CSV', 'JSON', 'XML'].map((f) => ({ name: `service ${f}`, ...best[f], ratio: best[f].seconds / copy.seconds, target: f === 'CSV' ? 1.25 : 3 })),
    ];
    console.log(`\n${ROWS} rows of attribute_view (best of ${ROUNDS})`);
    console.log('export              seconds        MB   ratio  target  RSS +MB  heap +MB  result');
    for (const r of rows) {
      const pass = r.target === null ? '' : r.ratio <= r.target && r.rssMb < 100 ? 'pass' : 'FAIL';
      console.log(`${r.name.padEnd(18)} ${r.seconds.toFixed(2).padStart(8)} ${(r.bytes / 2 ** 20).toFixed(0).padStart(9)} ${r.ratio.toFixed(2).padStart(7)} ${(r.target === null ? '-' : `≤ ${r.target}`).padStart(7)} ${r.rssMb.toFixed(0).padStart(8)} ${r.heapMb.toFixed(0).padStart(9)}  ${pass}`);
    }
    const ratioOf = (m: Measured, format: string) => m.busy[format].p99 / Math.max(m.rest[format].p99, 1);
    const table = (title: string, m: Measured, target: boolean) => {
      console.log(`\nREST GET by technical key, ${title} (${CONNECTIONS} connections, ${DURATION} s)`);
      console.log('while               req/s    p50 ms   p99 ms   p99 ratio  target  loop p99 ms  result');
      const line = (name: string, r: LoadResult, loop: number, ratio?: number) => {
        const verdict = ratio === undefined ? '' : r.non2xx + r.errors > 0 ? 'FAIL (errors)' : !target ? '-' : ratio <= 2 ? 'pass' : 'FAIL';
        console.log(`${name.padEnd(18)} ${(r.ok / r.seconds).toFixed(0).padStart(6)} ${r.p50.toFixed(1).padStart(9)} ${r.p99.toFixed(1).padStart(8)} ${ratio === undefined ? '        -' : ratio.toFixed(2).padStart(11)} ${ratio === undefined || !target ? '      -' : '    ≤ 2'} ${loop.toFixed(1).padStart(12)}  ${verdict}`);
      };
      const name = (format: string) => (format === 'psql' ? 'psql COPY' : `${format} export`);
      for (const format of FORMATS) {
        line(`at rest`, m.rest[format], m.restLoop[format]);
        line(name(format), m.busy[format], m.busyLoop[format], ratioOf(m, format));
      }
      if (!target) return;
      console.log('slowest GETs (seconds into the run: ms)');
      for (const format of FORMATS) {
        for (const [what, r] of [['at rest', m.rest[format]], [format, m.busy[format]]] as const) {
          console.log(`  ${what.padEnd(8)} ${(r.worst ?? []).map(([at, ms]) => `${at}: ${ms}`).join(', ')}  (loop max: service ${r.serviceLoopMaxMs?.toFixed(0)} ms, load generator ${r.loopMaxMs?.toFixed(0)} ms)${r.exportSeconds ? `; the export took ${r.exportSeconds.toFixed(1)} s meanwhile` : ''}`);
          for (const e of r.errorSamples ?? []) console.log(`           failed: ${e}`);
        }
      }
    };
    for (const [i, m] of fixedRates.entries()) table(`${RATE} per second${REPEAT > 1 ? `, run ${i + 1} of ${REPEAT}` : ''}`, m, true);
    if (REPEAT > 1) {
      // Each run measures at rest right before its exports; the median ratio tells the export from the machine's hiccups.
      console.log(`
REST GET p99 ratio at ${RATE} per second, ${REPEAT} runs: each run, and the median (target ≤ 2)`);
      for (const format of FORMATS) {
        const ratios = fixedRates.map((m) => ratioOf(m, format));
        const middle = median(ratios);
        console.log(`${(format === 'psql' ? 'psql COPY' : `${format} export`).padEnd(18)} ${ratios.map((r) => r.toFixed(2).padStart(6)).join('')}   median ${middle.toFixed(2)}  ${format === 'psql' ? '' : middle <= 2 ? 'pass' : 'FAIL'}`);
      }
    }
    if (saturated) table('as fast as answered (context)', saturated, false);

    const file = fileURLToPath(new URL('../.tmp/bench-query.json', import.meta.url));
    mkdirSync(fileURLToPath(new URL('../.tmp/', import.meta.url)), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), commit: commit(), rows: ROWS, niceClient: args['nice-client'], exports: rows, rest: { rate: RATE, fixedRates, saturated } }, null, 2)}\n`);
    console.log(`\nwritten to ${file}`);
  } finally {
    await service?.close();
    if (kept === undefined) await pgAdmin(`drop database if exists ${pgName} with (force)`);
  }
}

function commit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

try {
  await main();
} finally {
  generator.kill();
  exporter.kill();
}
