/**
 * The file formats of metadata download on their own (no store, no HTTP):
 * writes N records (a scheme, collections of datasets with tags, a custom
 * property and a distribution each) to a file in each format, in a child
 * process per format so that each peak RSS is its own, and reads the file
 * back. Prints wall time, CPU time (the machine may be shared) and peak RSS
 * per format. The engine's end-to-end figure
 * (issue 20: XLSX download of 100,000 objects under 20 s) adds the store's
 * reading on top of the writing measured here.
 *
 *   npx tsx bench/transfer-formats.ts [--records 100000] [--formats JSON,YAML,XLSX,CSV,XML] [--read]
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { csv } from '../plugins/transfer/formats/csv.ts';
import { json } from '../plugins/transfer/formats/json.ts';
import { yaml } from '../plugins/transfer/formats/yaml.ts';
import { xlsx } from '../plugins/transfer/formats/xlsx.ts';
import { xml } from '../plugins/transfer/formats/xml.ts';
import type { TransferFormat, TransferRecord, WriteContext } from '../plugins/transfer/records.ts';
import { resolveMetamodel } from '../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../runtime/metamodel/standard.ts';

const FORMATS: Record<string, TransferFormat> = { JSON: json, YAML: yaml, XLSX: xlsx, CSV: csv, XML: xml };

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    formats: { type: 'string', default: 'JSON,YAML,XLSX,CSV,XML' },
    read: { type: 'boolean', default: false },
    child: { type: 'string' },
    file: { type: 'string' },
  },
});

const metamodel = resolveMetamodel(readStandardMetamodel());
const context: WriteContext = { typeOf: type => metamodel.types[type], language: 'en' };

function* model(count: number): Generator<TransferRecord> {
  yield { type: 'Scheme', key: [], properties: { label: 'Bench', title: 'Benchmark model', modelType: 'DataCatalog' } };
  let written = 1;
  for (let c = 0; written < count; c++) {
    const collection = `Collection ${c}`;
    yield { type: 'Collection', key: [collection], list: 'collections', properties: { label: collection, title: `Sammlung ${c}`, status: 'WORKING' } };
    written++;
    for (let d = 0; d < 49 && written < count; d++) {
      const dataset = `Dataset ${c}/${d}`;
      yield {
        type: 'Dataset', key: [collection, dataset], list: 'datasets',
        properties: { label: dataset, title: `Datensatz ${d} – Übersicht`, description: 'A dataset of the benchmark, with a description of ordinary length.', tags: ['bench', `c${c}`], favorite: d % 2 === 0, steward: `steward${d}@example.org` },
      };
      written++;
      if (written < count) {
        yield { type: 'Distribution', key: [collection, dataset, 'CSV'], list: 'distributions', properties: { label: 'CSV', mediaType: 'text/csv', downloadURL: `https://example.org/${c}/${d}.csv` } };
        written++;
      }
    }
  }
}

async function child(name: string, count: number, file: string, read: boolean): Promise<void> {
  const format = FORMATS[name]!;
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const out = createWriteStream(file);
  const writer = format.writer(out, context);
  for (const record of model(count)) await writer.write(record);
  await writer.end();
  const wrote = performance.now() - started;
  const cpu = process.cpuUsage(cpuStarted);
  const writeRss = process.resourceUsage().maxRSS;
  let readMs = 0;
  let readCount = 0;
  if (read) {
    const readStarted = performance.now();
    for await (const _record of format.read(createReadStream(file), context)) readCount++;
    readMs = performance.now() - readStarted;
  }
  console.log(JSON.stringify({ format: name, records: count, writeMs: Math.round(wrote), writeCpuMs: Math.round((cpu.user + cpu.system) / 1000), bytes: statSync(file).size, peakRssMbAfterWrite: Math.round(writeRss / 1024), readMs: Math.round(readMs), readCount, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }));
}

if (args.child) {
  await child(args.child, Number(args.records), args.file!, args.read!);
} else {
  const directory = mkdtempSync(join(tmpdir(), 'bench-formats-'));
  try {
    for (const name of args.formats!.split(',')) {
      const file = join(directory, `bench.${FORMATS[name]!.extension}`);
      const output = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', name, '--records', args.records!, '--file', file, ...(args.read ? ['--read'] : [])], { encoding: 'utf8' });
      process.stdout.write(output);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
