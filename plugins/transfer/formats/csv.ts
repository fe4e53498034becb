/**
 * CSV (decisions §8): a zip holding one CSV file per type, `Dataset.csv` …,
 * each with a header row; columns and cells as flat.ts says (the formula
 * guard on: text beginning with `=`, `+`, `-`, `@`, tab or CR gets a leading
 * `'`, which reading removes). UTF-8 with a byte-order mark, so that
 * spreadsheet programs read umlauts right; fields quoted where they must be.
 *
 * Reading: entries named `<Type>.csv` (in a folder or not) are the tables;
 * other entries (folders, `__MACOSX/…`, a read-me) are skipped; a name that
 * leaves the archive, an archive over the limits (zip.ts) and a table without
 * the `_parent`, `_list` or `label` column are FileProblems naming the file.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';
import yazl from 'yazl';
import { FileProblem, type RecordWriter, type TransferFormat, type TransferRecord, type WriteContext } from '../records.ts';
import { depthFirst, TableReader, TableStager, type Cell, type ReadRow } from './flat.ts';
import { DEFAULT_ZIP_LIMITS, openCheckedZip, stageToFile, temporaryDirectory, type ZipLimits } from './zip.ts';

const STYLE = { typedCells: false, guardFormulas: true };

function writer(out: NodeJS.WritableStream, context: WriteContext): RecordWriter {
  const stager = new TableStager(context, STYLE);
  return {
    write: record => stager.add(record),
    abort: () => stager.abort(),
    async end() {
      const zip = new yazl.ZipFile();
      const written = pipeline(zip.outputStream, out as NodeJS.WritableStream);
      // One entry at a time: the next table is staged only when yazl has taken the last one.
      await stager.finish(async table => {
        async function* lines() {
          yield table.columns as Cell[];
          yield* table.rows();
        }
        const csv = Readable.from(lines()).pipe(stringify({ bom: true, record_delimiter: 'windows' }));
        const done = new Promise<void>((resolve, reject) => { csv.on('end', resolve); csv.on('error', reject); });
        zip.addReadStream(csv, `${table.type}.csv`, { mtime: new Date(0) });
        await done;
      });
      zip.end();
      await written;
    },
  };
}

export function csvReader(limits: ZipLimits = DEFAULT_ZIP_LIMITS) {
  return async function* read(input: NodeJS.ReadableStream, context: WriteContext): AsyncIterable<TransferRecord> {
    const directory = await temporaryDirectory();
    try {
      const path = join(directory.path, 'upload.zip');
      await stageToFile(input, path);
      const zip = await openCheckedZip(path, 'CSV upload (a zip of CSV files)', limits);
      const rows: ReadRow[] = [];
      const seen = new Map<string, string>();
      try {
        for (const entry of zip.entries) {
          const name = entry.fileName.split('/').pop()!;
          if (entry.fileName.endsWith('/') || entry.fileName.startsWith('__MACOSX/') || !/\.csv$/i.test(name)) continue;
          const type = name.replace(/\.csv$/i, '');
          if (seen.has(type)) throw new FileProblem(`The zip holds two tables of ${type}: ${seen.get(type)} and ${entry.fileName}.`, { sheet: entry.fileName });
          seen.set(type, entry.fileName);
          await readTable(await zip.open(entry), entry.fileName, type, context, rows);
        }
      } finally {
        zip.close();
      }
      yield* depthFirst(rows, context);
    } finally {
      await directory.remove();
    }
  };
}

async function readTable(stream: Readable, sheet: string, type: string, context: WriteContext, rows: ReadRow[]): Promise<void> {
  const parser = stream.pipe(parse({ bom: true, relax_column_count: true }));
  stream.on('error', error => parser.destroy(error));
  let table: TableReader | undefined;
  let row = 0;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      row++;
      if (!table) { table = new TableReader(type, sheet, cells, context); continue; }
      const read = table.read(cells, row);
      if (read) rows.push(read);
    }
  } catch (error) {
    if (error instanceof FileProblem) throw error;
    throw new FileProblem(`${sheet}: not readable as CSV after row ${row} (${(error as Error).message}).`, { sheet, row: row + 1 });
  }
  if (!table) throw new FileProblem(`${sheet}: the file is empty; its first row must name the columns.`, { sheet, row: 1 });
}

export function csvFormat(limits: ZipLimits = DEFAULT_ZIP_LIMITS): TransferFormat {
  return { name: 'CSV', contentType: 'application/zip', extension: 'csv.zip', writer, read: csvReader(limits) };
}

export const csv: TransferFormat = csvFormat();
