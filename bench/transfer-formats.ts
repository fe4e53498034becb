/**
 * How fast the JSON and YAML formats of upload and download write and read
 * a model of 100,000 objects (50 collections of 2,000 datasets), in memory,
 * without the store: the part of a download and of an upload that the
 * formats own. `npx tsx bench/transfer-formats.ts [objects]`.
 */
import { PassThrough, Readable } from 'node:stream';
import { json } from '../plugins/transfer/formats/json.ts';
import { yaml } from '../plugins/transfer/formats/yaml.ts';
import type { TransferFormat, TransferRecord } from '../plugins/transfer/records.ts';

const total = Number(process.argv[2] ?? 100_000);
const perCollection = 2000;

function* records(): Generator<TransferRecord> {
  yield { type: 'Scheme', key: [], properties: { label: 'Bench', status: 'WORKING' } };
  for (let c = 0, n = 1; n < total; c++) {
    const collection = `Collection ${c}`;
    yield { type: 'Collection', key: [collection], list: 'collections', properties: { label: collection, status: 'WORKING' } };
    n++;
    for (let d = 0; d < perCollection && n < total; d++, n++) {
      yield {
        type: 'Dataset', key: [collection, `Dataset ${d}`], list: 'datasets',
        properties: { description: `Line one\n"quoted" ${d}`, label: `Dataset ${d}`, status: 'WORKING', tags: ['a', 'b'], customProperties: { seiten: d } },
      };
    }
  }
}

const context = { typeOf: () => undefined, language: 'en' as const };

async function measure(format: TransferFormat) {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  let started = performance.now();
  const writer = format.writer(out, context);
  for (const r of records()) await writer.write(r);
  await writer.end();
  const writeMs = performance.now() - started;
  const bytes = Buffer.concat(chunks);
  started = performance.now();
  let read = 0;
  for await (const _ of format.read(Readable.from([bytes]), context)) read++;
  const readMs = performance.now() - started;
  console.log(`${format.name}: ${read} objects, ${(bytes.length / 1e6).toFixed(1)} MB; write ${writeMs.toFixed(0)} ms (${Math.round(read / writeMs * 1000)}/s), read ${readMs.toFixed(0)} ms (${Math.round(read / readMs * 1000)}/s), heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`);
}

await measure(json);
await measure(yaml);
