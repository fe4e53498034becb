/**
 * The upload side of issue 20's targets, against the service on a real port
 * (bench/transfer.ts measures downloads and uploads together; this one only
 * the upload, several times per backend, which is what a change of the
 * upload needs):
 *
 * 1. loads `--objects` objects into the database `bench` (bench/dataset.ts:
 *    one scheme `S`, plus the classifier `Big` with 10,000 attributes) and
 *    downloads the scheme as JSON;
 * 2. `--runs` times: 300 REST GETs by technical key of `bench` at rest, then
 *    the upload of that file (MERGE) into the empty scheme `S` of a new
 *    database, with GETs one after another until the job has COMPLETED.
 *
 * Per run: objects per second from the PUT until COMPLETED (target ≥ 5,000
 * at 100,000 objects on PostgreSQL), the growth of the service's resident
 * memory (sampled every 50 ms; target < 300 MB), and a GET's p99 during the
 * upload against its p99 at rest (target ≤ 2 on PostgreSQL; on PGlite a
 * ratio to report), and the slowest GET during the upload (the embedded
 * database's one connection is the upload's while it writes: a GET then
 * waits for the whole write, whatever the p99). Each line carries the load
 * averages at its end: the machine is shared.
 *
 *   npx tsx bench/transfer-upload.ts [--backend postgres|pglite|both] [--objects 100000] [--runs 2]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ok } from '../client/index.ts';
import { loadDataset } from './dataset.ts';
import { analyzeAfterLoad, hostService, runWithHeapFlags } from './common.ts';

runWithHeapFlags();

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'both' },
    objects: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '2' },
  },
});
const OBJECTS = Number(args.objects);
const RUNS = Number(args.runs);
const ADMIN = { user: 'bench-admin', password: 'bench-admin-password-1' };
const AUTH = `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString('base64')}`;

interface Run { created: number; seconds: number; growthMb: number; restP99: number; duringP99: number; duringMax: number; gets: number; load: string }

/** Peak growth of this process's resident memory while the task runs, in MB. */
async function withMemory<T>(task: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
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

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)];
}

/** GETs one after another until `until` settles (or `count` of them); each one's milliseconds. */
async function gets(base: string, paths: string[], until: Promise<unknown> | number): Promise<number[]> {
  const times: number[] = [];
  let done = false;
  if (typeof until !== 'number') void until.then(() => { done = true; }, () => { done = true; });
  for (let i = 0; typeof until === 'number' ? i < until : !done; i++) {
    const started = performance.now();
    const r = await fetch(`${base}${paths[i % paths.length]}`, { headers: { authorization: AUTH } });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`GET ${paths[i % paths.length]}: ${r.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

/** Uploads the file into the scheme S of `db` and waits for the job; seconds from the PUT until it COMPLETED. */
async function upload(base: string, db: string, file: Uint8Array<ArrayBuffer>): Promise<{ seconds: number; created: number }> {
  const started = performance.now();
  const form = new FormData();
  form.append('file', new Blob([file]), 'S.json');
  const r = await fetch(`${base}/api/${db}/schemes/S/upload?operation=MERGE`, { method: 'PUT', body: form, headers: { authorization: AUTH } });
  if (r.status !== 202) throw new Error(`upload: ${r.status} ${await r.text()}`);
  const { id } = await r.json() as { id: string };
  for (;;) {
    const s = await fetch(`${base}/api/${db}/jobs/${id}/statistics`, { headers: { authorization: AUTH } });
    const body = await s.json() as { status: string; statistics?: { created?: number } };
    if (s.status === 200) {
      if (body.status !== 'COMPLETED') {
        const logs = await (await fetch(`${base}/api/${db}/jobs/${id}/logs`, { headers: { authorization: AUTH } })).text();
        throw new Error(`upload job ${body.status}: ${JSON.stringify(body)} ${logs.slice(0, 2000)}`);
      }
      return { seconds: (performance.now() - started) / 1000, created: body.statistics?.created ?? 0 };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

async function runBackend(backend: string): Promise<Run[]> {
  // The JSON of 100,000 objects is about 31 MB: over the default limit of 10 MiB.
  const hosted = await hostService(backend, ADMIN, { SERVICE_BODY_LIMIT: String(256 * 1024 * 1024) });
  const { service, base, client } = hosted;
  try {
    await ok(client.POST('/api/admin/databases', { body: { name: 'bench' } }));
    console.log(`${backend}, ${OBJECTS} objects: loading… (load ${load()})`);
    const data = await loadDataset(client, 'bench', OBJECTS);
    await analyzeAfterLoad(service);
    const file = Buffer.from(await (await fetch(`${base}/api/bench/schemes/S/download?format=JSON`, { headers: { authorization: AUTH } })).arrayBuffer());
    console.log(`  loaded in ${data.loadSeconds.toFixed(1)} s; the file has ${(file.length / 1e6).toFixed(1)} MB`);
    const paths = data.attributes.slice(0, 500).map((a) => `/rest/bench/attributes/${a.id}`);
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      const db = `target${i}`;
      await ok(client.POST('/api/admin/databases', { body: { name: db } }));
      await gets(base, paths, 50);
      const rest = await gets(base, paths, 300);
      const measured = await withMemory(async () => {
        const finished = upload(base, db, file);
        const during = await gets(base, paths, finished);
        return { ...(await finished), during };
      });
      const run: Run = {
        created: measured.result.created, seconds: measured.result.seconds, growthMb: measured.growthMb,
        restP99: p99(rest), duringP99: p99(measured.result.during), duringMax: Math.max(...measured.result.during), gets: measured.result.during.length, load: load(),
      };
      runs.push(run);
      console.log(`  run ${i + 1}: ${line(run)}`);
    }
    return runs;
  } finally {
    await hosted.close();
  }
}

function line(r: Run): string {
  return `${r.created} objects in ${r.seconds.toFixed(1)} s = ${(r.created / r.seconds).toFixed(0)} objects/s; memory +${r.growthMb.toFixed(0)} MB; `
    + `GET p99 ${r.duringP99.toFixed(1)} ms during (${r.gets} GETs, slowest ${r.duringMax.toFixed(0)} ms) / ${r.restP99.toFixed(1)} ms at rest = ${(r.duringP99 / r.restP99).toFixed(2)}; load ${r.load}`;
}

async function main() {
  const backends = args.backend === 'both' ? ['postgres', 'pglite'] : [args.backend!];
  const results = new Map<string, Run[]>();
  for (const backend of backends) results.set(backend, await runBackend(backend));
  for (const [backend, runs] of results) {
    console.log(`\n${backend}, ${OBJECTS} objects (targets: >= 5000 objects/s, < 300 MB, p99 ratio <= 2)`);
    for (const r of runs) console.log(`  ${line(r)}`);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
