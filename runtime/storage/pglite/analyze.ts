/**
 * Table statistics for the embedded database. PostgreSQL's autovacuum
 * analyses a table once enough of it has changed; PGlite runs no background
 * worker and keeps no change counts, so its planner would price every table
 * as it was when created (no statistics, a guessed size) and, on a large
 * database, pick plans that read whole tables. Every `intervalMs` this looks
 * for tables whose size in pages has moved from what the last ANALYZE saw by
 * more than autovacuum's own threshold (50 rows' worth, here 8 pages, plus a
 * tenth of the table) and analyses them, one at a time.
 *
 * Unlogged tables are left out: they are bulk writes' staging (migrations.ts),
 * whose rows live for the seconds of one upload, so their statistics would
 * describe rows already gone (the planner then goes by their size in pages).
 * Analysing 110,000 staged rows held the one connection for 105 ms in the
 * middle of an upload, and a GET waited for it.
 */
import type { Knex } from 'knex';
import type { StorageLog } from './host.ts';

const STALE_TABLES = `
  select format('%I.%I', n.nspname, c.relname) as name
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind = 'r' and c.relpersistence = 'p' and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
    and abs(pg_relation_size(c.oid) / current_setting('block_size')::int - greatest(c.relpages, 0)) > 8 + 0.1 * greatest(c.relpages, 0)
  order by n.nspname, c.relname`;

/** Analyses the tables that grew or shrank since their last analysis; returns their names. */
export async function analyzeStaleTables(knex: Knex): Promise<string[]> {
  const names = ((await knex.raw(STALE_TABLES)).rows as { name: string }[]).map((r) => r.name);
  // One statement each, so that other statements can pass between them on the one connection.
  for (const name of names) await knex.raw(`analyze ${name}`);
  return names;
}

/** Runs analyzeStaleTables every `intervalMs` until stopped; a failure is logged and tried again next time. */
export function keepStatistics(knex: Knex, log: StorageLog, intervalMs = 30_000): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    analyzeStaleTables(knex).then(
      (names) => { if (names.length) log.info({ tables: names }, 'embedded database: statistics renewed'); },
      (err: Error) => log.warn({ err: err.message }, 'embedded database: statistics not renewed'),
    ).finally(() => { running = false; });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
