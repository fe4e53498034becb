/**
 * What the format specs share: the standard metamodel as a WriteContext, a
 * hand-built model that uses what the formats must carry (labels with `/`,
 * umlauts, quotes and line breaks, empty texts, numbers, booleans, tags, time
 * series, custom properties, cross-model references, text that looks like a
 * formula or like JSON), and helpers to write records to bytes and read them
 * back.
 */
import { PassThrough, Readable } from 'node:stream';
import { resolveMetamodel } from '../../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../../runtime/metamodel/standard.ts';
import type { TransferFormat, TransferRecord, WriteContext } from '../../../plugins/transfer/records.ts';

const metamodel = resolveMetamodel(readStandardMetamodel());

export const context: WriteContext = { typeOf: type => metamodel.types[type], language: 'en' };

const r = (type: string, key: string[], list: string | undefined, properties: Record<string, unknown>): TransferRecord =>
  ({ type, key, ...(list === undefined ? {} : { list }), properties });

/** A model in depth-first order, lists in metamodel order, as the engine gives it. */
export function sampleModel(): TransferRecord[] {
  return [
    r('Scheme', [], undefined, {
      label: 'Sales "2026"', title: 'Verkäufe – Übersicht', description: 'Line 1\nLine 2\r\nLine 3\n',
      favorite: true, locked: false, modelType: 'DataCatalog', status: 'WORKING', tags: ['a', 'b/c', 'Ärger'],
      steward: 'Jörg Müller', score: 4.5, reviewed: false, codeLike: '42', nothing: '', formulaLike: '=HYPERLINK("http://x")',
      nested: { a: [1, 'two'] }, quoteStart: "'already quoted",
    }),
    r('Classifier', ['Invoice'], 'classifiers', { label: 'Invoice', abstract: false, synonyms: ['Bill', 'Rechnung'] }),
    r('BusinessAttribute', ['Invoice', 'date'], 'attributes', {
      label: 'date', hasRange: '/Data Domains/Date', minCardinality: 0, maxCardinality: -1, order: 3,
      required: 'MANDATORY', identifying: true, defaultValue: '-1', stereotype: '@mention',
    }),
    r('Collection', ['Orders'], 'collections', {
      label: 'Orders', title: '=1+2', description: '', stereotype: "'quoted", tags: [],
    }),
    r('Collection', ['Orders', 'Empty'], 'collections', { label: 'Empty' }),
    r('Dataset', ['Orders', 'Customers'], 'datasets', { label: 'Customers', description: 'AT&amp;T &lt;b&gt; _x000D_ & \u0001 bell', accrualPeriodicity: '+P1D', retentionPeriod: '\ttab first' }),
    r('Derivation', ['Orders', 'Customers', 'Order/Lines'], 'derivedTo', {
      label: 'Order/Lines', derivedTo: 'Orders/"Order/Lines"', qualifier: 'copy',
    }),
    r('Dataset', ['Orders', 'Order/Lines'], 'datasets', {
      label: 'Order/Lines', title: 'Lines, "quoted", and; semicolons', archiveDetails: 'x'.repeat(300), confidential: true, rows: 12000000,
    }),
    r('Distribution', ['Orders', 'Order/Lines', 'CSV export'], 'distributions', {
      label: 'CSV export', mediaType: 'text/csv', downloadURL: 'https://example.org/a?b=1&c=2', format: '-x',
    }),
    r('Distribution', ['Orders', 'Order/Lines', 'Zweite – Ü'], 'distributions', { label: 'Zweite – Ü', title: '\r\nstarts with a line break' }),
    r('Collection', ['"Quoted" start'], 'collections', { label: '"Quoted" start', title: 'null' }),
    r('ReferenceObject', ['Countries'], 'enumerations', { label: 'Countries' }),
    r('ReferenceValue', ['Countries', 'DE'], 'literals', {
      label: 'DE', code: 'DE', order: 1, timeSeries: [
        { code: 'DE', shortText: 'Deutschland', validFrom: 0, validTo: 1767225600000 },
        { code: 'D', shortText: 'Deutschland "alt"\nzweite Zeile', validFrom: -631152000000 },
      ],
    }),
    r('ReferenceValue', ['Countries', 'AT'], 'literals', { label: 'AT', code: 'AT', order: 2, timeSeries: [] }),
    r('Enumeration', ['Status'], 'enumerations', { label: 'Status' }),
    r('Literal', ['Status', 'open'], 'literals', { label: 'open', code: '+1', order: 0 }),
  ];
}

export async function writeToBuffer(format: TransferFormat, records: Iterable<TransferRecord>): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
  const finished = new Promise<void>((resolve, reject) => { out.on('end', resolve); out.on('error', reject); });
  const writer = format.writer(out, context);
  for (const record of records) await writer.write(record);
  await writer.end();
  await finished;
  return Buffer.concat(chunks);
}

export async function readFromBuffer(format: TransferFormat, bytes: Buffer | string): Promise<TransferRecord[]> {
  const records: TransferRecord[] = [];
  for await (const record of format.read(Readable.from([Buffer.from(bytes)]), context)) records.push(record);
  return records;
}

/** Records without the reader's positions, for comparing with what was written. */
export function withoutSource(records: TransferRecord[]): TransferRecord[] {
  return records.map(({ source: _source, ...rest }) => rest);
}

/** Reads and expects a FileProblem; returns it. */
export async function readProblem(format: TransferFormat, bytes: Buffer | string): Promise<Error & { position?: unknown }> {
  try {
    await readFromBuffer(format, bytes);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the file to be refused');
}
