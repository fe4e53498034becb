/**
 * The read-only database role of the query interface
 * (SERVICE_DATABASE_READONLY_USER): created by the service when missing, and
 * granted, in every database schema, USAGE on the schema and SELECT on the
 * generated views — nothing else. The views run with their owner's rights
 * over the tables beneath them and filter by the transaction's settings, so
 * the role reads exactly what the views show and no table directly.
 *
 * Roles belong to the whole PostgreSQL cluster; creating one races with
 * other instances starting at the same time, which the exception handler
 * absorbs. Without a password the role cannot log in (the service switches
 * to it with SET LOCAL ROLE); with SERVICE_DATABASE_READONLY_PASSWORD it can,
 * for tools of the operator's own.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { saslprep } from '@mongodb-js/saslprep';
import type { Knex } from 'knex';
import { CONTROL_SCHEMA, literal, schemaOf } from '../../runtime/host.ts';

/** Role names end up quoted in SQL and in literals; the pattern keeps them from closing either. */
export const ROLE_NAME = '^[a-z_][a-z0-9_]{0,62}$';


/**
 * The password as PostgreSQL keeps it (pg_authid.rolpassword): a SCRAM-SHA-256
 * verifier, `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`
 * (RFC 5803), computed here so that the password itself never travels to the
 * server, where log_statement or an error's context could write it down.
 * The password is prepared with SASLprep, as the server and libpq do, and
 * used as it is when SASLprep refuses it, as they do too.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  let prepared = password;
  try {
    prepared = saslprep(password);
  } catch {
    // Prohibited characters: the server hashes the bytes as they are.
  }
  const salted = pbkdf2Sync(prepared, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

export async function ensureRole(q: Knex | Knex.Transaction, role: string, password: string | undefined): Promise<void> {
  if (!new RegExp(ROLE_NAME).test(role)) throw new Error(`invalid role name: ${role}`);
  await q.transaction(async (trx) => {
    // Instances starting at once would otherwise fail on each other's grants ("tuple concurrently updated").
    await trx.raw(`select pg_advisory_xact_lock(hashtext('query-role'))`);
    // Options that keep the role from doing anything but reading, whatever it is granted later by hand.
    await trx.raw(`do $body$ begin
        if not exists (select from pg_roles where rolname = ${literal(role)}) then
          begin
            create role "${role}" nologin nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls;
          exception when duplicate_object or unique_violation then null;
          end;
        end if;
      end $body$`);
    if (password) {
      // Only its verifier travels, as a bound value, never as text of a statement. The ALTER ROLE built from it
      // would stand in the CONTEXT of its error (server log, error fields): a failure is raised again with
      // its code and message only.
      await trx.raw(`select set_config('service.readonly_password', ?, true)`, [scramVerifier(password)]);
      await trx.raw(`do $body$ begin
          execute format('alter role %I login password %L', ${literal(role)}, current_setting('service.readonly_password'));
        exception when others then
          raise exception using errcode = sqlstate, message = sqlerrm;
        end $body$`);
      await trx.raw(`select set_config('service.readonly_password', '', true)`);
    }
    // A service login that is not a superuser needs membership to SET ROLE; a superuser may switch to any role.
    await trx.raw(`do $body$ begin
        if not (select rolsuper from pg_roles where rolname = current_user) and not pg_has_role(current_user, ${literal(role)}, 'member') then
          execute format('grant %I to %I', ${literal(role)}, current_user);
        end if;
      end $body$`);
    // Grants given to the role by hand are taken back; what PUBLIC may do (e.g. call built-in functions) is the cluster's and stays.
    await trx.raw(`revoke all on schema "${CONTROL_SCHEMA}" from "${role}"`);
    await trx.raw(`revoke all on all tables in schema "${CONTROL_SCHEMA}" from "${role}"`);
    await trx.raw(`do $body$ begin
        if exists (select from pg_namespace where nspname = 'public') then
          execute format('revoke all on schema public from %I', ${literal(role)});
          execute format('revoke all on all tables in schema public from %I', ${literal(role)});
          execute format('revoke all on all functions in schema public from %I', ${literal(role)});
        end if;
      end $body$`);
  });
}

/** Whether the role may read every view of the database already (views recreated lose their grants). */
async function granted(q: Knex | Knex.Transaction, db: string, role: string, views: string[]): Promise<boolean> {
  const r = await q.raw(
    `select count(*)::int as missing from unnest(?::text[]) v
     where to_regclass(format('%I.%I', ?::text, v)) is null or not has_table_privilege(?, format('%I.%I', ?::text, v), 'SELECT')`,
    [views, schemaOf(db), role, schemaOf(db)],
  );
  return r.rows[0].missing === 0;
}

/**
 * The grants of one database: the generated views, and nothing else of its
 * schema. Skipped when every view is granted already (a start without
 * changed views), so that a start costs one query per database.
 */
export async function grantViews(q: Knex | Knex.Transaction, db: string, role: string, views: string[]): Promise<void> {
  const schema = `"${schemaOf(db)}"`;
  if (await granted(q, db, role, views)) return;
  await q.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtext('query-role'))`);
    await trx.raw(`revoke all on all tables in schema ${schema} from "${role}"`);
    await trx.raw(`revoke all on all sequences in schema ${schema} from "${role}"`);
    await trx.raw(`revoke all on all functions in schema ${schema} from "${role}"`);
    await trx.raw(`revoke create on schema ${schema} from "${role}"`);
    await trx.raw(`grant usage on schema ${schema} to "${role}"`);
    if (views.length) await trx.raw(`grant select on ${views.map((v) => `${schema}."${v}"`).join(', ')} to "${role}"`);
  });
}

/** The names of the generated views, from their definitions. */
export function viewNames(viewsSql: string): string[] {
  return [...viewsSql.matchAll(/^create view ([a-z_][a-z0-9_]*)/gm)].map((m) => m[1]).sort();
}
