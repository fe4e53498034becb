/**
 * The upload side of issue 20's targets, against the service on a real port
 * (bench/transfer.ts measures downloads and uploads together; this one only
 * the upload, several times per backend, which is what a change of the
 * upload needs):
 *
 * 1. loads `--objects` objects into the database `bench` (bench/dataset.ts:
 *    one scheme `S`, plus the classifier `Big` with 10,000 attributes) and
 *    downloads the scheme as JSON;
 * 2. `--runs` times: 2,000 REST GETs by technical key of `bench` at rest, then
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
 *   npx tsx bench/transfer-upload.ts [--backend postgres|pglite|both] [--objects 100000] [--runs 2] [--profile dir]
 *
 * `--profile <dir>` runs the first upload of each backend under V8's CPU
 * profiler and its sampling heap profiler and writes
 * `<dir>/upload-<backend>.cpuprofile` and `.heapprofile` (the profilers
 * slow it: its figures are not comparable with the others').
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ok } from '../client/index.ts';
import { GETS_AT_REST, p99, profiled, runWithHeapFlags, timedGets, transferSetup, uploadJson, withMemory } from './common.ts';

runWithHeapFlags();

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'both' },
    objects: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '2' },
    profile: { type: 'string' },
  },
});
const OBJECTS = Number(args.objects);
const RUNS = Number(args.runs);
const ADMIN = { user: 'bench-admin', password: 'bench-admin-password-1' };

interface Run { created: number; seconds: number; growthMb: number; restP99: number; duringP99: number; duringMax: number; gets: number; load: string }

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

async function runBackend(backend: string): Promise<Run[]> {
  const { hosted, authorization, upload, paths } = await transferSetup(backend, ADMIN, OBJECTS, (l) => console.log(l));
  const { base, client } = hosted;
  try {
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      const db = `target${i}`;
      await ok(client.POST('/api/admin/databases', { body: { name: db } }));
      await timedGets(base, authorization, paths, 50);
      const rest = await timedGets(base, authorization, paths, GETS_AT_REST);
      // `--profile <dir>`: the first run's upload under the CPU and heap profilers (common.ts: profiled).
      const measured = await profiled(i === 0 ? args.profile : undefined, `upload-${backend}`, () => withMemory(async () => {
        const finished = uploadJson(base, authorization, db, upload);
        const during = await timedGets(base, authorization, paths, finished);
        return { ...(await finished), during };
      }));
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
