/**
 * Installs the generated SQL of a database schema: the views of the query
 * interface, and the indexes the metamodel asks for. Both name their tables
 * unqualified (the views bind them when created), so they run with
 * `search_path` set to that schema.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { DATABASE_NAME, schemaOf } from './migrations.ts';

export const VIEWS_FILE = 'views.gen.sql';


export function readViewsSql(generatedDir: string): string {
  return readFileSync(join(generatedDir, VIEWS_FILE), 'utf8');
}

/** Drops and recreates the views of database `db` in one transaction. */
export function applyViews(knex: Knex | Knex.Transaction, db: string, sql: string): Promise<void> {
  return applyInSchema(knex, db, sql, 'views');
}

/** Creates the generated indexes of database `db` that are missing and drops those of an earlier metamodel, in one transaction. */
export function applyIndexes(knex: Knex | Knex.Transaction, db: string, sql: string): Promise<void> {
  return applyInSchema(knex, db, sql, 'indexes');
}

async function applyInSchema(knex: Knex | Knex.Transaction, db: string, sql: string, what: string): Promise<void> {
  // The name ends up quoted in SQL; the pattern keeps it from closing the quotes.
  if (!DATABASE_NAME.test(db)) throw new Error(`invalid database name: ${db}`);
  const schema = schemaOf(db);
  await knex.transaction(async (trx) => {
    // Instances starting at once would otherwise drop each other's views mid-way.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`${what}:${schema}`]);
    await trx.raw(`set local search_path to "${schema}"`);
    // knex turns every `?` into a binding placeholder; `\?` keeps it a question mark.
    await trx.raw(sql.replaceAll('?', '\\?'));
  });
}
