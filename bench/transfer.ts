/**
 * Metadata upload and download end to end (issue 20's targets), against the
 * service on a real port, on a model of `--objects` objects (bench/dataset.ts:
 * one scheme `S` of collections, classifiers and attributes, plus the
 * classifier `Big` with 10,000 attributes):
 *
 * - JSON download of the whole scheme: time to the last byte, against the
 *   query interface's JSON export of the same objects (`asset_view` rows of
 *   the scheme, run side by side). Targets: under 3 s, and not slower than
 *   the export (ratio download/export ≤ 1). One round of each first, not
 *   counted (SETTLING_ROUNDS), then ROUNDS rounds of the export and the
 *   download side by side: the median of the rounds' ratios, and of the
 *   download's times.
 * - XLSX download of the scheme: under 20 s. XML download: no target (its
 *   time and memory are shown).
 * - The JSON download's first byte: under 1 s (it streams as it reads).
 * - JSON upload (MERGE into an empty scheme of another database) of that
 *   download: objects per second from the PUT until the job has COMPLETED.
 *   Target: at least 5,000 objects/s.
 * - REST GETs while the upload runs: their p99 against the p99 of 2,000
 *   GETs at rest (GETS_AT_REST), by technical key. Target: within 2×. And
 *   the slowest of them, without a target.
 * - The service's resident memory: its growth during each download and
 *   during the upload (sampled every 50 ms). Target: under 300 MB.
 *
 *   npx tsx bench/transfer.ts [--backend postgres|pglite|both] [--objects 100000] [--usages N]
 *
 * `--usages N`: the first N attributes each use the next one (the model then has relations: a download looks
 * below each attribute whether it holds one, download.ts branchTypes). The query export has no usages (asset_view
 * holds assets only), so the ratio download/export then compares N more objects against the same export.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ok } from '../client/index.ts';
import { analyzeAfterLoad, GETS_AT_REST, median, p99, runWithHeapFlags, timedGets, transferSetup, uploadJson, withMemory } from './common.ts';
import { inParallel } from './dataset.ts';

// The service runs with the V8 flags `npm start` gives it (runtime/heap.ts); without them its collections take a download's time.
runWithHeapFlags();

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'both' },
    objects: { type: 'string', default: '100000' },
    usages: { type: 'string', default: '0' },
  },
});
const OBJECTS = Number(args.objects);
const USAGES = Number(args.usages);
// Checked before the load (tens of seconds): `Array(NaN)` would fail later with "Invalid array length".
if (!Number.isSafeInteger(USAGES) || USAGES < 0) {
  console.error(`--usages: a whole number of at least 0, not ${args.usages}`);
  process.exit(2);
}
const ADMIN = { user: 'bench-admin', password: 'bench-admin-password-1' };
const AUTH = `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString('base64')}`;

interface Figure { name: string; value: string; target: string; pass?: boolean }

/**
 * Rounds of the export and the download run before any is measured. Right after the load, the first rounds of
 * both took up to half again as long as the later ones, and by different amounts (2026-11-29, 8 rounds each in
 * turn: export 1.13 and 0.91 s, then 0.70-0.78; download 1.20 and 1.17, then 0.65-0.72): the database's first
 * reads of the rows just written, and the service's code not yet optimised. With the better of the first two
 * rounds, that start decided the ratio.
 */
const SETTLING_ROUNDS = 1;

/**
 * Rounds of the export and the download measured, each pair side by side. The ratio is the median of the pairs'
 * ratios: the better of each side (as until 2026-11-29) set one lucky run of either against the other's, and on
 * this machine a run of the same export moved between 0.72 and 1.42 s within a minute.
 */
const ROUNDS = 5;

/** Reads a whole answer, counting its bytes without keeping them; seconds to the first and to the last byte. */
async function timedGet(url: string, init: RequestInit = {}): Promise<{ seconds: number; firstByte: number; bytes: number; status: number }> {
  const started = performance.now();
  const r = await fetch(url, { ...init, headers: { authorization: AUTH, ...(init.headers as Record<string, string> ?? {}) } });
  let bytes = 0;
  let firstByte = 0;
  for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
    firstByte ||= (performance.now() - started) / 1000;
    bytes += chunk.length;
  }
  return { seconds: (performance.now() - started) / 1000, firstByte, bytes, status: r.status };
}

async function runOne(backend: string): Promise<Figure[]> {
  const { hosted, authorization, upload: body, paths, data } = await transferSetup(backend, ADMIN, OBJECTS, (l) => console.log(l));
  const { base, client } = hosted;
  try {
    // `--usages N`: N attributes each use the next one (after the upload's file was made: the downloads hold them),
    // then the statistics again, as after the load.
    if (USAGES >= data.attributes.length) throw new Error(`--usages: at most ${data.attributes.length - 1} with ${OBJECTS} objects`);
    await inParallel([...Array(USAGES).keys()], async (i) => {
      const r = await fetch(`${base}/rest/bench/attributes/${data.attributes[i].id}/usages`, {
        method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ _type: 'Usage', usageOf: data.attributes[i + 1].id }),
      });
      if (r.status !== 201) throw new Error(`usage: ${r.status} ${await r.text()}`);
    });
    if (USAGES) await analyzeAfterLoad(hosted.service);
    await ok(client.POST('/api/admin/databases', { body: { name: 'target' } }));

    const figures: Figure[] = [];
    // The query interface's JSON export of the same objects, then the JSON download, in turn (ROUNDS).
    const exportSql = "select a.* from asset_view a join scheme_view s on s.id = a.model_id where s.label = 'S'";
    const exportOnce = () => timedGet(`${base}/api/bench/queries/download?format=JSON`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: exportSql }) });
    for (let i = 0; i < SETTLING_ROUNDS; i++) {
      if ((await exportOnce()).status !== 200 || (await timedGet(`${base}/api/bench/schemes/S/download?format=JSON`)).status !== 200) throw new Error('settling round failed');
    }
    const exported: number[] = [];
    const downloaded: number[] = [];
    let jsonGrowth = 0;
    let jsonBytes = 0;
    let firstByte = Infinity;
    for (let i = 0; i < ROUNDS; i++) {
      const e = await exportOnce();
      if (e.status !== 200) throw new Error(`export: ${e.status}`);
      exported.push(e.seconds);
      const d = await withMemory(() => timedGet(`${base}/api/bench/schemes/S/download?format=JSON`));
      if (d.result.status !== 200) throw new Error(`download: ${d.result.status}`);
      downloaded.push(d.result.seconds);
      firstByte = Math.min(firstByte, d.result.firstByte);
      jsonGrowth = Math.max(jsonGrowth, d.growthMb);
      jsonBytes = d.result.bytes;
    }
    const download = median(downloaded);
    const downloadRatio = median(downloaded.map((d, i) => d / exported[i]));
    const rounds = downloaded.map((d, i) => `${d.toFixed(2)}/${exported[i].toFixed(2)}`).join(' ');
    figures.push({ name: `JSON download (${(jsonBytes / 1e6).toFixed(0)} MB), s, median of ${ROUNDS}`, value: download.toFixed(2), target: '< 3', pass: download < 3 });
    figures.push({ name: `JSON download / query JSON export (${USAGES ? `the export without the ${USAGES} usages` : 'same objects'}), median of ${ROUNDS} pairs`, value: downloadRatio.toFixed(2), target: '<= 1', pass: downloadRatio <= 1 });
    console.log(`  rounds, download/export s: ${rounds}`);
    figures.push({ name: 'memory growth during the JSON download, MB', value: jsonGrowth.toFixed(0), target: '< 300', pass: jsonGrowth < 300 });
    // Streamed: the first bytes leave before the model is read (the issue: "starts at once").
    figures.push({ name: 'JSON download, first byte, s', value: firstByte.toFixed(2), target: '< 1', pass: firstByte < 1 });

    const xlsx = await withMemory(() => timedGet(`${base}/api/bench/schemes/S/download?format=XLSX`));
    if (xlsx.result.status !== 200) throw new Error(`xlsx: ${xlsx.result.status}`);
    figures.push({ name: 'XLSX download, s', value: xlsx.result.seconds.toFixed(1), target: '< 20', pass: xlsx.result.seconds < 20 });
    figures.push({ name: 'memory growth during the XLSX download, MB', value: xlsx.growthMb.toFixed(0), target: '< 300', pass: xlsx.growthMb < 300 });
    // No target in the issue; written through xmlbuilder2, the slowest of the writers per record.
    const xmlDownload = await withMemory(() => timedGet(`${base}/api/bench/schemes/S/download?format=XML`));
    if (xmlDownload.result.status !== 200) throw new Error(`xml: ${xmlDownload.result.status}`);
    figures.push({ name: 'XML download, s', value: xmlDownload.result.seconds.toFixed(1), target: '' });
    figures.push({ name: 'memory growth during the XML download, MB', value: xmlDownload.growthMb.toFixed(0), target: '< 300', pass: xmlDownload.growthMb < 300 });
    // Shown now too: a failure of what follows does not lose them.
    printFigures(`${backend}, ${OBJECTS} objects, downloads`, figures);

    // The upload: the JSON download into an empty scheme of the other database, GETs of the first database beside it.
    const rest = await timedGets(base, authorization, paths, GETS_AT_REST);
    const upload = await withMemory(async () => {
      const finished = uploadJson(base, authorization, 'target', body);
      const during = await timedGets(base, authorization, paths, finished);
      return { ...(await finished), during };
    });
    const rate = upload.result.created / upload.result.seconds;
    figures.push({ name: `JSON upload, MERGE into an empty scheme (${upload.result.created} objects), objects/s`, value: rate.toFixed(0), target: '>= 5000', pass: rate >= 5000 });
    figures.push({ name: 'memory growth during the upload, MB', value: upload.growthMb.toFixed(0), target: '< 300', pass: upload.growthMb < 300 });
    const ratio = p99(upload.result.during) / p99(rest);
    figures.push({ name: `REST GET p99 during the upload / at rest (${upload.result.during.length} vs ${rest.length} GETs; ${p99(upload.result.during).toFixed(1)} / ${p99(rest).toFixed(1)} ms)`, value: ratio.toFixed(2), target: '<= 2', pass: ratio <= 2 });
    // No target: the GETs go one after another, so a GET that waited for the upload's final transaction counts once
    // in the p99, however long it waited (on the embedded database, whose one connection that transaction holds,
    // seconds: the README says so).
    figures.push({ name: 'slowest REST GET during the upload, ms', value: Math.max(...upload.result.during).toFixed(0), target: '' });
    return figures;
  } finally {
    await hosted.close();
  }
}

async function main() {
  const backends = args.backend === 'both' ? ['postgres', 'pglite'] : [args.backend!];
  const results = new Map<string, Figure[]>();
  for (const backend of backends) results.set(backend, await runOne(backend));
  for (const [backend, figures] of results) printFigures(`${backend}, ${OBJECTS} objects${USAGES ? `, ${USAGES} usages` : ''}`, figures);
}

function printFigures(title: string, figures: Figure[]) {
  console.log(`\n${title} (load average ${loadavg().map((l) => l.toFixed(2)).join(', ')})`);
  for (const f of figures) console.log(`${f.name.padEnd(92)} ${f.value.padStart(8)}  target ${f.target.padEnd(7)} ${f.pass === undefined ? '' : f.pass ? 'yes' : 'NO'}`);
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
