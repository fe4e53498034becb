/**
 * Asynchronous queries (POST /api/<db>/queries/download): jobs kept in the
 * database, so that any instance reports on and serves any job (decisions
 * §5). The instance that accepted a job runs it, writes its result in chunks
 * of at most 1 MB (bytea rows), and touches the job's heartbeat while it is
 * queued or running. Whoever finds a queued or running job whose heartbeat
 * is older than three of its instance's intervals marks it FAILED: its
 * instance stopped. Finished jobs are removed after SERVICE_JOB_RETENTION.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { schemaOf, translate, UUID, type Databases, type InteractiveGate, type JobSubmission, type Language } from '../../runtime/host.ts';
import { checkStatement, StatementRefused } from './sandbox.ts';
import { QueryFailure, type QueryEngine, type QuerySpec } from './runner.ts';
import type { Format } from './formats.ts';
import type { TenantSlots } from './tenant-slots.ts';

export const JOB_MIGRATIONS = [
  `create table $S.query_jobs (
     id uuid primary key,
     tenant uuid not null,
     all_tenants boolean not null,
     login_id text not null,
     format text not null,
     language text not null,
     status text not null check (status in ('QUEUED', 'RUNNING', 'COMPLETED', 'FAILED')),
     instance text not null,
     heartbeat_ms integer not null,
     heartbeat_at timestamptz not null default now(),
     created_at timestamptz not null default now(),
     started_at timestamptz,
     finished_at timestamptz,
     expires_at timestamptz,
     row_count bigint,
     byte_count bigint,
     messages jsonb not null default '[]'::jsonb,
     logs jsonb not null default '[]'::jsonb
   );
   create index query_jobs_active on $S.query_jobs (heartbeat_at) where status in ('QUEUED', 'RUNNING');
   create index query_jobs_expires on $S.query_jobs (expires_at);
   create table $S.query_job_chunks (
     job_id uuid not null references $S.query_jobs(id) on delete cascade,
     seq integer not null,
     data bytea not null,
     primary key (job_id, seq)
   );
   create table $S.query_settings (
     singleton boolean primary key default true check (singleton),
     statement_timeout integer check (statement_timeout >= 0),
     updated_at timestamptz not null default now(),
     updated_by text
   );`,
  // A deleted tenant's jobs go with it (not checked for the rows before: until now no tenant could be deleted).
  `create index query_jobs_tenant on $S.query_jobs (tenant);
   alter table $S.query_jobs add constraint query_jobs_tenant_fkey foreign key (tenant) references $S.objects(id) on delete cascade not valid;`,
  // The list of jobs (job-list.ts) shows the start of each job's statement; jobs started before have none.
  `alter table $S.query_jobs add column statement text;
   create index query_jobs_created on $S.query_jobs (created_at desc, id desc);`,
  // Jobs of other plugins in the same address space (host.jobs(): uploads), with figures of their own.
  `alter table $S.query_jobs add column kind text not null default 'query';
   alter table $S.query_jobs add column statistics jsonb;`,
];

/** How much of a statement the list of jobs shows. */
const STATEMENT_EXCERPT = 200;

/** The start of a statement, its white space collapsed, for the list of jobs. */
export function statementExcerpt(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  return text.length > STATEMENT_EXCERPT ? `${text.slice(0, STATEMENT_EXCERPT - 1)}…` : text;
}

const CHUNK_BYTES = 1024 * 1024;
/** How often a running job's progress is written to its row. */
const PROGRESS_MS = 1000;
/** A heartbeat older than this many intervals means the instance is gone. */
const STALE_INTERVALS = 3;

export interface JobOwner {
  tenant: string;
  /** Started by a system administrator reading every tenant: only system administrators may see it. */
  allTenants: boolean;
  loginId: string;
}

export interface JobViewer {
  tenant?: string;
  systemAdmin: boolean;
}

export interface JobProgress {
  /** Rows of the result read so far (all of them once completed). */
  rows: number;
  /** Bytes of the result stored so far. */
  bytes: number;
  /** Milliseconds since the statement started, until it finished. */
  elapsedMs: number;
}

export interface JobRow {
  id: string;
  status: 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED';
  /** `query`, or the kind of another plugin's job (host.jobs()). */
  kind: string;
  /** Who started it, in the job's tenant. */
  loginId: string;
  /** Another plugin's figures of progress. */
  statistics?: Record<string, number>;
  format: Format;
  /** Absent while queued and after a failure. */
  progress?: JobProgress;
  messages: { level: string; message: string }[];
  logs: { level: string; message: string }[];
}

type Entry = { level: 'INFO' | 'ERROR'; message: string };

export interface JobRequest {
  db: string;
  sql: string;
  views: ReadonlySet<string>;
  /** SERVICE_QUERY_SCHEMA. */
  schema: string;
  spec: Omit<QuerySpec, 'statement' | 'db'>;
  owner: JobOwner;
}

export interface JobOptions {
  knex: Knex;
  engine: QueryEngine;
  databases: Databases;
  log: Logger;
  heartbeatMs: number;
  retentionMs: number;
  concurrency: number;
  /** Statements and jobs each tenant may run at once: a job waits for a slot of its tenant. */
  slots: TenantSlots;
  /** Downloads of results give way to interactive requests as exports do (runtime/interactive.ts). */
  interactive?: InteractiveGate;
  bulkRate?: number;
  /** Told when a job of this instance ended (plugins/query/metrics.ts). */
  finished?(status: 'COMPLETED' | 'FAILED'): void;
}

/**
 * A timer's task that skips its turn while the last one still runs: on the
 * embedded database a running job holds the only connection, and ticks would
 * otherwise queue up behind it.
 */
function oneAtATime(task: () => Promise<void>): () => void {
  let running = false;
  return () => {
    if (running) return;
    running = true;
    void task().finally(() => { running = false; });
  };
}

type Queued = { id: string; request: JobRequest; task?: undefined } | { id: string; task: JobSubmission; request?: undefined };

export class JobManager {
  readonly instance = randomUUID();
  private readonly queue: Queued[] = [];
  private readonly active = new Map<string, { db: string; stop: AbortController; done?: Promise<void> }>();
  private running = 0;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly options: JobOptions) {
    options.slots.onRelease(() => this.next());
  }

  /** Jobs this instance has queued and runs now. */
  get counts() {
    return { queued: this.queue.length, running: this.running };
  }

  /** Starts the heartbeat and the sweeper (stale jobs failed, expired ones removed). */
  start() {
    const beat = setInterval(oneAtATime(() => this.heartbeat()), this.options.heartbeatMs);
    const sweepMs = Math.min(60_000, Math.max(100, Math.floor(this.options.retentionMs / 2)));
    const sweep = setInterval(oneAtATime(() => this.sweep()), sweepMs);
    beat.unref();
    sweep.unref();
    this.timers.push(beat, sweep);
  }

  private table(db: string) {
    return `"${schemaOf(db)}".query_jobs`;
  }

  private chunks(db: string) {
    return `"${schemaOf(db)}".query_job_chunks`;
  }

  /** Records the job as QUEUED and queues it on this instance; its id. */
  async submit(request: JobRequest): Promise<string> {
    const id = randomUUID();
    const { owner, spec } = request;
    await this.options.knex.raw(
      `insert into ${this.table(request.db)} (id, tenant, all_tenants, login_id, format, language, status, instance, heartbeat_ms, logs, statement)
       values (?, ?, ?, ?, ?, ?, 'QUEUED', ?, ?, ?::jsonb, ?)`,
      [id, owner.tenant, owner.allTenants, owner.loginId, spec.format, spec.language, this.instance, this.options.heartbeatMs,
        JSON.stringify([{ level: 'INFO', message: translate(spec.language, 'jobQueued') }]), statementExcerpt(request.sql)],
    );
    this.active.set(id, { db: request.db, stop: new AbortController() });
    this.queue.push({ id, request });
    this.next();
    return id;
  }

  /** Another plugin's job (host.jobs()): recorded as QUEUED and run on this instance like a query job. */
  async submitTask(task: JobSubmission): Promise<string> {
    const id = randomUUID();
    await this.options.knex.raw(
      `insert into ${this.table(task.db)} (id, tenant, all_tenants, login_id, format, language, status, instance, heartbeat_ms, logs, statement, kind)
       values (?, ?, false, ?, ?, ?, 'QUEUED', ?, ?, ?::jsonb, ?, ?)`,
      [id, task.owner.tenant, task.owner.loginId, task.format, task.language, this.instance, this.options.heartbeatMs,
        JSON.stringify([{ level: 'INFO', message: translate(task.language, 'jobQueued') }]), statementExcerpt(task.summary), task.kind],
    );
    this.active.set(id, { db: task.db, stop: new AbortController() });
    this.queue.push({ id, task });
    this.next();
    return id;
  }

  /** Starts queued jobs while there is room, in order, passing over those whose tenant has no slot free. */
  private next() {
    for (let i = 0; !this.closed && this.running < this.options.concurrency && i < this.queue.length;) {
      const { id, request, task } = this.queue[i];
      const release = this.options.slots.take(request?.db ?? task!.db, request?.owner.tenant ?? task!.owner.tenant);
      if (!release) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.running++;
      const done = (request ? this.execute(id, request) : this.executeTask(id, task!))
        .catch((err) => this.options.log.error({ err: String(err), job: id }, 'query job failed unexpectedly'))
        .finally(() => {
          this.running--;
          this.active.delete(id);
          release();
          this.next();
        });
      const entry = this.active.get(id);
      if (entry) entry.done = done;
    }
  }

  private async execute(id: string, request: JobRequest) {
    const { knex } = this.options;
    const { db, spec } = request;
    const language = spec.language;
    const started = await knex.raw(
      `update ${this.table(db)} set status = 'RUNNING', started_at = now(), heartbeat_at = now(), logs = logs || ?::jsonb
       where id = ? and status = 'QUEUED' returning id`,
      [JSON.stringify([{ level: 'INFO', message: translate(language, 'jobStarted') }]), id],
    );
    // Another instance found it stale in the meantime (this one was paused): it is not ours to run any more.
    if (!started.rows.length) return;
    let rows = 0;
    let bytes = 0;
    const progress = new ProgressWriter((r, b) => knex.raw(
      `update ${this.table(db)} set row_count = ?, byte_count = ? where id = ? and status = 'RUNNING'`, [r, b, id],
    ).then(() => undefined));
    try {
      const statement = await checkStatement(request.sql, { views: request.views, schema: request.schema, target: schemaOf(db) });
      const signal = this.active.get(id)?.stop.signal;
      const result = await this.options.engine.run({ ...spec, db, statement }, { signal, onRows: (n) => progress.report(n, 0) });
      const stop = () => result.stream.destroy(new QueryFailure(translate(language, 'jobInstanceStopped')));
      if (signal?.aborted) stop();
      else signal?.addEventListener('abort', stop, { once: true });
      let seq = 0;
      let pending: Buffer[] = [];
      let size = 0;
      const flush = async () => {
        if (!size) return;
        await knex.raw(`insert into ${this.chunks(db)} (job_id, seq, data) values (?, ?, ?)`, [id, seq++, Buffer.concat(pending)]);
        bytes += size;
        pending = [];
        size = 0;
        progress.report(result.rows(), bytes);
      };
      for await (const chunk of result.stream) {
        for (let at = 0; at < (chunk as Buffer).length;) {
          const part = (chunk as Buffer).subarray(at, at + CHUNK_BYTES - size);
          pending.push(part);
          size += part.length;
          at += part.length;
          if (size >= CHUNK_BYTES) await flush();
        }
      }
      await flush();
      rows = result.rows();
      await progress.done();
      await this.finish(db, id, 'COMPLETED',
        [{ level: 'INFO', message: translate(language, 'jobCompleted', { rows }) }],
        [{ level: 'INFO', message: translate(language, 'jobCompletedLog', { rows, bytes }) }], rows, bytes);
    } catch (err) {
      await progress.done();
      const stopped = this.active.get(id)?.stop.signal.aborted;
      const cause = stopped ? translate(language, 'jobInstanceStopped') : describeFailure(err, language, spec.timeoutMs);
      if (cause === undefined) this.options.log.error({ err: String(err), job: id }, 'query job failed');
      await this.finish(db, id, 'FAILED',
        [{ level: 'ERROR', message: translate(language, 'jobFailed') }],
        [{ level: 'ERROR', message: cause ?? translate(language, 'internal') }], null, null);
    }
  }

  private async executeTask(id: string, task: JobSubmission) {
    const { knex } = this.options;
    const { db, language } = task;
    const started = await knex.raw(
      `update ${this.table(db)} set status = 'RUNNING', started_at = now(), heartbeat_at = now(), logs = logs || ?::jsonb
       where id = ? and status = 'QUEUED' returning id`,
      [JSON.stringify([{ level: 'INFO', message: translate(language, 'jobTaskStarted') }]), id],
    );
    if (!started.rows.length) return;
    const signal = this.active.get(id)!.stop.signal;
    const progress = new ProgressWriter<Record<string, number>>((figures) => knex.raw(
      `update ${this.table(db)} set statistics = ?::jsonb where id = ? and status = 'RUNNING'`, [JSON.stringify(figures), id],
    ).then(() => undefined));
    let outcome;
    try {
      outcome = await task.run({ progress: (figures) => progress.report(figures), signal });
    } catch (err) {
      this.options.log.error({ err: String(err), job: id }, `${task.kind} job failed unexpectedly`);
      const stopped = signal.aborted;
      const entry = [{ level: 'ERROR' as const, message: translate(language, stopped ? 'jobInstanceStopped' : 'internal') }];
      outcome = { status: 'FAILED' as const, messages: entry, logs: entry, statistics: {} };
    }
    await progress.done();
    if (outcome.result?.length) {
      for (let seq = 0, at = 0; at < outcome.result.length; seq++, at += CHUNK_BYTES) {
        await knex.raw(`insert into ${this.chunks(db)} (job_id, seq, data) values (?, ?, ?)`, [id, seq, outcome.result.subarray(at, at + CHUNK_BYTES)]);
      }
    }
    await knex.raw(`update ${this.table(db)} set statistics = ?::jsonb where id = ?`, [JSON.stringify(outcome.statistics), id]);
    await this.finish(db, id, outcome.status, outcome.messages, outcome.logs, null, outcome.result?.length ?? 0);
  }

  /** Ends a job that is still `from` (another instance may have failed it as stale meanwhile). */
  private async finish(db: string, id: string, status: 'COMPLETED' | 'FAILED', messages: Entry[], logs: Entry[],
    rows: number | null, bytes: number | null, from: 'RUNNING' | 'QUEUED' = 'RUNNING') {
    const ended = await this.options.knex.raw(
      `update ${this.table(db)} set status = ?, finished_at = now(), expires_at = now() + ? * interval '1 millisecond',
         messages = ?::jsonb, logs = logs || ?::jsonb, row_count = ?, byte_count = ?
       where id = ? and status = ?`,
      [status, this.options.retentionMs, JSON.stringify(messages), JSON.stringify(logs), rows, bytes, id, from],
    );
    if (ended.rowCount) this.options.finished?.(status);
  }

  private async heartbeat() {
    const byDb = new Map<string, string[]>();
    for (const [id, { db }] of this.active) byDb.set(db, [...(byDb.get(db) ?? []), id]);
    for (const [db, ids] of byDb) {
      await this.options.knex.raw(
        `update ${this.table(db)} set heartbeat_at = now() where id = any(?::uuid[]) and status in ('QUEUED', 'RUNNING')`, [ids],
      ).catch((err) => this.options.log.warn({ err: String(err), db }, 'query job heartbeat failed'));
    }
  }

  /**
   * Marks the stale jobs of a database FAILED (all of them, or the one with
   * `id`). This instance's own jobs are alive whatever their heartbeat says:
   * the embedded database cannot take a heartbeat while it runs the job's
   * statement on its only connection.
   */
  private async failStale(db: string, id?: string) {
    // In the job's own language (the one it was started in), whoever notices.
    const entry = (language: Language) => JSON.stringify([{ level: 'ERROR', message: translate(language, 'jobInstanceStopped') }]);
    const mine = [...this.active.keys()];
    await this.options.knex.raw(
      `update ${this.table(db)} set status = 'FAILED', finished_at = now(), expires_at = now() + ? * interval '1 millisecond',
         messages = case language when 'de' then ?::jsonb else ?::jsonb end,
         logs = logs || case language when 'de' then ?::jsonb else ?::jsonb end
       where status in ('QUEUED', 'RUNNING') and heartbeat_at < now() - ? * heartbeat_ms * interval '1 millisecond'
         and not (instance = ? and id = any(?::uuid[]))
         ${id ? 'and id = ?' : ''}`,
      [this.options.retentionMs, entry('de'), entry('en'), entry('de'), entry('en'), STALE_INTERVALS,
        this.instance, mine, ...(id ? [id] : [])],
    );
  }

  /** Fails stale jobs and removes expired ones, in every database. */
  async sweep() {
    let names: string[];
    try {
      names = (await this.options.databases.list()).map((d) => d.name);
    } catch (err) {
      this.options.log.warn({ err: String(err) }, 'query job sweep failed');
      return;
    }
    for (const db of names) {
      try {
        await this.failStale(db);
        await this.options.knex.raw(`delete from ${this.table(db)} where expires_at < now()`);
      } catch (err) {
        // A database dropped meanwhile has no jobs left to sweep.
        const code = (err as { code?: string }).code;
        if (code !== '42P01' && code !== '3F000') this.options.log.warn({ err: String(err), db }, 'query job sweep failed');
      }
    }
  }

  /** The job if it exists, has not expired and the viewer may see it; null otherwise (404 for all three alike). */
  async find(db: string, id: string, viewer: JobViewer): Promise<JobRow | null> {
    if (!UUID.test(id)) return null;
    const read = () => this.options.knex.raw(
      `select id, status, kind, login_id, statistics, format, messages, logs, tenant, all_tenants, row_count, byte_count,
              (extract(epoch from coalesce(finished_at, now()) - started_at) * 1000)::bigint as elapsed_ms,
              status in ('QUEUED', 'RUNNING') and heartbeat_at < now() - ? * heartbeat_ms * interval '1 millisecond' as stale
       from ${this.table(db)} where id = ? and (expires_at is null or expires_at > now())`, [STALE_INTERVALS, id],
    );
    let row = (await read()).rows[0];
    // A poll writes only when the job's instance stopped beating: then the job is failed first.
    if (row?.stale && !this.active.has(id)) {
      await this.failStale(db, id);
      row = (await read()).rows[0];
    }
    if (!row) return null;
    if (!viewer.systemAdmin && (row.all_tenants || row.tenant !== viewer.tenant)) return null;
    const progress = row.status === 'RUNNING' || row.status === 'COMPLETED'
      ? { rows: Number(row.row_count ?? 0), bytes: Number(row.byte_count ?? 0), elapsedMs: Number(row.elapsed_ms ?? 0) }
      : undefined;
    return {
      id: row.id, status: row.status, kind: row.kind, loginId: row.login_id, format: row.format, messages: row.messages, logs: row.logs,
      ...(row.kind === 'query' && progress ? { progress } : {}),
      ...(row.kind !== 'query' ? { statistics: row.statistics ?? {} } : {}),
    };
  }

  /** The stored result, a chunk at a time. */
  result(db: string, id: string): Readable {
    const { knex, interactive, bulkRate = 0 } = this.options;
    const chunks = this.chunks(db);
    let seq = 0;
    return new Readable({
      async read() {
        try {
          const r = await knex.raw(`select data from ${chunks} where job_id = ? and seq = ?`, [id, seq++]);
          const data = r.rows.length ? (r.rows[0].data as Buffer) : null;
          if (data) await interactive?.giveWay(data.length, bulkRate);
          this.push(data);
        } catch (err) {
          this.destroy(err as Error);
        }
      },
    });
  }

  /** Stops this instance's jobs: they are marked FAILED (their instance stopped), nothing is left running. */
  async close() {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    for (const { id, request, task } of this.queue.splice(0)) {
      const stopped: Entry[] = [{ level: 'ERROR', message: translate(request?.spec.language ?? task!.language, 'jobInstanceStopped') }];
      await this.finish(request?.db ?? task!.db, id, 'FAILED', stopped, stopped, null, null, 'QUEUED').catch(() => undefined);
      this.active.delete(id);
    }
    for (const entry of this.active.values()) entry.stop.abort();
    await Promise.all([...this.active.values()].map((e) => e.done));
  }
}

/**
 * Keeps a running job's rows and bytes so far in its row, so that whichever
 * instance is asked shows them: written at most every PROGRESS_MS, one
 * write at a time, and never after the job has finished.
 */
class ProgressWriter<A extends unknown[] | Record<string, number> = [number, number]> {
  private last = 0;
  private writing: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(private readonly write: A extends unknown[] ? (...args: A) => Promise<void> : (figures: A) => Promise<void>) {}

  report(...args: A extends unknown[] ? A : [A]): void {
    const now = Date.now();
    if (this.ended || now - this.last < PROGRESS_MS) return;
    this.last = now;
    const write = this.write as (...a: unknown[]) => Promise<void>;
    this.writing = this.writing.then(() => (this.ended ? undefined : write(...args))).catch(() => undefined);
  }

  /** No more writes; resolves once the last one is done, so that the final figures are written after it. */
  async done(): Promise<void> {
    this.ended = true;
    await this.writing;
  }
}

/** The text a failed job's log shows; undefined for a failure of the service itself. */
export function describeFailure(err: unknown, language: Language, timeoutMs: number): string | undefined {
  if (err instanceof StatementRefused) return translate(language, err.key, err.detail);
  if (err instanceof QueryFailure) {
    return err.timedOut ? translate(language, 'statementTimedOut', { timeout: timeoutMs, error: err.message }) : err.message;
  }
  return undefined;
}

/** Where in the caller's statement a failure lies (1-based, in characters), when the sandbox's parser or the database says. */
export function failurePosition(err: unknown): number | undefined {
  return err instanceof StatementRefused || err instanceof QueryFailure ? err.position : undefined;
}
