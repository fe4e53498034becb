/**
 * Runs a checked statement in the sandbox and hands back its result as a
 * stream of bytes in the requested format.
 *
 * Every run is one transaction, `read only`, `repeatable read`, whose first
 * statement sets — transaction-locally — the schema (search_path), the
 * tenants the caller may read, the time and language of the views, the
 * statement timeout and the output styles; then `set local role` switches to
 * the read-only role, which can read the views and nothing else. Only then
 * does the caller's statement run, embedded (compose.ts), over the extended
 * protocol where it is a query, so that a second statement would be refused
 * by the server too. The transaction is always rolled back: nothing of it
 * outlives the run on the pooled connection.
 *
 * PostgreSQL: a pool of its own (connections.ts; SERVICE_QUERY_POOL_SIZE connections, the
 * service's login) so that a long export never takes a connection the REST
 * interface needs, and `set local role` rather than a login as the read-only
 * role, so that no second password must be configured and rotated alike on
 * every instance. The result streams out of COPY … TO STDOUT
 * (copy-out.ts, over pg-copy-streams): CSV as CSV, JSON as one object per
 * row, XML as one row element per row, all written by PostgreSQL; the
 * service frames them.
 *
 * Embedded (PGlite): the database is one backend, so a statement run on it
 * would hold every other request of every tenant until it ends. Statements
 * run on a copy of it instead, as of the moment the run asked for it, in a
 * thread of its own (runtime/storage/pglite/readers.ts, at most
 * SERVICE_QUERY_POOL_SIZE copies). Rows are fetched from a cursor declared
 * in the transaction, a batch at a time, and written to a temporary file;
 * the copy is given back as soon as the statement is done, and the file is
 * streamed to the caller, so a slow client holds no copy, and a failure
 * anywhere in the statement is still a 400. PGlite ignores
 * statement_timeout: a timer interrupts the copy when a statement outlives
 * the timeout.
 */
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { schemaOf, type InteractiveGate, type Language, type SnapshotReaders, type Storage } from '../../runtime/host.ts';
import { CompositionRefused, composeChecked, describeSql, resultSql, statementOffset, type Column } from './compose.ts';
import { callerPosition, type CheckedStatement } from './sandbox.ts';
import { RowWriter, type Format } from './formats.ts';
import { QueryConnections, type Connection } from './connections.ts';
import { ResultStream } from './result-stream.ts';

export interface QuerySpec {
  db: string;
  statement: CheckedStatement;
  format: Format;
  /** The tenants the caller may read: one tenant, or null for every tenant of the database. */
  tenant: string | null;
  /** Epoch milliseconds the versioned views show; null: now. */
  version: number | null;
  language: Language;
  /** Milliseconds; 0: no limit. */
  timeoutMs: number;
}

/**
 * The statement failed in the database; `message` is the database's text,
 * `position` where in the caller's statement the database placed the error
 * (1-based, in characters), when it did so within the caller's text.
 */
export class QueryFailure extends Error {
  constructor(message: string, readonly timedOut = false, readonly code?: string, readonly position?: number) {
    super(message);
  }
}

export interface RunOptions {
  /** How rows are read: COPY (PostgreSQL's default) or a cursor (the embedded database's only way). */
  via?: 'copy' | 'cursor';
  /** Aborting it stops the statement. */
  signal?: AbortSignal;
  /** Told the rows read so far while the embedded database's rows are spooled, before the result is handed over (job progress). */
  onRows?(rows: number): void;
}

export interface QueryResult {
  /** The result's bytes; destroying it stops the statement. */
  stream: Readable;
  /** Rows written so far (all of them once the stream ended). */
  rows(): number;
}


const FETCH_ROWS = 1000;
/** The result is held back until this much is ready, or it is complete: an error in the first rows is still a 400. */
const READ_AHEAD_BYTES = 64 * 1024;
const TIMEOUT_CODE = '57014';

export interface EngineOptions {
  storage: Storage;
  databaseUrl?: string;
  role: string;
  poolSize: number;
  log: Logger;
  /** Interactive requests of this instance, which the rows of a result wait for (see runtime/interactive.ts). */
  interactive?: InteractiveGate;
  /** Bytes a second all results of this instance together are produced at while interactive requests are served; 0: no cap. */
  bulkRate?: number;
}

export class QueryEngine {
  private readonly connections: QueryConnections;
  private readonly storage: Storage;

  constructor(private readonly options: EngineOptions) {
    this.storage = options.storage;
    this.connections = new QueryConnections(options);
  }

  get kind() {
    return this.storage.kind;
  }

  close() {
    return this.connections.close();
  }

  /** The query pool's connections (PostgreSQL) or the embedded database's copies, for the instance's figures. */
  poolFigures() {
    return this.connections.figures();
  }

  /** The embedded database's copies (tests look at how many were made). */
  get snapshotReaders(): SnapshotReaders | undefined {
    return this.connections.readers;
  }

  private connect(signal?: AbortSignal): Promise<Connection> {
    return this.connections.connect(signal);
  }

  /**
   * Starts the statement; resolves once the database has accepted it and the
   * first part of the result (or all of it) is ready, rejects with
   * QueryFailure when the database refuses it before that.
   */
  async run(spec: QuerySpec, options: RunOptions = {}): Promise<QueryResult> {
    const via = options.via ?? (this.storage.kind === 'pglite' ? 'cursor' : 'copy');
    const conn = await this.connect(options.signal);
    const timer = new StatementTimer(spec.timeoutMs, this.storage.kind === 'pglite' ? () => conn.kill() : undefined);
    // Abandoned before the result is handed over (the caller left, the instance stops): stop the statement.
    const abandon = () => conn.kill();
    options.signal?.addEventListener('abort', abandon, { once: true });
    let released = false;
    const finish = async (ok: boolean) => {
      if (released) return;
      released = true;
      timer.stop();
      options.signal?.removeEventListener('abort', abandon);
      let broken = !ok;
      try {
        await conn.query('rollback');
        broken = false;
      } catch {
        broken = true;
      }
      conn.release(broken);
    };
    try {
      if (options.signal?.aborted) throw new QueryFailure('the statement was abandoned before it started');
      await this.begin(conn, spec);
      const columns = await timer.guard(() => located(spec.statement, describeSql, () => this.describe(conn, spec.statement)));
      // `via` is for tests on PostgreSQL: both ways must give the same bytes.
      if (via === 'cursor' || !conn.copyOut) return await this.spooled(conn, spec, columns, timer, finish, options.onRows);
      return await this.streamed(conn, spec, columns, timer, finish);
    } catch (err) {
      await finish(false);
      throw toFailure(err, timer, spec.timeoutMs);
    }
  }

  private async begin(conn: Connection, spec: QuerySpec) {
    const schema = schemaOf(spec.db);
    await conn.query('begin transaction isolation level repeatable read, read only');
    const postgres = this.storage.kind === 'postgres';
    // People are browsing: no parallel workers, so that the statement never takes every core (runtime/interactive.ts).
    const serial = postgres && this.options.interactive?.browsing() === true;
    await conn.query(
      `select set_config('search_path', $1, true),
              set_config('service.tenants', coalesce($2::text, (select coalesce(string_agg(id::text, ','), '') from "${schema}".objects where type = 'Tenant')), true),
              set_config('service.version', $3, true),
              set_config('service.language', $4, true),
              set_config('statement_timeout', $5, true),
              set_config('TimeZone', 'UTC', true),
              set_config('DateStyle', 'ISO, YMD', true),
              set_config('IntervalStyle', 'postgres', true),
              set_config('extra_float_digits', '1', true),
              set_config('standard_conforming_strings', 'on', true)
              ${postgres ? `, set_config('client_connection_check_interval', '1000', true)` : ''}
              ${serial ? `, set_config('max_parallel_workers_per_gather', '0', true)` : ''}`,
      [`"${schema}"`, spec.tenant, spec.version === null ? '' : String(spec.version), spec.language, postgres ? String(spec.timeoutMs) : '0'],
    );
    await conn.query(`set local role "${this.options.role}"`);
  }

  private async describe(conn: Connection, statement: CheckedStatement): Promise<Column[]> {
    const r = await conn.query(await composeChecked(statement, describeSql));
    return r.fields.map((f) => ({ name: f.name, type: f.dataTypeID }));
  }

  /** PostgreSQL: COPY streams the formatted rows; the first part is read before answering. */
  private async streamed(conn: Connection, spec: QuerySpec, columns: Column[], timer: StatementTimer, finish: (ok: boolean) => Promise<void>): Promise<QueryResult> {
    const compose = (inner: string) => resultSql(spec.format, columns, 'copy', inner);
    const sql = await composeChecked(spec.statement, compose);
    const copy = conn.copyOut!(sql, spec.format);
    const writer = new RowWriter(spec.format, columns);
    const gate = this.options.interactive;
    const rate = this.options.bulkRate ?? 0;
    async function* produce(): AsyncGenerator<Buffer> {
      let ok = false;
      try {
        // CSV's header comes out of COPY; JSON's and XML's frame is the service's.
        if (spec.format !== 'CSV') yield Buffer.from(writer.start());
        for await (const part of copy) {
          yield part as Buffer;
          await gate?.giveWay((part as Buffer).length, rate);
        }
        if (spec.format !== 'CSV') yield Buffer.from(writer.end(copy.rows));
        ok = true;
      } catch (err) {
        throw toFailure(err, timer, spec.timeoutMs, positionOf(err, spec.statement, compose));
      } finally {
        await finish(ok);
      }
    }
    return this.readAhead(produce(), () => conn.kill(), () => copy.rows);
  }

  /** Embedded: rows fetched from a cursor into a temporary file; the file is the result. */
  private async spooled(conn: Connection, spec: QuerySpec, columns: Column[], timer: StatementTimer, finish: (ok: boolean) => Promise<void>,
    onRows?: (rows: number) => void): Promise<QueryResult> {
    const compose = (inner: string) => resultSql(spec.format, columns, 'cursor', inner);
    const sql = await composeChecked(spec.statement, compose);
    // Unlinked as soon as it is open: the handle is the only way to the rows, and nothing is left behind once it is
    // closed, whether the result was read, abandoned, or the process was killed.
    const file = join(tmpdir(), `query-${randomUUID()}`);
    const spool = await open(file, 'w+');
    await rm(file, { force: true });
    let rows = 0;
    try {
      const writer = new RowWriter(spec.format, columns);
      await spool.write(writer.start());
      await timer.guard(() => located(spec.statement, compose, () => conn.query(sql)));
      for (;;) {
        // Arrays, not objects: two columns may share a name.
        const batch = await timer.guard(() => conn.query(`fetch forward ${FETCH_ROWS} from query_result`, [], 'array'));
        if (!batch.rows.length) break;
        rows += batch.rows.length;
        onRows?.(rows);
        const values = batch.rows as unknown as (string | null)[][];
        // No giving way here: the embedded database has one connection, which every other request waits for
        // until this run is done. The file gives way as it is read (below).
        await spool.write(spec.format === 'CSV' ? writer.csvRows(values, columns.length) : writer.fetchedRows(values.map((r) => r[0]!)));
      }
      await spool.write(writer.end(rows));
      await finish(true);
    } catch (err) {
      await spool.close().catch(() => undefined);
      throw err;
    }
    // Closes the handle once read to the end or destroyed.
    const spooled = createReadStream(file, { fd: spool, start: 0 });
    const gate = this.options.interactive;
    const rate = this.options.bulkRate ?? 0;
    async function* paced(): AsyncGenerator<Buffer> {
      for await (const part of spooled) {
        yield part as Buffer;
        await gate?.giveWay((part as Buffer).length, rate);
      }
    }
    const stream = Readable.from(paced(), { objectMode: false });
    // Also when it is closed before anyone read it, which leaves the generator unstarted.
    stream.once('close', () => spooled.destroy());
    return { stream, rows: () => rows };
  }

  /** Holds the result back until READ_AHEAD_BYTES are ready or it is complete; a failure before that rejects. */
  private async readAhead(source: AsyncGenerator<Buffer>, kill: () => void, rows: () => number): Promise<QueryResult> {
    const first: Buffer[] = [];
    let size = 0;
    let done = false;
    while (size < READ_AHEAD_BYTES) {
      const next = await source.next();
      if (next.done) {
        done = true;
        break;
      }
      first.push(next.value);
      size += next.value.length;
    }
    return { stream: new ResultStream(source, first, done, kill), rows };
  }

  /** The state of a pooled connection, for tests: what a run must leave behind is nothing. */
  async inspect(): Promise<Record<string, unknown>> {
    const conn = await this.connect();
    try {
      const r = await conn.query(`select current_user as "currentUser", session_user as "sessionUser",
          current_setting('search_path') as "searchPath", coalesce(current_setting('service.tenants', true), '') as tenants,
          coalesce(current_setting('service.version', true), '') as version, coalesce(current_setting('service.language', true), '') as language,
          current_setting('transaction_read_only') as "readOnly", current_setting('statement_timeout') as "statementTimeout",
          (select count(*) from pg_locks where pid = pg_backend_pid() and locktype = 'advisory')::int as "advisoryLocks",
          (select count(*) from pg_locks where pid = pg_backend_pid() and granted and locktype not in ('virtualxid', 'transactionid')
             and not (locktype = 'relation' and relation in ('pg_locks'::regclass))) ::int as "otherLocks"`);
      return r.rows[0];
    } finally {
      conn.release(false);
    }
  }
}

/**
 * The timeout of one run where the database does not keep it (embedded):
 * interrupts a statement that outlives it. The clock starts when the
 * caller's statement is first sent (described), not while the transaction
 * is set up: a fresh copy's first statements load its catalogue, and on a
 * busy machine that alone outlasted a 700 ms timeout.
 */
class StatementTimer {
  private timedOut = false;
  private running = false;
  private timer?: NodeJS.Timeout;

  constructor(private readonly timeoutMs: number, private readonly interrupt?: () => void) {}

  private start() {
    if (this.timer || this.timeoutMs <= 0 || !this.interrupt) return;
    const interrupt = this.interrupt;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      if (this.running) interrupt();
    }, this.timeoutMs);
  }

  get expired() {
    return this.timedOut;
  }

  async guard<T>(task: () => Promise<T>): Promise<T> {
    this.start();
    if (this.timedOut) throw Object.assign(new Error('canceling statement due to statement timeout'), { code: TIMEOUT_CODE });
    this.running = true;
    try {
      return await task();
    } finally {
      this.running = false;
    }
  }

  stop() {
    clearTimeout(this.timer);
  }
}

/**
 * Where in the caller's statement a database error of `compose(statement)`
 * lies: PostgreSQL's `position` (1-based, characters of the statement it
 * ran) less the template's text before the caller's; none when the error
 * has no position or it lies in the template's own text.
 */
function positionOf(err: unknown, statement: CheckedStatement, compose: (inner: string) => string): number | undefined {
  const position = Number((err as { position?: unknown } | null)?.position);
  if (!Number.isInteger(position) || position < 1) return undefined;
  return callerPosition(statement, position - 1 - statementOffset(compose));
}

/** Runs a step of a composed statement; a database error keeps its position, translated into the caller's statement. */
async function located<T>(statement: CheckedStatement, compose: (inner: string) => string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const position = positionOf(err, statement, compose);
    const e = err as { code?: unknown; message?: string };
    // A statement's error (SQLSTATE) with a place in the caller's text; anything else as it came (toFailure decides).
    if (position === undefined || err instanceof QueryFailure || typeof e?.code !== 'string' || !/^[0-9A-Z]{5}$/.test(e.code)) throw err;
    throw new QueryFailure(e.message ?? String(err), false, e.code, position);
  }
}

function toFailure(err: unknown, timer: StatementTimer, timeoutMs: number, position?: number): unknown {
  if (err instanceof QueryFailure) return err;
  if (err instanceof CompositionRefused) return new QueryFailure(`the statement cannot be run: ${err.message}`);
  const e = err as { code?: string; message?: string };
  // The embedded database was interrupted by the timer: its own text would speak of the interruption.
  if (timeoutMs > 0 && timer.expired) return new QueryFailure('canceling statement due to statement timeout', true, TIMEOUT_CODE);
  if (timeoutMs > 0 && e?.code === TIMEOUT_CODE) return new QueryFailure(e.message ?? 'canceling statement due to statement timeout', true, TIMEOUT_CODE);
  // SQLSTATE codes are five characters; a network error (ECONNRESET …) is the service's problem, not the statement's.
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return new QueryFailure(e.message ?? String(err), false, e.code, position);
  return err;
}
