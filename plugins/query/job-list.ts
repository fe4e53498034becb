/**
 * The list of jobs (`GET /api/<db>/jobs`), newest first, for the user
 * interface and integrations to follow what they started.
 *
 * Whose jobs a caller sees: with `mine=true`, the caller's own (started
 * under the caller's login ID in the login tenant). Without it, system
 * administrators see every job of the database, administrators every job
 * of their login tenant but those a system administrator started over all
 * tenants (as reading a job by its key allows), everyone else only their
 * own. Another tenant's jobs are never listed. Expired jobs are gone.
 */
import { createError, schemaOf, UUID, type DatabaseInfo, type PluginHost, type Principal } from '../../runtime/host.ts';
import type { Context } from 'koa';
import type { Knex } from 'knex';

const MAX_LIMIT = 10_000;

interface JobListRow {
  id: string;
  status: string;
  kind: string;
  format: string;
  statement: string | null;
  login_id: string;
  created_us: string;
  created_ms: string;
  started_ms: string | null;
  finished_ms: string | null;
  elapsed_ms: string | null;
}

interface Page {
  limit?: number;
  /** Keyset: creation time in epoch microseconds and technical key of the last job of the previous page. */
  after?: { createdUs: string; id: string };
}

function invalidParameter(name: string) {
  return createError('INVALID_PARAMETER', { name }, [{ path: name, key: 'invalidValue', params: {} }]);
}

function single(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw invalidParameter(name);
  return value;
}

function mineOf(ctx: Context): boolean {
  const text = single(ctx, 'mine');
  if (text === undefined) return false;
  if (!/^(true|false)$/i.test(text)) throw invalidParameter('mine');
  return text.toLowerCase() === 'true';
}

function pageOf(ctx: Context): Page {
  const page: Page = {};
  const limit = single(ctx, 'limit');
  if (limit !== undefined) {
    if (!/^\d{1,5}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT) throw invalidParameter('limit');
    page.limit = Number(limit);
  }
  const cursor = single(ctx, 'cursor');
  if (cursor !== undefined) {
    try {
      const [createdUs, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (typeof createdUs === 'string' && /^\d{1,18}$/.test(createdUs) && typeof id === 'string' && UUID.test(id)) {
        page.after = { createdUs, id };
      }
    } catch {
      // not JSON: refused below like any other cursor the service did not make
    }
    if (!page.after) throw invalidParameter('cursor');
  }
  return page;
}

/** The SQL condition of the jobs a caller may see in the list, and its bindings. */
function visibleTo(principal: Principal, mine: boolean): [string, Knex.RawBinding[]] {
  const ownOnly = mine || (!principal.systemAdmin && principal.accessLevel !== 'ADMINISTRATOR');
  // Jobs over all tenants are for system administrators only, also to the one who started them while one.
  const allTenants = principal.systemAdmin ? '' : ' and not all_tenants';
  if (ownOnly) return [`tenant = ?::uuid and login_id = ?${allTenants}`, [principal.tenant!, principal.loginId]];
  if (principal.systemAdmin) return ['true', []];
  return [`tenant = ?::uuid${allTenants}`, [principal.tenant!]];
}

async function readJobs(knex: Knex, db: string, where: [string, Knex.RawBinding[]], page: Page): Promise<{ rows: JobListRow[]; total: number }> {
  const table = `"${schemaOf(db)}".query_jobs`;
  const [condition, params] = where;
  const live = `(${condition}) and (expires_at is null or expires_at > now())`;
  const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::bigint`;
  let sql = `select id, status, kind, format, statement, login_id, (extract(epoch from created_at) * 1000000)::bigint::text as created_us,
       ${ms('created_at')} as created_ms, ${ms('started_at')} as started_ms, ${ms('finished_at')} as finished_ms,
       (extract(epoch from coalesce(finished_at, now()) - started_at) * 1000)::bigint as elapsed_ms
     from ${table} where ${live}`;
  const bindings: Knex.RawBinding[] = [...params];
  if (page.after) {
    sql += ` and (created_at, id) < (timestamptz 'epoch' + ?::bigint * interval '1 microsecond', ?::uuid)`;
    bindings.push(page.after.createdUs, page.after.id);
  }
  sql += ' order by created_at desc, id desc';
  if (page.limit) {
    sql += ' limit ?';
    bindings.push(page.limit + 1);
  }
  const rows = (await knex.raw(sql, bindings)).rows as JobListRow[];
  const total = (await knex.raw(`select count(*)::int as n from ${table} where ${live}`, params)).rows[0].n as number;
  return { rows, total };
}

const msOrNull = (value: string | null) => (value === null ? null : Number(value));

function rendered(row: JobListRow, jobsHref: string) {
  const job = `${jobsHref}/${row.id}`;
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    format: row.format,
    statement: row.statement,
    createdBy: row.login_id,
    created: Number(row.created_ms),
    started: msOrNull(row.started_ms),
    finished: msOrNull(row.finished_ms),
    elapsedMs: msOrNull(row.elapsed_ms),
    _links: { statistics: { href: `${job}/statistics` }, logs: { href: `${job}/logs` }, download: { href: `${job}/download` } },
  };
}

export function registerJobList(host: PluginHost) {
  host.api.get('/jobs', async (ctx) => {
    const principal = ctx.state.principal as Principal;
    const db = ctx.state.db as DatabaseInfo;
    const mine = mineOf(ctx);
    const page = pageOf(ctx);
    const { rows, total } = await readJobs(host.knex, db.name, visibleTo(principal, mine), page);
    const more = page.limit !== undefined && rows.length > page.limit;
    if (more) rows.pop();
    const url = new URL(ctx.href);
    const jobsHref = `${url.origin}${url.pathname.replace(/\/$/, '')}`;
    let next: string | undefined;
    if (more) {
      const last = rows[rows.length - 1];
      url.searchParams.set('cursor', Buffer.from(JSON.stringify([last.created_us, last.id]), 'utf8').toString('base64url'));
      next = url.toString();
    }
    ctx.body = {
      total,
      _links: { self: { href: ctx.href }, ...(next ? { next: { href: next } } : {}) },
      _embedded: { jobs: rows.map((row) => rendered(row, jobsHref)) },
    };
  });
}
