/**
 * Reads COPY … TO STDOUT and hands on the result's bytes, with one pass over
 * the protocol's messages, in parts of about 256 kB (see GATHER_BYTES and
 * SMALL_READ below: the reads and writes, not the bytes, are what costs).
 *
 * PostgreSQL sends COPY's output as one CopyData message per row (protocol
 * "COPY Operations": "always one per row"). Knowing where each row ends from
 * the message's length, the reader never searches the rows for their ends:
 *
 * - CSV (the caller's format, `format csv, header`): each record is copied
 *   with its final LF written as CRLF (RFC 4180); a line break inside a
 *   quoted value is the value's own and stays.
 * - JSON and XML: PostgreSQL writes one text per row (compose.ts) through
 *   `format csv` with a delimiter and a quote that JSON and XML text never
 *   hold unescaped (\x02, \x01), so nothing is escaped: the row's text is its
 *   bytes. Only a row that does hold one, or a line break (a json column
 *   kept as written, an XML text value), comes quoted, and is unquoted.
 *   JSON rows are joined with ",\n"; XML rows follow each other, and
 *   characters XML cannot carry become U+FFFD (formats.ts).
 *
 * The reading itself is pg-copy-streams' (it takes the connection's socket
 * over and gives it back when COPY ends); this class replaces only its
 * parsing of the messages (`_parse`), which otherwise gathers every row's
 * bytes into a list before they are searched again for row ends. The shape
 * of pg-copy-streams it relies on is checked when this module loads.
 */
import { to as copyTo, type CopyToStreamQuery } from 'pg-copy-streams';
import { TEXT_ROW_QUOTE, validXmlBytes, type Format } from './formats.ts';

const COPY_DATA = 0x64; // d
const ERROR_RESPONSE = 0x45; // E
/** Messages the server may send in the middle of COPY's output, as the protocol has them; they are skipped. */
const INTERSPERSED = new Set([0x48 /* CopyOutResponse */, 0x4e /* NoticeResponse */, 0x53 /* ParameterStatus */, 0x41 /* NotificationResponse */]);
const LF = 0x0a;
const CR = 0x0d;

const JSON_FIRST = Buffer.from('\n');
const JSON_NEXT = Buffer.from(',\n');

/** Writes one row (`src[start, end)`: a CopyData message's content) into `out` at `at`; returns where it ended. */
type RowWrite = (src: Buffer, start: number, end: number, out: Buffer, at: number, row: number) => number;

/** A CSV record with its LF written as CRLF. */
const csvRecord: RowWrite = (src, start, end, out, at) => {
  if (end > start && src[end - 1] === LF) {
    at += src.copy(out, at, start, end - 1);
    out[at++] = CR;
    out[at++] = LF;
    return at;
  }
  return at + src.copy(out, at, start, end);
};

/** One text of a row, its line end dropped, unquoted when COPY quoted it. */
function rowText(src: Buffer, start: number, end: number, out: Buffer, at: number): number {
  if (end > start && src[end - 1] === LF) end--;
  if (src[start] !== TEXT_ROW_QUOTE) return at + src.copy(out, at, start, end);
  // Quoted: drop the quotes around it, and a doubled quote inside is one.
  start++;
  end--;
  for (let q = src.indexOf(TEXT_ROW_QUOTE, start); q >= 0 && q < end; q = src.indexOf(TEXT_ROW_QUOTE, start)) {
    at += src.copy(out, at, start, q + 1);
    start = q + 2;
  }
  return at + src.copy(out, at, start, Math.max(start, end));
}

const jsonRow: RowWrite = (src, start, end, out, at, row) => rowText(src, start, end, out, at + (row === 0 ? JSON_FIRST : JSON_NEXT).copy(out, at));
const xmlRow: RowWrite = (src, start, end, out, at) => rowText(src, start, end, out, at);

/**
 * The message framing of COPY's output, without any connection: `take()` a
 * part as it was read, get back the result's bytes it completes; once COPY
 * is over (or the server reports an error), `rest` holds the bytes that
 * follow, which are the client library's to read.
 */
export class CopyFrames {
  /** CopyData messages read to their end: the rows, and for CSV the header too. */
  private messages = 0;
  /** Messages that are not rows: CSV's header. */
  private readonly heading: number;
  private readonly write: RowWrite;
  private readonly xml: boolean;
  /** The header of the message being read (type and length), while it is incomplete. */
  private readonly header = Buffer.alloc(5);
  private headerAt = 0;
  private code = 0;
  /** Bytes of the current message still to come. */
  private left = 0;
  /** The parts of a row that did not end in the part that began it. */
  private partial: Buffer[] = [];
  private partialSize = 0;

  constructor(format: Format) {
    this.write = format === 'CSV' ? csvRecord : format === 'JSON' ? jsonRow : xmlRow;
    this.xml = format === 'XML';
    this.heading = format === 'CSV' ? 1 : 0;
  }

  /** Rows read to their end so far. */
  get rows(): number {
    return Math.max(0, this.messages - this.heading);
  }

  /**
   * The room `take` may need for a part of `size` bytes: a row writes at most
   * its content and 2 bytes (CRLF for LF, or the JSON separator), and its
   * header was 5; only a row begun in an earlier part lacks its header here.
   */
  room(size: number): number {
    return size + this.partialSize + 2;
  }

  /**
   * Writes what `chunk` completes into `out` from `first`, which must leave
   * `room(chunk.length)` bytes; `part` is what it wrote there, or, with
   * `apart`, XML text whose characters had to be replaced, in a buffer of
   * its own (the bytes written to `out` are then not the result's).
   */
  take(chunk: Buffer, out: Buffer, first: number): { part: Buffer; apart: boolean; rest?: Buffer; done: boolean } {
    let o = first;
    let at = 0;
    const n = chunk.length;
    let rest: Buffer | undefined;
    let done = false;
    while (at < n) {
      if (this.left === 0) {
        if (this.headerAt === 0 && chunk[at] === ERROR_RESPONSE) {
          rest = chunk.subarray(at);
          break;
        }
        if (this.headerAt === 0 && n - at >= 5) {
          this.code = chunk[at];
          this.left = chunk.readUInt32BE(at + 1) - 4;
          at += 5;
        } else {
          while (this.headerAt < 5 && at < n) this.header[this.headerAt++] = chunk[at++];
          if (this.headerAt < 5) break;
          this.headerAt = 0;
          this.code = this.header[0];
          this.left = this.header.readUInt32BE(1) - 4;
        }
      }
      const size = Math.min(this.left, n - at);
      if (this.code === COPY_DATA) {
        if (size === this.left && !this.partialSize) {
          o = this.write(chunk, at, at + size, out, o, this.messages++);
        } else {
          if (size) this.partial.push(chunk.subarray(at, at + size));
          this.partialSize += size;
          if (size === this.left) {
            const row = Buffer.concat(this.partial, this.partialSize);
            this.partial = [];
            this.partialSize = 0;
            o = this.write(row, 0, row.length, out, o, this.messages++);
          }
        }
      }
      at += size;
      this.left -= size;
      // CopyDone ends it; so does anything else the protocol does not have in COPY's output, as in pg-copy-streams.
      if (this.left === 0 && this.code !== COPY_DATA && !INTERSPERSED.has(this.code)) {
        done = true;
        rest = chunk.subarray(at);
        break;
      }
    }
    const written = out.subarray(first, o);
    const part = this.xml && o > first ? validXmlBytes(written) : written;
    return { part, apart: part !== written, rest, done };
  }
}

/** What of pg-copy-streams' stream this module uses besides its declared interface (see the top). */
interface CopyStreamInternals {
  _read(): void;
  _parse(chunk: Buffer): boolean | undefined;
  _detach(): void;
  _cleanup(): void;
  _buffer: { push(b: Buffer): void };
}

type CopyStreamClass = new (text: string) => CopyToStreamQuery & CopyStreamInternals;
const probe = copyTo('select 1') as unknown as Record<string, unknown>;
const CopyStream = Object.getPrototypeOf(probe).constructor as CopyStreamClass;
{
  const proto = CopyStream.prototype as unknown as Record<string, unknown>;
  // `_read` too: its own, which reads from the connection (Readable's would throw).
  const missing = ['_read', '_parse', '_detach', '_cleanup', 'submit', 'handleError', 'handleCommandComplete'].filter((m) => !Object.hasOwn(proto, m) || typeof proto[m] !== 'function');
  if (typeof (probe._buffer as { push?: unknown } | undefined)?.push !== 'function') missing.push('_buffer');
  if (missing.length) throw new Error(`pg-copy-streams no longer has ${missing.join(', ')}: plugins/query/copy-out.ts must follow it`);
}

/**
 * How many bytes are handed on at a time. Each part handed on becomes one
 * write to the client's socket, and a write to a socket costs mostly the
 * waking of its reader, not the copy (on loopback here, 157 MB written in
 * 40 kB writes took 180 ms of CPU, in 256 kB writes 70 ms).
 */
const GATHER_BYTES = 256 * 1024;
/** The longest gathered bytes wait for more: when the database is slow to send, the client still gets rows as they come. */
const GATHER_MS = 20;
/**
 * The database sends COPY's output 8 kB at a time. Read as soon as it
 * arrives, each send is one wake-up, one pass of the event loop, one read
 * and one pass through the streams: about 9,500 reads for 157 MB, which
 * cost the service more CPU than all the rest of the export. After a read
 * smaller than SMALL_READ, the next waits READ_PAUSE_MS, and the kernel
 * gathers the sends meanwhile (the socket's receive buffer holds them; the
 * database keeps sending). With it, the service's CPU time for that export
 * went from 1.2-1.5 s to under 0.8 s.
 */
const SMALL_READ = 32 * 1024;
const READ_PAUSE_MS = 1;

/** COPY … TO STDOUT for the query interface: the stream of the result's bytes (without JSON's and XML's frame). */
export class CopyOut extends CopyStream {
  private readonly frames: CopyFrames;
  /** Where the result's bytes are written, from `handed` (what is handed on) to `at`. */
  private gathered = Buffer.alloc(0);
  private handed = 0;
  private at = 0;
  /** Hands on what was gathered when no more comes in time. */
  private gathering?: NodeJS.Timeout;
  /** Reads again after a pause. */
  private pausing?: NodeJS.Timeout;
  /** COPY's output is over (or failed): the connection is the client library's again. */
  private over = false;

  constructor(text: string, format: Format) {
    super(text);
    this.frames = new CopyFrames(format);
  }

  /** Rows read so far (CSV's header is not one). */
  get rows(): number {
    return this.frames.rows;
  }

  override _parse(chunk: Buffer): boolean | undefined {
    const room = this.frames.room(chunk.length);
    let drained = true;
    if (this.gathered.length - this.at < room) {
      drained = this.handOn();
      this.gathered = Buffer.allocUnsafe(GATHER_BYTES + room);
      this.handed = this.at = 0;
    }
    const { part, apart, rest, done } = this.frames.take(chunk, this.gathered, this.at);
    if (!apart) this.at += part.length;
    else {
      // XML text whose characters were replaced: after what was gathered before it.
      drained = this.handOn() && drained;
      drained = this.push(part) && drained;
    }
    if (rest === undefined) {
      if (this.at - this.handed >= GATHER_BYTES) drained = this.handOn() && drained;
      else if (this.at > this.handed) this.gathering ??= setTimeout(() => this.handOn(), GATHER_MS);
      // Not drained: the reader asks for more when it wants it.
      if (!drained || chunk.length >= SMALL_READ) return drained;
      this.pausing ??= setTimeout(() => {
        this.pausing = undefined;
        if (!this.over && !this.destroyed) this._read();
      }, READ_PAUSE_MS);
      return false;
    }
    this.over = true;
    clearTimeout(this.pausing);
    // The rest is the client library's again: what follows COPY, or the error it reports (which fails this stream).
    this._buffer.push(rest);
    this._detach();
    if (!done) {
      // The error fails the stream: what was gathered goes nowhere.
      clearTimeout(this.gathering);
      return undefined;
    }
    drained = this.handOn() && drained;
    this.push(null);
    this._cleanup();
    return drained;
  }

  /** Hands the gathered bytes on; false when the reader has enough for now. */
  private handOn(): boolean {
    clearTimeout(this.gathering);
    this.gathering = undefined;
    if (this.at === this.handed || this.destroyed) return true;
    const part = this.gathered.subarray(this.handed, this.at);
    this.handed = this.at;
    return this.push(part);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.over = true;
    clearTimeout(this.gathering);
    clearTimeout(this.pausing);
    super._destroy(err, callback);
  }
}
