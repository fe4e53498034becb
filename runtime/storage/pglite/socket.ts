/**
 * One node-postgres connection to the embedded database: a Duplex that pg
 * uses instead of a TCP socket (`stream` in the client config). pg's own
 * Connection speaks the wire protocol over it, so everything it does against
 * PostgreSQL (extended protocol, named statements, COPY through
 * pg-copy-streams, errors with their `code`) works unchanged. Complete
 * frontend messages go to the database thread in batches, one batch at a time
 * (pg waits for each answer anyway); answers come back as raw bytes.
 *
 * When a statement is interrupted the database thread is replaced, so this
 * side answers what PostgreSQL would have answered after a cancel: the
 * statement fails with 57014 and, if a transaction was open, the transaction
 * is aborted (commands fail with 25P02 until ROLLBACK). Named prepared
 * statements are prepared again on the new thread before the next batch.
 */
import { Duplex } from 'node:stream';
import {
  COPY_FROM_STDIN, COPY_IN_RESPONSE, SYNC, abortedError, cString, commandComplete, errorResponse, parameterDescriptionNone, readyForQuery, simple, startsWithCopy, toTransferable,
} from './framing.ts';

/** What a connection needs from the database thread (runtime/storage/pglite/host.ts). */
export interface ProtocolCarrier {
  attach(socket: PgliteSocket): void;
  detach(socket: PgliteSocket): void;
  /** Sends a batch of complete frontend messages; the answer comes through received()/completed(). */
  send(socket: PgliteSocket, bytes: Uint8Array, startup: boolean): void;
}

const NOTHING = Buffer.alloc(0);
const TX_END = /^\s*(rollback|abort|commit|end)(\s+(work|transaction))?\s*;?\s*$/i;

export class PgliteSocket extends Duplex {
  /** Generation of the database thread this connection last talked to (named statements live there). */
  generation = -1;
  /** Whether the database was in a transaction block after this connection's last answered batch. */
  inTransaction = false;
  private pending: Buffer[] = [];
  private started = false;
  private busy = false;
  private flushScheduled = false;
  private lastBatchSyncs = false;
  private lastBatchStartup = false;
  private gone = false;
  /** Skipping messages until Sync, as a backend does after an error in the extended protocol. */
  private skipTillSync = false;
  /** The transaction was lost in an interrupt: only ROLLBACK/COMMIT ends it. */
  private aborted = false;
  private endingInExtended = false;
  private named = new Map<string, Buffer>();
  /** Bytes of the backend message in progress that pg has yet to get, and its header so far (see track()). */
  private owed = 0;
  private header: Buffer = NOTHING;
  /** A COPY FROM STDIN and its data so far. */
  private copyIn: Buffer[] | null = null;
  private stripCopyInResponse = false;

  constructor(private readonly carrier: ProtocolCarrier) {
    super();
    carrier.attach(this);
  }

  // The parts of net.Socket that pg's Connection calls.
  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }
  setNoDelay(): this { return this; }
  setKeepAlive(): this { return this; }
  ref(): this { return this; }
  unref(): this { return this; }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.gone) {
      callback(new Error('Connection to the embedded database was closed'));
      return;
    }
    this.pending.push(chunk);
    this.scheduleFlush();
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    // The client closed its side (after Terminate): close ours, as a server does.
    this.hangUp();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.gone = true;
    this.carrier.detach(this);
    callback(error);
  }

  /** A batch of named Parse messages (each with its Sync) to prepare them again on a new thread. */
  preparedStatements(): Uint8Array | null {
    if (!this.named.size) return null;
    const parts: Buffer[] = [];
    for (const parse of this.named.values()) parts.push(parse, SYNC);
    return toTransferable(parts);
  }

  received(chunk: Buffer): void {
    if (this.gone) return;
    const bytes = this.stripCopyInResponse ? this.withoutCopyInResponse(chunk) : chunk;
    this.track(bytes);
    this.push(bytes);
  }

  /**
   * Follows where backend messages end in what was handed to pg: the thread
   * sends its output in parts cut where PGlite flushed, often inside a
   * message (a long row). Nothing may be appended then: pg would read it as
   * the rest of that message and wait for ever.
   */
  private track(bytes: Buffer): void {
    let at = 0;
    while (at < bytes.length) {
      if (this.owed > 0) {
        const n = Math.min(this.owed, bytes.length - at);
        this.owed -= n;
        at += n;
        continue;
      }
      const take = bytes.subarray(at, at + 5 - this.header.length);
      this.header = this.header.length ? Buffer.concat([this.header, take]) : Buffer.from(take);
      at += take.length;
      if (this.header.length === 5) {
        this.owed = this.header.readUInt32BE(1) - 4;
        this.header = NOTHING;
      }
    }
  }

  /** Whether pg has part of a backend message and waits for its rest. */
  private get insideMessage(): boolean {
    return this.owed > 0 || this.header.length > 0;
  }

  completed(inTransaction: boolean): void {
    this.busy = false;
    this.stripCopyInResponse = false;
    this.inTransaction = inTransaction;
    this.scheduleFlush();
  }

  /** The running batch was interrupted: answer as a backend answers a cancelled statement. */
  cancelled(): void {
    this.busy = false;
    this.stripCopyInResponse = false;
    if (this.gone) return;
    if (this.lastBatchStartup || this.insideMessage) {
      // Broken off inside a message (or the start): nothing can follow it, so the connection ends
      // (FATAL 57014 where that can still be said); the pool replaces it.
      this.terminate('57014', 'canceling statement: the embedded database was interrupted');
      return;
    }
    this.push(errorResponse('ERROR', '57014', 'statement cancelled: the embedded database was interrupted'));
    if (this.inTransaction) this.aborted = true;
    this.inTransaction = false;
    if (this.lastBatchSyncs) this.push(readyForQuery(this.aborted ? 'E' : 'I'));
    else this.skipTillSync = true;
    this.scheduleFlush();
  }

  /** The database went away under this connection: FATAL error, then the connection closes. */
  terminate(code: string, message: string): void {
    if (this.gone) return;
    this.busy = false;
    if (!this.insideMessage) this.push(errorResponse('FATAL', code, message));
    this.hangUp();
  }

  private hangUp(): void {
    if (this.gone) return;
    this.gone = true;
    this.carrier.detach(this);
    this.push(null);
    // 'close' (pg's 'end') must follow the last data: destroy only after the readable side ended.
    if (this.readableEnded) this.destroy();
    else this.once('end', () => this.destroy());
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.busy || this.gone || !this.pending.length) return;
    this.flushScheduled = true;
    process.nextTick(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.busy || this.gone || !this.pending.length) return;
    const data = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    this.pending = [];
    let offset = 0;
    if (!this.started) {
      if (data.length < 4 || data.length < data.readInt32BE(0)) {
        this.pending.push(data);
        return;
      }
      this.started = true;
      const length = data.readInt32BE(0);
      this.dispatch([data.subarray(0, length)], true, false);
      if (length < data.length) this.pending.push(Buffer.from(data.subarray(length)));
      return;
    }
    // Answer locally while the connection is in a state the new thread does not know.
    while ((this.skipTillSync || this.aborted) && offset + 5 <= data.length) {
      const end = offset + 1 + data.readInt32BE(offset + 1);
      if (end > data.length) break;
      if (!this.answerLocally(data.subarray(offset, end))) return;
      offset = end;
    }
    offset = this.captureCopyIn(data, offset);
    if (this.busy) {
      if (offset < data.length) this.pending.push(Buffer.from(data.subarray(offset)));
      return;
    }
    // Then forward every complete message up to a Terminate or a COPY FROM STDIN.
    let end = offset;
    let syncs = false;
    while (end + 5 <= data.length) {
      const type = data[end];
      const next = end + 1 + data.readInt32BE(end + 1);
      if (next > data.length || type === 0x58 /* X */) break;
      if (type === 0x51 /* Q */ && startsWithCopy(data, end + 5) && COPY_FROM_STDIN.test(cString(data, end + 5))) {
        if (end > offset) break;
        // PGlite reads COPY data while it executes the COPY: collect it all, then send it in one batch.
        this.copyIn = [Buffer.from(data.subarray(end, next))];
        this.push(COPY_IN_RESPONSE);
        const rest = this.captureCopyIn(data, next);
        if (rest < data.length) this.pending.push(Buffer.from(data.subarray(rest)));
        return;
      }
      if (type === 0x51 /* Q */ || type === 0x53 /* S */) syncs = true;
      if (type === 0x50 /* P */) this.remember(data.subarray(end, next));
      end = next;
    }
    if (end > offset) this.dispatch([data.subarray(offset, end)], false, syncs);
    if (end < data.length) {
      if (data[end] === 0x58 && end + 5 <= data.length && !this.busy) {
        this.hangUp();
        return;
      }
      // The rest of an incomplete message comes with the next write.
      this.pending.push(Buffer.from(data.subarray(end)));
    }
  }

  private dispatch(messages: Buffer[], startup: boolean, syncs: boolean): void {
    this.busy = true;
    this.lastBatchSyncs = syncs;
    this.lastBatchStartup = startup;
    this.carrier.send(this, toTransferable(messages), startup);
  }

  /** Collects COPY data up to CopyDone or CopyFail, then sends the COPY with its data. */
  private captureCopyIn(data: Buffer, offset: number): number {
    while (this.copyIn && offset + 5 <= data.length) {
      const type = data[offset];
      const end = offset + 1 + data.readInt32BE(offset + 1);
      if (end > data.length) break;
      this.copyIn.push(Buffer.from(data.subarray(offset, end)));
      offset = end;
      if (type === 0x63 /* c */ || type === 0x66 /* f */) {
        const batch = this.copyIn;
        this.copyIn = null;
        this.stripCopyInResponse = true;
        this.dispatch(batch, false, true);
      }
    }
    return offset;
  }

  /** The client had its CopyInResponse before the data went out: drop the backend's. */
  private withoutCopyInResponse(chunk: Buffer): Buffer {
    this.stripCopyInResponse = false;
    let at = 0;
    while (at + 5 <= chunk.length) {
      const next = at + 1 + chunk.readInt32BE(at + 1);
      if (chunk[at] === 0x47 /* G */) return Buffer.concat([chunk.subarray(0, at), chunk.subarray(Math.min(next, chunk.length))]);
      if (chunk[at] === 0x45 /* E */) break;
      at = next;
    }
    return chunk;
  }

  /** Records a named Parse, to prepare the statement again after the thread was replaced. */
  private remember(parse: Buffer): void {
    const nameEnd = parse.indexOf(0, 5);
    if (nameEnd > 5) this.named.set(parse.toString('utf8', 5, nameEnd), Buffer.from(parse));
  }

  /** One message in the skip-till-Sync or lost-transaction state; false when the connection ended. */
  private answerLocally(message: Buffer): boolean {
    const type = String.fromCharCode(message[0]);
    if (type === 'X') {
      this.hangUp();
      return false;
    }
    if (type === 'S') {
      this.skipTillSync = false;
      this.endingInExtended = false;
      this.push(readyForQuery(this.aborted ? 'E' : 'I'));
      return true;
    }
    if (this.skipTillSync || 'dcfH'.includes(type)) return true;
    const ended = () => {
      this.aborted = false;
      this.endingInExtended = false;
    };
    switch (type) {
      case 'Q':
        if (TX_END.test(cString(message, 5))) {
          this.push(commandComplete('ROLLBACK'));
          ended();
        } else {
          this.push(abortedError());
        }
        this.push(readyForQuery(this.aborted ? 'E' : 'I'));
        return true;
      case 'P': {
        const text = cString(message, message.indexOf(0, 5) + 1);
        if (TX_END.test(text)) {
          this.endingInExtended = true;
          this.push(simple('1'));
          return true;
        }
        break;
      }
      case 'B':
        if (this.endingInExtended) return this.push(simple('2')), true;
        break;
      case 'D':
        if (this.endingInExtended) {
          if (message[5] === 0x53 /* S */) this.push(parameterDescriptionNone());
          this.push(simple('n'));
          return true;
        }
        break;
      case 'E':
        if (this.endingInExtended) {
          this.push(commandComplete('ROLLBACK'));
          ended();
          // Sync and whatever follows go to the thread again; keep Sync's answer local for order.
          this.skipTillSync = true;
          return true;
        }
        break;
      case 'C':
        this.push(simple('3'));
        return true;
    }
    this.push(abortedError());
    this.skipTillSync = true;
    return true;
  }
}
