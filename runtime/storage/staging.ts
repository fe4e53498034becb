/**
 * Staged writes (runtime/rest/bulk-writes.ts): the rows of a bulk write are
 * put into `staged_objects` in parts, each part a COPY of its own that
 * commits at once, under a batch nobody else reads; then one transaction
 * writes them to `objects` and `history` with set-based statements over the
 * staged rows, the statements ObjectStore.insert and update run over a JSON
 * parameter (history's row, plainObject, made by the database:
 * plainObjectSql). Staging moves the transfer and parsing of the rows out of
 * that transaction: on the embedded database (one connection, which the
 * transaction holds) 15,000 new objects took 13.1 s + 3.4 s (objects,
 * history) from a JSON parameter and 8.6 s + 1.1 s from the staged rows.
 *
 * COPY's text format rather than a JSON parameter (jsonb_to_recordset), and
 * without history's row: for the upload of 110,000 objects (bench/transfer-
 * upload.ts, PostgreSQL) staging sent 46 MB instead of 101 MB, and a JSON
 * parameter of 110,000 records alone took PostgreSQL 2.5 s to take apart.
 *
 * A batch keeps a heartbeat while it is staged; one whose writer stopped
 * (its instance died) is removed by the next batch (STALE_MS).
 */
import { randomUUID } from 'node:crypto';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Knex } from 'knex';
import { schemaOf } from './migrations.ts';
import { RaceLost } from './retry.ts';
import { plainObjectSql, type StoredObject } from './objects.ts';
import { noTurn, type Turn } from '../interactive.ts';

/** A batch whose heartbeat is older than this was left by a writer that stopped. */
export const STALE_MS = 10 * 60_000;
/**
 * A part staged this long after the batch's last heartbeat renews it. Not
 * every part: on the embedded database a part is kept small while people
 * browse (bulk-writes.ts), and a statement of its own for each of hundreds
 * of parts would double the time they hold the database.
 */
export const HEARTBEAT_MS = 10_000;
/** Staged rows removed by one statement when a batch is closed. */
export const CLOSE_PART = 2000;
/** Objects whose lines a part makes between two calls of its `between` (see `StagedBatch.stage`). */
export const LINES_BETWEEN = 64;

/** Staged rows of one kind of change, in staging order: `seq` from `from` to below `to`. */
export interface StagedGroup {
  operation: 'create' | 'update';
  from: number;
  to: number;
}

const NAMES = 'id, tenant, type, parent_id, list, label, title, description, status, model_id, version, created_by, date_created, modified_by, date_modified, props, custom';

interface CopyConnection {
  query(stream: Writable): Writable;
}

/** A value in COPY's text format: `\N` for null, JSON for objects, text with backslash, newline, return and tab escaped. */
function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[\\\n\r\t]/.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]) : text;
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One staged row in COPY's text format, its columns in the order of `batch, seq, operation, NAMES`. */
function copyLine(batch: string, seq: number, operation: string, o: StoredObject): string {
  return [batch, seq, operation, o.id, o.tenant, o.type, o.parentId, o.list, o.label, o.title, o.description, o.status, o.modelId,
    o.version, o.createdBy, o.dateCreated, o.modifiedBy, o.dateModified, o.props, o.custom].map(copyValue).join('\t') + '\n';
}

export class StagedBatch {
  readonly id = randomUUID();
  readonly groups: StagedGroup[] = [];
  private readonly s: string;
  private next = 0;
  /** When the batch's heartbeat was last renewed (performance.now() time). */
  private beat = -Infinity;

  /** `heartbeatMs`: how often a part renews the heartbeat (HEARTBEAT_MS; tests make it 0). */
  constructor(private readonly knex: Knex, readonly db: string, private readonly heartbeatMs = HEARTBEAT_MS) {
    this.s = `"${schemaOf(db)}"`;
  }

  /** Opens the batch; removes the batches of writers that stopped. */
  async open(): Promise<void> {
    await this.knex.raw(`delete from ${this.s}.staged_batches where heartbeat_at < now() - make_interval(secs => ?)`, [STALE_MS / 1000]);
    await this.knex.raw(`insert into ${this.s}.staged_batches (id) values (?)`, [this.id]);
    this.beat = performance.now();
  }

  /**
   * Stages one part of objects (a COPY of its own, after renewing the batch's heartbeat when HEARTBEAT_MS have
   * passed); consecutive parts of one operation make one group. Returns the milliseconds its COPY waited for a
   * connection and held it (on the embedded database, what every request waits for meanwhile). A batch removed
   * meanwhile (its heartbeat was stale) is a lost race. `between` is awaited every LINES_BETWEEN objects while
   * their lines are made: about 5 µs each, 10-15 ms for a part of 2,000 that a request would otherwise wait for
   * (bulk-writes.ts gives the gate's turn).
   */
  async stage(operation: StagedGroup['operation'], objects: StoredObject[], between: Turn = noTurn): Promise<number> {
    if (!objects.length) return 0;
    const from = this.next;
    if (performance.now() - this.beat >= this.heartbeatMs) {
      const touched = await this.knex.raw(`update ${this.s}.staged_batches set heartbeat_at = now() where id = ?::uuid returning id`, [this.id]);
      if (!touched.rows.length) throw new RaceLost();
      this.beat = performance.now();
    }
    const lines: string[] = [];
    for (const [i, o] of objects.entries()) {
      lines.push(copyLine(this.id, from + i, operation, o));
      if (i % LINES_BETWEEN === LINES_BETWEEN - 1) await between();
    }
    const text = lines.join('');
    const client = this.knex.client as { acquireConnection(): Promise<CopyConnection>; releaseConnection(c: unknown): Promise<void> };
    const started = performance.now();
    const connection = await client.acquireConnection();
    try {
      await pipeline(Readable.from([text]), connection.query(copyFrom(`copy ${this.s}.staged_objects (batch, seq, operation, ${NAMES}) from stdin`)));
    } finally {
      await client.releaseConnection(connection);
    }
    const ms = performance.now() - started;
    this.next += objects.length;
    const last = this.groups.at(-1);
    if (last && last.operation === operation && last.to === from) last.to = this.next;
    else this.groups.push({ operation, from, to: this.next });
    return ms;
  }

  /**
   * Writes the staged rows of a group from `from` to below `to` in the
   * caller's transaction, as ObjectStore.insert or ObjectStore.update
   * would write them; `now` is the write's time (history's valid_from).
   * An update whose object is not at the version before throws RaceLost.
   */
  async apply(trx: Knex.Transaction, group: StagedGroup, from: number, to: number, now: number, actor: string): Promise<void> {
    const staged = `select * from ${this.s}.staged_objects where batch = ?::uuid and seq >= ? and seq < ?`;
    const range = [this.id, from, to];
    if (group.operation === 'update') await this.update(trx, staged, range, to - from, now);
    else {
      await trx.raw(
        `insert into ${this.s}.objects (id, tenant, type, parent_id, list, label, title, description, status, model_id, version,
           created_by, date_created, modified_by, date_modified, props, custom)
         select id, tenant, type, parent_id, list, label, title, description, status, model_id, version,
           created_by, to_timestamp(date_created / 1000.0), modified_by, to_timestamp(date_modified / 1000.0), props, custom
         from (${staged}) v order by seq`,
        range,
      );
    }
    await trx.raw(
      `insert into ${this.s}.history (id, version, tenant, type, parent_id, list, operation, valid_from, changed_by, row)
       select id, version, tenant, type, parent_id, list, ?, to_timestamp(? / 1000.0), ?, ${plainObjectSql('v', this.db)} from (${staged}) v`,
      [group.operation, now, actor, ...range],
    );
  }

  private async update(trx: Knex.Transaction, staged: string, range: Knex.RawBinding[], count: number, now: number): Promise<void> {
    // Labels are unique among siblings row by row, so objects that swap or shift labels first give theirs up.
    await trx.raw(
      `update ${this.s}.objects o set label = chr(1) || o.id::text from (${staged}) v where o.id = v.id and o.label <> v.label`,
      range,
    );
    const r = await trx.raw(
      `update ${this.s}.objects o set parent_id = v.parent_id, list = v.list, label = v.label, title = v.title,
         description = v.description, status = v.status, model_id = v.model_id, version = v.version,
         modified_by = v.modified_by, date_modified = to_timestamp(v.date_modified / 1000.0), props = v.props, custom = v.custom
       from (${staged}) v
       where o.id = v.id and o.tenant = v.tenant and o.version = v.version - 1
       returning o.id`,
      range,
    );
    if (r.rows.length !== count) throw new RaceLost();
    await trx.raw(
      `update ${this.s}.history set valid_to = to_timestamp(? / 1000.0)
       where id in (select id from (${staged}) v) and valid_to is null`,
      [now, ...range],
    );
  }

  /** Removes the batch and its rows (in the write's transaction, or after a failure). */
  async close(q: Knex | Knex.Transaction = this.knex, between: Turn = noTurn): Promise<void> {
    // The staged rows in parts, each a statement of its own, `between` awaited after each: on the embedded database
    // one statement that removed 110,000 of them (the cascade) held its one connection about a second.
    for (let at = 0; at < this.next; at += CLOSE_PART) {
      await q.raw(`delete from ${this.s}.staged_objects where batch = ?::uuid and seq >= ? and seq < ?`, [this.id, at, at + CLOSE_PART]);
      await between();
    }
    await q.raw(`delete from ${this.s}.staged_batches where id = ?::uuid`, [this.id]);
  }
}
