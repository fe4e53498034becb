/**
 * XLSX (decisions §8): one sheet per type, named by the type, with the
 * columns and cells of flat.ts. Numbers and booleans are typed cells; text is
 * always a text cell, never a formula, so `=…` shows as written and runs
 * nothing (exceljs makes a formula only of a value `{ formula }`, and this
 * module never gives it one); the leading `'` marks only the empty text and
 * text that itself begins with `'`.
 *
 * Text in a cell is escaped as ECMA-376 says for strings (`_xHHHH_`): a
 * carriage return and the control characters XML cannot hold are written so,
 * and a `_xHHHH_` that stands in the text has its `_` escaped; Excel reads
 * them back as the characters. exceljs's streaming reader decodes `&…;` once
 * more than it should in the text cells it writes itself, so a `&` before
 * `name;` is written `_x0026_`.
 *
 * Writing uses exceljs's streaming WorkbookWriter without shared strings or
 * styles, one sheet at a time from flat.ts's staging files (exceljs writes a
 * sheet into the zip as it goes, so sheets written side by side would wait in
 * memory).
 *
 * Reading: the upload is staged in a temporary file and checked as a zip
 * (zip.ts: sizes, ratio, entry count, names); a workbook with macros
 * (`vbaProject.bin`, Excel 4 macro sheets, ActiveX, a macro-enabled content
 * type) is refused. The entries exceljs then reads are the ones checked:
 * they are copied, through yauzl's size checks, into a fresh zip stream that
 * feeds exceljs's streaming WorkbookReader, so an entry hidden from the
 * central directory never reaches it. A cell with a formula is a FileProblem
 * naming sheet and cell.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import yazl from 'yazl';
import type yauzl from 'yauzl';
import { FileProblem, type RecordWriter, type TransferFormat, type TransferRecord, type WriteContext } from '../records.ts';
import { depthFirst, TableReader, TableStager, type Cell, type ReadRow } from './flat.ts';
import { ownText } from './text.ts';
import { DEFAULT_ZIP_LIMITS, openCheckedZip, stageToFile, temporaryDirectory, type CheckedZip, type ZipLimits } from './zip.ts';

const STYLE = { typedCells: true, guardFormulas: false };

function writer(out: NodeJS.WritableStream, context: WriteContext): RecordWriter {
  const stager = new TableStager(context, STYLE);
  return {
    write: record => stager.add(record),
    abort: () => stager.abort(),
    async end() {
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out as Writable, useStyles: false, useSharedStrings: false });
      workbook.created = workbook.modified = new Date(0);
      await stager.finish(async table => {
        const sheet = workbook.addWorksheet(table.type);
        sheet.addRow(table.columns.map(escapeText)).commit();
        let count = 0;
        for await (const cells of table.rows()) {
          sheet.addRow(cells.map(escapeText)).commit();
          // exceljs queues a sheet's rows in memory until its zip stream takes
          // them: when the client reads slowly, wait for it rather than queue the sheet.
          if (++count % 256 === 0 && (out as Writable).writableNeedDrain) await once(out as Writable, 'drain');
        }
        sheet.commit();
      });
      await workbook.commit();
    },
  };
}

/** What escapeText changes can only stand where one of these does (most cells hold none). */
const MAY_NEED_ESCAPE = /[_&\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;

/** A cell's text as ECMA-376 strings hold it (see the top of this file). */
export function escapeText(cell: Cell): Cell {
  if (typeof cell !== 'string' || !MAY_NEED_ESCAPE.test(cell)) return cell;
  return cell
    .replace(/_(x[0-9A-Fa-f]{4}_)/g, '_x005F_$1')
    .replace(/[\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|&(?=[a-z]*;)/g, c => `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`);
}

export function unescapeText(text: string): string {
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Entries exceljs should see first, so that it can read sheets as they come. */
const FIRST = ['[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/workbook.xml', 'xl/sharedStrings.xml', 'xl/styles.xml'];

const NO_STRINGS = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="0" uniqueCount="0"/>';

async function refuseMacros(zip: CheckedZip): Promise<void> {
  for (const entry of zip.entries) {
    if (/(^|\/)vbaProject\.bin$/i.test(entry.fileName) || /^xl\/(macrosheets|activeX)\//i.test(entry.fileName)) {
      throw new FileProblem(`The workbook holds macros (${entry.fileName}); upload it saved as a plain .xlsx without macros.`);
    }
  }
  const types = zip.entries.find(entry => entry.fileName === '[Content_Types].xml');
  if (!types) throw new FileProblem('The file is a zip but not an Excel workbook (it has no [Content_Types].xml).');
  if (/macroEnabled|vbaProject/i.test((await readAll(zip, types)).toString('utf8'))) {
    throw new FileProblem('The workbook is macro-enabled (.xlsm); upload it saved as a plain .xlsx without macros.');
  }
}

interface Repacked {
  stream: Readable;
  /** The first problem met while copying (the reading of exceljs then ends early). */
  failure(): Error | undefined;
  /** Stops copying: no more entries are opened. */
  stop(): void;
}

/**
 * The checked entries as a fresh zip stream, in the order exceljs reads best.
 * exceljs pipes the stream into its unzipper without listening for errors, so
 * a failed entry (a zip that lied about its sizes) ends the stream early and
 * is kept for `failure`, rather than leaving exceljs waiting for the rest.
 */
async function repack(zip: CheckedZip): Promise<Repacked> {
  const copy = new yazl.ZipFile();
  const rank = (entry: yauzl.Entry) => { const i = FIRST.indexOf(entry.fileName); return i < 0 ? FIRST.length : i; };
  const output = new PassThrough();
  let failure: Error | undefined;
  let stopped = false;
  let stringsAdded = false;
  const fail = (error: Error) => {
    if (failure || stopped) return;
    failure = error;
    copy.outputStream.unpipe(output);
    output.end();
  };
  copy.outputStream.on('error', fail);
  const hasStrings = zip.entries.some((entry) => entry.fileName === 'xl/sharedStrings.xml');
  for (const entry of [...zip.entries].sort((a, b) => rank(a) - rank(b))) {
    if (entry.fileName.endsWith('/')) continue;
    // A workbook without shared strings (ours: the writer uses none) gets an empty table before its sheets:
    // without one, exceljs stages every sheet in a temporary file first, and read from there it now and then
    // lost the last rows of a sheet (24 of 200 reads of one download; the XLSX test reading a workbook 30 times).
    if (!hasStrings && rank(entry) > FIRST.indexOf('xl/sharedStrings.xml') && !stringsAdded) {
      copy.addBuffer(Buffer.from(NO_STRINGS), 'xl/sharedStrings.xml', { compress: false });
      stringsAdded = true;
    }
    // exceljs's unzipper finds the end of an entry of unknown size by the data
    // descriptor's signature, which cannot stand in XML text (it holds bytes
    // XML forbids); other entries (pictures …) are copied whole, with their sizes.
    if (/\.(xml|rels)$/i.test(entry.fileName)) {
      copy.addReadStreamLazy(entry.fileName, { compress: false }, callback => {
        if (stopped || failure) return;
        zip.open(entry).then(stream => {
          stream.on('error', fail);
          callback(null, stream);
        }, fail);
      });
    } else {
      copy.addBuffer(await readAll(zip, entry), entry.fileName, { compress: false });
    }
  }
  copy.end();
  copy.outputStream.pipe(output);
  return { stream: output, failure: () => failure, stop: () => { stopped = true; } };
}

async function readAll(zip: CheckedZip, entry: yauzl.Entry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.open(entry)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function cellText(value: unknown, sheet: string, address: string): Cell {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return ownText(unescapeText(value));
  if (typeof value === 'number' || typeof value === 'boolean' || value instanceof Date) return value;
  const object = value as Record<string, unknown>;
  if ('formula' in object || 'sharedFormula' in object) {
    throw new FileProblem(`Sheet ${sheet}, cell ${address} holds a formula; formulas are refused (paste the values instead).`, { sheet });
  }
  if (Array.isArray(object.richText)) return unescapeText((object.richText as { text: string }[]).map(run => run.text).join(''));
  if ('error' in object) throw new FileProblem(`Sheet ${sheet}, cell ${address} holds the error ${String(object.error)}.`, { sheet });
  if (typeof object.text === 'string') return unescapeText(object.text);
  throw new FileProblem(`Sheet ${sheet}, cell ${address} holds a value that is not text, a number or a boolean.`, { sheet });
}

export function xlsxReader(limits: ZipLimits = DEFAULT_ZIP_LIMITS) {
  return async function* read(input: NodeJS.ReadableStream, context: WriteContext): AsyncIterable<TransferRecord> {
    const directory = await temporaryDirectory();
    try {
      const path = join(directory.path, 'upload.xlsx');
      await stageToFile(input, path);
      const zip = await openCheckedZip(path, 'Excel workbook', limits);
      const rows: ReadRow[] = [];
      let repacked: Repacked | undefined;
      try {
        await refuseMacros(zip);
        repacked = await repack(zip);
        const workbook = new ExcelJS.stream.xlsx.WorkbookReader(repacked.stream, {
          worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore',
        });
        const seen = new Set<string>();
        for await (const worksheet of workbook) {
          const sheet = String((worksheet as unknown as { name?: string }).name ?? '');
          if (seen.has(sheet)) throw new FileProblem(`The workbook has two sheets named ${sheet}.`, { sheet });
          seen.add(sheet);
          let table: TableReader | undefined;
          for await (const row of worksheet) {
            const cells: Cell[] = [];
            row.eachCell({ includeEmpty: false }, (cell, column) => { cells[column - 1] = cellText(cell.value, sheet, cell.address); });
            if (!table) {
              if (row.number !== 1) throw new FileProblem(`Sheet ${sheet}: row 1 must name the columns, and it is empty.`, { sheet, row: 1 });
              table = new TableReader(sheet, sheet, Array.from(cells), context);
              continue;
            }
            const read = table.read(Array.from(cells), row.number);
            if (read) rows.push(read);
          }
          if (!table) throw new FileProblem(`Sheet ${sheet} is empty; its first row must name the columns.`, { sheet, row: 1 });
        }
        const failure = repacked.failure();
        if (failure) throw failure;
      } catch (error) {
        const failure = repacked?.failure();
        if (failure instanceof FileProblem) throw failure;
        if (error instanceof FileProblem) throw error;
        throw new FileProblem(`The file is not a readable Excel workbook (${(error as Error).message}).`);
      } finally {
        repacked?.stop();
        zip.close();
      }
      yield* depthFirst(rows, context);
    } finally {
      await directory.remove();
    }
  };
}

export function xlsxFormat(limits: ZipLimits = DEFAULT_ZIP_LIMITS): TransferFormat {
  return {
    name: 'XLSX',
    contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    extension: 'xlsx',
    writer,
    read: xlsxReader(limits),
  };
}

export const xlsx: TransferFormat = xlsxFormat();
