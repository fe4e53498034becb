/**
 * The metadata upload and download interface (decisions §8) in one shape that
 * every file format reads and writes: a model as a stream of records, one per
 * object, in depth-first order (an object's record comes before the records
 * of everything below it, and the records of one list of one parent come
 * together, in the order the list has).
 *
 * Who does what:
 * - the engine (download.ts, upload.ts …) turns stored objects into records
 *   and records into writes; it knows the store, the metamodel, jobs, access;
 * - a format (formats/<name>.ts) turns records into a file and a file into
 *   records; it knows nothing of the store and is tested on its own.
 *
 * Business keys (decisions §8): an object is named by the labels on its way
 * down from the model's root (the scheme, or the collection a download starts
 * at), joined by `/`; the root itself is named by the empty key. A label that
 * holds a `/` or begins with `"` is written in double quotes, an inner `"`
 * doubled (`"A/B"`, `"say ""hi"""`). A reference to an object of another
 * model starts with `/` and the other model's label (`/Data Domains/Date`).
 */

/** Where a record stood in the file, for the logs of an upload. */
export interface SourcePosition {
  /** JSON, YAML, XML: 1-based line and column of the object's start. */
  line?: number;
  column?: number;
  /** XLSX: the sheet's name; CSV: the file's name in the zip. */
  sheet?: string;
  /** XLSX and CSV: 1-based row, the header being row 1. */
  row?: number;
}

export interface TransferRecord {
  /** The type as the REST interface names it (`_type`): `Collection`, `Dataset`, `Derivation` … */
  type: string;
  /**
   * The labels from the root down to this object ([] for the root itself).
   * For an object whose label the service derives (labelFrom: derivations,
   * usages, attributions, deployments), the last element is that derived
   * label as the download found it; an upload does not use it to identify
   * the object (it is identified by its parent and its references).
   */
  key: string[];
  /**
   * The list of the parent that holds this object (`collections`, `datasets`,
   * `derivedTo` …); undefined for the root. In nested formats it is the name
   * of the array (JSON, YAML) or element (XML) the object stands in; in flat
   * formats (CSV, XLSX) it is a column.
   */
  list?: string;
  /**
   * The object's writable properties as the REST interface writes them,
   * custom properties included, system properties (id, _version, tenant,
   * createdBy, dateCreated, modifiedBy, dateModified, db, modelId, parentId,
   * href) never; `label` is here as it is stored. References are business
   * keys (strings, formatted with formatKey), never UUIDs; many-valued ones
   * are arrays of them. Values keep the REST types (numbers, booleans, epoch
   * milliseconds for DATETIME, arrays, records as objects).
   */
  properties: Record<string, unknown>;
  /** Set by readers; writers ignore it. */
  source?: SourcePosition;
}

/** What a writer needs to know besides the records. */
export interface WriteContext {
  /** The metamodel type of each record's `type`, for column order and data types (flat formats). */
  typeOf(type: string): import('../../runtime/host.ts').TypeDef | undefined;
  /** Language of labels the format writes for people (sheet titles …). */
  language: 'de' | 'en';
}

export interface RecordWriter {
  /** Undefined, or a promise to await before the next record (the output wants draining): a download writes 100,000s of records. */
  write(record: TransferRecord): Promise<void> | undefined;
  /** Called once after the last record; flushes and ends the output stream. */
  end(): Promise<void>;
  /**
   * Called instead of `end` when the download stops early (the client went
   * away, the store failed): frees what the writer holds (temporary files of
   * the flat formats); the output stream is the caller's to destroy.
   */
  abort?(): Promise<void>;
}

/** A problem with the file itself, before any record is made of it (bad syntax, missing header …). */
export class FileProblem extends Error {
  constructor(message: string, readonly position?: SourcePosition) { super(message); }
}

export interface TransferFormat {
  name: 'JSON' | 'YAML' | 'CSV' | 'XLSX' | 'XML';
  contentType: string;
  /** File name extension without the dot. */
  extension: string;
  writer(out: NodeJS.WritableStream, context: WriteContext): RecordWriter;
  /** Reads a whole file into records in depth-first order; throws FileProblem on a bad file. */
  read(input: NodeJS.ReadableStream, context: WriteContext): AsyncIterable<TransferRecord>;
}

/**
 * `items` and then `item`, in an array of exactly that length: a key below another one (or a path of ids). V8 makes
 * `[...items, item]` as a copy of `items` that then grows by one, with room for about 16 more: 140 bytes of nothing
 * per key, and an upload keeps a key for each of its objects until it commits (16 MB for 110,000 objects).
 */
export function appended(items: readonly string[], item: string): string[] {
  return items.concat(item);
}

/** Formats a business key: labels joined by `/`, each quoted where it must be. */
export function formatKey(labels: readonly string[], otherModel?: string): string {
  const segment = (label: string) => (label.includes('/') || label.startsWith('"') ? `"${label.replace(/"/g, '""')}"` : label);
  const inner = labels.map(segment).join('/');
  return otherModel === undefined ? inner : `/${[segment(otherModel), ...labels.map(segment)].join('/')}`;
}

/**
 * Parses a business key. Returns the labels and, for a key that starts with
 * `/`, the other model's label; null when the key is malformed (an unclosed
 * quote, text after a closing quote, an empty segment).
 */
export function parseKey(text: string): { labels: string[]; otherModel?: string } | null {
  const absolute = text.startsWith('/');
  let i = absolute ? 1 : 0;
  const labels: string[] = [];
  if (text.length === i) return absolute ? null : { labels };
  for (;;) {
    let label = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) return null;
        if (text[i] === '"') {
          if (text[i + 1] === '"') { label += '"'; i += 2; continue; }
          i++;
          break;
        }
        label += text[i++];
      }
      if (i < text.length && text[i] !== '/') return null;
    } else {
      const end = text.indexOf('/', i);
      label = text.slice(i, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
    }
    if (label === '') return null;
    labels.push(label);
    if (i >= text.length) break;
    i++; // the slash
    if (i >= text.length) return null;
  }
  if (!absolute) return { labels };
  const [otherModel, ...rest] = labels;
  return { labels: rest, otherModel };
}
