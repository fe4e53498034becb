/** Pieces the benchmarks share. */
import { fork, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import pg from 'pg';
import type { LoadJob, LoadResult } from './load.ts';
import { openSync } from 'node:fs';
import { loadavg } from 'node:os';
import pino, { type Logger } from 'pino';
import { missingHeapFlags } from '../runtime/heap.ts';
import { openLogDestination } from '../runtime/shutdown.ts';

/**
 * The benchmarks host the service in their own process: it must run with the
 * V8 flags `npm start` gives it (runtime/heap.ts). Started without them, the
 * benchmark runs itself again with them and exits with that run's status;
 * call this before starting anything.
 */
export function runWithHeapFlags(): void {
  const missing = missingHeapFlags();
  if (!missing.length) return;
  const run = spawnSync(process.execPath, [...missing, ...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}

/**
 * The service's log as `npm start` writes it (runtime/main.ts: at `info`, one line per request, buffered and
 * asynchronous, runtime/shutdown.ts), into /dev/null. Until 2026-11 the benchmarks used pino.destination() there,
 * which writes each line on its own: a write system call per request that the service in production does not make
 * (7 % of a warm GET's CPU in a profile).
 */
export function requestLog(): Logger {
  return pino({ level: 'info', base: undefined }, openLogDestination(openSync('/dev/null', 'w')));
}

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
export async function pgAdmin(sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** One side of a comparison: where to send GETs, which paths (one picked per request), which headers. */
export interface Side { url: string; paths: string[]; headers?: Record<string, string> }

/** The load generator (bench/load.ts) in a child process, so that it shares no event loop with the service. */
export function loadGenerator() {
  const child = fork(fileURLToPath(new URL('./load.ts', import.meta.url)), { execArgv: ['--import', 'tsx'] });
  return {
    run(job: LoadJob): Promise<LoadResult> {
      return new Promise((resolve) => {
        child.once('message', (r) => resolve(r as LoadResult));
        child.send(job);
      });
    },
    kill: () => child.kill(),
  };
}

export interface Compared {
  /** 2xx answers per second. */
  service: number;
  baseline: number;
  ratio: number;
  /** Non-2xx answers and failed requests, both sides. */
  errors: number;
  /** The worst [p50, p99] of each side's rounds, ms. */
  latencyMs: { service: [number, number]; baseline: [number, number] };
  /**
   * CPU time of this process (user + system, µs) per 2xx answer while each side was measured: what a request costs the
   * service's (or the bare handler's) JavaScript, less moved by other processes on the machine than requests per second.
   * Only meaningful where both sides run in this process and the load generator does not.
   */
  cpuMicros: { service: number; baseline: number };
}

/** Warms both sides, then alternates them twice for half the duration each, as fast as they answer. */
export async function compareSides(
  generator: ReturnType<typeof loadGenerator>, service: Side, baseline: Side,
  o: { warmupSeconds: number; seconds: number; connections: number },
): Promise<Compared> {
  const load = (side: Side, seconds: number) => generator.run({ url: side.url, paths: side.paths, headers: side.headers ?? {}, connections: o.connections, seconds });
  await load(service, o.warmupSeconds);
  await load(baseline, o.warmupSeconds);
  const sum = [{ ok: 0, s: 0, bad: 0, p50: 0, p99: 0, cpu: 0 }, { ok: 0, s: 0, bad: 0, p50: 0, p99: 0, cpu: 0 }];
  for (let round = 0; round < 2; round++) {
    for (const [i, side] of [service, baseline].entries()) {
      const cpu = process.cpuUsage();
      const r = await load(side, o.seconds / 2);
      const used = process.cpuUsage(cpu);
      sum[i].cpu += used.user + used.system;
      sum[i].ok += r.ok;
      sum[i].s += r.seconds;
      sum[i].bad += r.non2xx + r.errors;
      sum[i].p50 = Math.max(sum[i].p50, r.p50);
      sum[i].p99 = Math.max(sum[i].p99, r.p99);
    }
  }
  const [a, b] = sum.map((x) => x.ok / x.s);
  return {
    service: a, baseline: b, ratio: a / b, errors: sum[0].bad + sum[1].bad,
    latencyMs: { service: [sum[0].p50, sum[0].p99], baseline: [sum[1].p50, sum[1].p99] },
    cpuMicros: { service: sum[0].cpu / Math.max(1, sum[0].ok), baseline: sum[1].cpu / Math.max(1, sum[1].ok) },
  };
}

/** A service the benchmark hosts on one backend, with its system administrator's typed client. */
export interface HostedService {
  service: Awaited<ReturnType<typeof import('../runtime/app.ts').createService>>;
  base: string;
  client: import('../client/index.ts').ServiceClient;
  /** Closes what the benchmark added (`closers`, newest first), the service, and drops the PostgreSQL database. */
  close(): Promise<void>;
  closers: (() => Promise<void>)[];
}

/**
 * Starts the service with every shipped plugin on `postgres` (a database of its own on PG_ADMIN_URL) or
 * `pglite` (in memory), request logs going nowhere, with `admin` as system administrator; `settings` are
 * further SERVICE_* settings (e.g. a larger SERVICE_BODY_LIMIT).
 */
export async function hostService(backend: string, admin: { user: string; password: string }, settings: Record<string, string> = {}): Promise<HostedService> {
  const [{ randomBytes }, { createService }, { loadConfig }, { PLUGINS }, { createClient }] = await Promise.all([
    import('node:crypto'), import('../runtime/app.ts'), import('../runtime/config.ts'), import('../plugins/index.ts'), import('../client/index.ts'),
  ]);
  const pgName = backend === 'postgres' ? `bench_${randomBytes(4).toString('hex')}` : undefined;
  if (pgName) await pgAdmin(`create database ${pgName}`);
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    if (pgName) await pgAdmin(`drop database if exists ${pgName} with (force)`);
  };
  try {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${pgName}`;
    const env = {
      PORT: '0', SERVICE_ADMIN_USER: admin.user, SERVICE_ADMIN_PASSWORD: admin.password, SERVICE_LOG_LEVEL: 'info',
      ...(pgName ? { SERVICE_DATABASE_URL: url.toString() } : { SERVICE_DATA_DIR: 'memory://' }),
      ...settings,
    };
    const service = await createService(loadConfig(env), { plugins: PLUGINS, log: requestLog() });
    closers.push(() => service.close());
    const base = `http://127.0.0.1:${await service.listen()}`;
    const client = createClient({ baseUrl: base, authorization: { loginId: admin.user, password: admin.password } });
    return { service, base, client, close, closers };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Planner statistics as a running installation has them a minute after a bulk load: PostgreSQL's autovacuum
 * analyses the tables (the test server runs without it), the embedded database's own timer does there.
 */
export async function analyzeAfterLoad(service: HostedService['service']): Promise<void> {
  if (service.storage.kind === 'postgres') await service.storage.knex.raw('analyze');
  else await (await import('../runtime/storage/pglite/analyze.ts')).analyzeStaleTables(service.storage.knex);
}

/** Peak growth of this process's resident memory while the task runs, in MB (sampled every 50 ms). */
export async function withMemory<T>(task: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
  try {
    const result = await task();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growthMb: (peak - base) / 1e6 };
  } finally {
    clearInterval(timer);
  }
}

/** The middle sample (the mean of the two middle ones of an even count). */
export function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)];
}

/** The model the transfer benchmarks download and upload, loaded into the database `bench` of a hosted service. */
export interface TransferSetup {
  hosted: HostedService;
  data: import('./dataset.ts').Dataset;
  /** The `Authorization` header of the system administrator. */
  authorization: string;
  /**
   * The multipart body that uploads the JSON download of the scheme `S` (uploadBody), made here, before anything is
   * measured: the copy the client sends from is not counted in the service's memory during an upload, nor is its
   * making counted in the time the GETs wait (the benchmark and the service share a process).
   */
  upload: { body: Uint8Array<ArrayBuffer>; contentType: string };
  /** The JSON file's size in bytes. */
  bytes: number;
  /** REST GETs by technical key of 500 attributes of `bench`, for the interactive gate. */
  paths: string[];
}

/**
 * The transfer benchmarks' setup (bench/transfer.ts, bench/transfer-upload.ts): the service on `backend` with a body
 * limit a whole model's JSON fits in (about 31 MB at 100,000 objects, over the default of 10 MiB), the database
 * `bench` loaded with `objects` objects (bench/dataset.ts) and analysed as a running installation would have it, the
 * JSON download of its scheme `S`, and the GET paths. The caller closes `hosted`.
 */
export async function transferSetup(backend: string, admin: { user: string; password: string }, objects: number, log: (line: string) => void): Promise<TransferSetup> {
  const [{ ok }, { loadDataset }] = await Promise.all([import('../client/index.ts'), import('./dataset.ts')]);
  const hosted = await hostService(backend, admin, { SERVICE_BODY_LIMIT: String(256 * 1024 * 1024) });
  try {
    const { service, base, client } = hosted;
    const authorization = `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}`;
    await ok(client.POST('/api/admin/databases', { body: { name: 'bench' } }));
    log(`${backend}, ${objects} objects: loading… (load ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
    const data = await loadDataset(client, 'bench', objects);
    await analyzeAfterLoad(service);
    const r = await fetch(`${base}/api/bench/schemes/S/download?format=JSON`, { headers: { authorization } });
    if (r.status !== 200) throw new Error(`download: ${r.status}`);
    const file = await r.blob();
    log(`  loaded in ${data.loadSeconds.toFixed(1)} s; the file has ${(file.size / 1e6).toFixed(1)} MB`);
    const paths = data.attributes.slice(0, 500).map((a) => `/rest/bench/attributes/${a.id}`);
    return { hosted, data, authorization, upload: await uploadBody(file), bytes: file.size, paths };
  } catch (err) {
    await hosted.close();
    throw err;
  }
}

/**
 * GETs at rest whose p99 the GETs during an upload are held against. Over 300 (the p99 then being the third
 * slowest) it moved between 2.4 and 14 ms from run to run of the same code (2026-11-28), and the ratio with it; a
 * p99 of 2,000 GETs takes a few seconds and stands on the twentieth slowest.
 */
export const GETS_AT_REST = 2000;

/** GETs one after another until `until` settles (or `until` of them); each one's milliseconds. */
export async function timedGets(base: string, authorization: string, paths: string[], until: Promise<unknown> | number): Promise<number[]> {
  const times: number[] = [];
  let done = false;
  if (typeof until !== 'number') void until.then(() => { done = true; }, () => { done = true; });
  for (let i = 0; typeof until === 'number' ? i < until : !done; i++) {
    const started = performance.now();
    const r = await fetch(`${base}${paths[i % paths.length]}`, { headers: { authorization } });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`GET ${paths[i % paths.length]}: ${r.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * The multipart body that uploads `file` as `S.json`, made once before any measuring. Sent as a FormData with the
 * Blob, the client (in the service's process) copied the 30 MB through web streams while the upload was measured:
 * about 300 ms of the event loop in a few long steps, which GETs during the upload waited for as if the service had
 * held them (2026-11-28 profile: undici's pull, Blob's readNext, cloneAsUint8Array).
 */
export async function uploadBody(file: Blob): Promise<{ body: Uint8Array<ArrayBuffer>; contentType: string }> {
  const boundary = `bench-${randomUUID()}`;
  const body = new Uint8Array(Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="S.json"\r\nContent-Type: application/json\r\n\r\n`),
    Buffer.from(await file.arrayBuffer()),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]));
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Uploads the file into the scheme S of `db` (MERGE) and waits for the job; seconds from the PUT until it COMPLETED. */
export async function uploadJson(base: string, authorization: string, db: string, upload: { body: Uint8Array<ArrayBuffer>; contentType: string }): Promise<{ seconds: number; created: number }> {
  const started = performance.now();
  const r = await fetch(`${base}/api/${db}/schemes/S/upload?operation=MERGE`, {
    method: 'PUT', body: upload.body, headers: { authorization, 'content-type': upload.contentType },
  });
  if (r.status !== 202) throw new Error(`upload: ${r.status} ${await r.text()}`);
  const { id } = await r.json() as { id: string };
  for (;;) {
    const s = await fetch(`${base}/api/${db}/jobs/${id}/statistics`, { headers: { authorization } });
    const body = await s.json() as { status: string; statistics?: { created?: number } };
    if (s.status === 200) {
      if (body.status !== 'COMPLETED') {
        const logs = await (await fetch(`${base}/api/${db}/jobs/${id}/logs`, { headers: { authorization } })).text();
        throw new Error(`upload job ${body.status}: ${JSON.stringify(body)} ${logs.slice(0, 2000)}`);
      }
      return { seconds: (performance.now() - started) / 1000, created: body.statistics?.created ?? 0 };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs `task` under V8's CPU profiler (sampling every 200 µs) and its sampling heap profiler, and writes
 * `<dir>/<name>.cpuprofile` and `<dir>/<name>.heapprofile` (Chrome DevTools: Performance and Memory tabs).
 * Without `dir`, just runs it.
 */
export async function profiled<T>(dir: string | undefined, name: string, task: () => Promise<T>): Promise<T> {
  if (!dir) return task();
  const [{ Session }, { mkdirSync, writeFileSync }] = await Promise.all([import('node:inspector/promises'), import('node:fs')]);
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('HeapProfiler.enable');
    // Objects a major collection freed count too: what the task held at its peak, not only what outlived it.
    await session.post('HeapProfiler.startSampling', { samplingInterval: 64 * 1024, includeObjectsCollectedByMajorGC: true } as never);
    await session.post('Profiler.start');
    const result = await task();
    const { profile } = await session.post('Profiler.stop');
    const { profile: heap } = await session.post('HeapProfiler.stopSampling');
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/${name}.cpuprofile`, JSON.stringify(profile));
    writeFileSync(`${dir}/${name}.heapprofile`, JSON.stringify(heap));
    return result;
  } finally {
    session.disconnect();
  }
}
