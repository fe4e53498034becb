/**
 * Reading an uploaded zip (a CSV upload, an XLSX workbook) without trusting it.
 *
 * The upload is first staged in a temporary file, because a zip is read from
 * its end (the central directory) and an upload arrives as a stream. Then,
 * before a byte is inflated, the central directory is checked against the
 * limits: the number of entries, the total uncompressed size the entries
 * declare, each entry's compression ratio, and each entry's name (no absolute
 * paths, no `..`, no backslashes). Entries are then read through yauzl, which
 * stops an entry that inflates to more than it declared (validateEntrySizes),
 * and this module counts what was really inflated against the total limit, so
 * a zip that lies in its directory is stopped early too. Every refusal is a
 * FileProblem.
 *
 * yauzl (and yazl, for writing) are the well-kept zip libraries of one author
 * (Josh Wolfe): they read the central directory rather than trusting local
 * headers, validate names and sizes, and stream both ways. archiver and
 * unzipper (which exceljs uses inside) trust local headers when streaming,
 * which is what makes zip bombs and hidden entries possible.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { FileProblem } from '../records.ts';

export interface ZipLimits {
  /** Most bytes all entries together may inflate to (default 200 MB). */
  maxTotalBytes: number;
  /** Most entries (default 1000). */
  maxEntries: number;
  /** Largest ratio of uncompressed to compressed size of one entry (default 200), for entries over 1 MB. */
  maxRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxTotalBytes: 200 * 1024 * 1024, maxEntries: 1000, maxRatio: 200 };

/** Entries smaller than this are not held to the ratio: small files of repeated text compress very well and harm no one. */
const RATIO_FLOOR = 1024 * 1024;

/** A temporary directory for one reading or writing, removed by `remove`. */
export async function temporaryDirectory(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'transfer-formats-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Copies a stream into a file. */
export async function stageToFile(input: NodeJS.ReadableStream, path: string): Promise<void> {
  await pipeline(input as Readable, createWriteStream(path));
}

export interface CheckedZip {
  entries: yauzl.Entry[];
  /** A stream of one entry's inflated bytes; it fails with a FileProblem if the archive lied about sizes. */
  open(entry: yauzl.Entry): Promise<Readable>;
  close(): void;
}

const NAME_PROBLEMS: Record<string, string> = {
  'invalid relative path': 'leaves the archive (`..`)',
  'absolute path': 'is an absolute path',
  'invalid characters in fileName': 'holds a backslash',
};

/** Why a name may not stand in an uploaded zip, or null. */
export function unsafeEntryName(name: string): string | null {
  if (name.includes('\\')) return 'holds a backslash';
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'is an absolute path';
  if (name.split('/').some(segment => segment === '..')) return 'leaves the archive (`..`)';
  return null;
}

/** Opens a staged zip and checks its directory against the limits; throws FileProblem. */
export async function openCheckedZip(path: string, what: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<CheckedZip> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true });
  } catch (error) {
    throw new FileProblem(`The ${what} is not a readable zip archive (${(error as Error).message}).`);
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new FileProblem(`The ${what} holds ${zip.entryCount} entries, more than the ${limits.maxEntries} allowed.`);
    }
    const entries = await readDirectory(zip, what, limits);
    return { entries, open: openEntry(zip, what, limits), close: () => zip.close() };
  } catch (error) {
    zip.close();
    throw error;
  }
}

function readDirectory(zip: yauzl.ZipFile, what: string, limits: ZipLimits): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    let declared = 0;
    const refuse = (message: string) => { reject(new FileProblem(message)); };
    zip.on('error', (error: Error) => {
      // yauzl checks names itself, before it hands the entry over.
      const name = /^(invalid relative path|absolute path|invalid characters in fileName): (.*)$/.exec(error.message);
      if (name) return refuse(`The ${what} holds an entry whose name ${NAME_PROBLEMS[name[1]!]}: ${JSON.stringify(name[2])}.`);
      refuse(`The ${what} is not a readable zip archive (${error.message}).`);
    });
    zip.on('end', () => resolve(entries));
    zip.on('entry', (entry: yauzl.Entry) => {
      const unsafe = unsafeEntryName(entry.fileName);
      if (unsafe) return refuse(`The ${what} holds an entry whose name ${unsafe}: ${JSON.stringify(entry.fileName)}.`);
      declared += entry.uncompressedSize;
      if (declared > limits.maxTotalBytes) {
        return refuse(`The ${what} would inflate to more than ${limits.maxTotalBytes} bytes.`);
      }
      if (entry.uncompressedSize > RATIO_FLOOR && entry.uncompressedSize > limits.maxRatio * Math.max(entry.compressedSize, 1)) {
        return refuse(`The ${what} holds an entry compressed more than ${limits.maxRatio} times (${entry.fileName}): refused as a zip bomb.`);
      }
      entries.push(entry);
      zip.readEntry();
    });
    zip.readEntry();
  });
}

function openEntry(zip: yauzl.ZipFile, what: string, limits: ZipLimits) {
  let inflated = 0;
  return async (entry: yauzl.Entry): Promise<Readable> => {
    let stream: Readable;
    try {
      stream = await zip.openReadStreamPromise(entry);
    } catch (error) {
      throw new FileProblem(`The ${what} has an unreadable entry ${entry.fileName} (${(error as Error).message}).`);
    }
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        inflated += chunk.length;
        if (inflated > limits.maxTotalBytes) return done(new FileProblem(`The ${what} inflates to more than ${limits.maxTotalBytes} bytes.`));
        done(null, chunk);
      },
    });
    stream.on('error', (error: Error) => {
      counter.destroy(error instanceof FileProblem ? error
        : new FileProblem(`The ${what} has a damaged entry ${entry.fileName} (${error.message}).`));
    });
    return stream.pipe(counter);
  };
}
