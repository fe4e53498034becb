/**
 * The calls of the query interface (specification, "Metadata query
 * interface"), below /api/<db>/:
 *
 *   PUT  queries/download       the result, synchronously
 *   POST queries/download       starts a job: {id}
 *   GET  jobs/<id>/statistics   202 while queued or running, then 200; `progress` (rows, bytes, elapsedMs) while running and once completed
 *   GET  jobs/<id>/logs         {totalCount, data}
 *   GET  jobs/<id>/download     the job's result; 409 before completion or after failure
 *   GET  queries/settings       the database's statement timeout (administrators)
 *   PUT  queries/settings       sets it (system administrators)
 *
 * Only administrators of the login tenant and system administrators may use
 * them (403 for everyone else). A statement that fails — refused by the
 * sandbox or by the database — answers 400 with `{message}`, and `position`
 * where the parser or the database places the error; a bad
 * parameter answers in the service's usual error format.
 */
import { createError, epochMillis, languageOf, languageParameter, schemaOf, storedPropertyName, translate, type DatabaseInfo, type Language, type PluginHost, type Principal } from '../../runtime/host.ts';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { checkStatement } from './sandbox.ts';
import type { QueryEngine, QuerySpec } from './runner.ts';
import { FORMATS, resultHeaders, type Format } from './formats.ts';
import { describeFailure, failurePosition, type JobManager } from './jobs.ts';
import type { QueryFigures } from './metrics.ts';
import type { TenantSlots } from './tenant-slots.ts';

/** PostgreSQL keeps statement_timeout as a 32-bit count of milliseconds. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

export interface RouteDeps {
  host: PluginHost;
  engine: QueryEngine;
  jobs: JobManager;
  figures: QueryFigures;
  views: ReadonlySet<string>;
  /** SERVICE_QUERY_SCHEMA: the schema a statement may name views with. */
  schema: string;
  /** SERVICE_STATEMENT_TIMEOUT. */
  serverTimeoutMs: number;
  /** SERVICE_STATEMENT_TIMEOUT_MAX: no run lasts longer, whatever the user, the database or the request says; 0: no ceiling. */
  ceilingMs: number;
  /** Statements and jobs each tenant may run at once. */
  slots: TenantSlots;
}

const isAdministrator = (p: Principal) => p.systemAdmin || p.accessLevel === 'ADMINISTRATOR';

function administrator(ctx: Context): Principal {
  const principal = ctx.state.principal as Principal;
  if (!isAdministrator(principal)) throw createError('FORBIDDEN');
  return principal;
}

function invalidParameter(name: string, key = 'invalidValue', params: Record<string, unknown> = {}) {
  return createError('INVALID_PARAMETER', { name }, [{ path: name, key, params }]);
}

/** A query parameter that may be given once. */
function single(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw invalidParameter(name);
  return value;
}

function formatOf(ctx: Context): Format {
  const text = single(ctx, 'format');
  if (text === undefined || text === '') return 'CSV';
  const format = text.toUpperCase() as Format;
  if (!FORMATS.includes(format)) throw invalidParameter('format', 'notAllowedValue', { allowed: FORMATS.join(', ') });
  return format;
}

/** `version` wins over Accept-Version; absent both, now. */
function versionOf(ctx: Context): number | null {
  const param = single(ctx, 'version');
  const [name, text] = param !== undefined && param !== '' ? ['version', param] : ['Accept-Version', ctx.get('Accept-Version')];
  if (!text) return null;
  const ms = epochMillis(text);
  if (ms === undefined) throw invalidParameter(name, 'mustBeEpochMilliseconds');
  return ms;
}

/** The statement of the request body: `{"sql": "…"}` and nothing else. */
function sqlOf(ctx: Context): string {
  const body = ctx.request.body as unknown;
  const invalid = (path: string, key: string, params: Record<string, unknown> = {}) =>
    createError('INVALID_QUERY', {}, [{ path, key, params }]);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('sql', 'mandatory');
  const extra = Object.keys(body).find((k) => k !== 'sql');
  if (extra) throw invalid(extra, 'unknownProperty');
  const { sql } = body as { sql?: unknown };
  if (sql === undefined || sql === null) throw invalid('sql', 'mandatory');
  if (typeof sql !== 'string') throw invalid('sql', 'mustBeText');
  return sql;
}

/** The maximum that applies to the caller: the user's own, else the database's, else the server's; 0 is none. */
export async function configuredTimeout(knex: Knex, db: string, principal: Principal, serverTimeoutMs: number): Promise<number> {
  const s = `"${schemaOf(db)}"`;
  const r = await knex.raw(
    `select (select (props->>'${storedPropertyName('User', 'statementTimeout')}')::numeric from ${s}.objects where id = ? and type = 'User') as user_timeout,
            (select statement_timeout from ${s}.query_settings where singleton) as db_timeout`,
    [principal.userId ?? '00000000-0000-0000-0000-000000000000'],
  );
  const { user_timeout: user, db_timeout: database } = r.rows[0] ?? {};
  // Numeric, not bigint: a stored value beyond bigint is clamped, not an error on every query of the user.
  // A negative value cannot be meant as "none": it counts as not set.
  if (user !== null && user !== undefined && Number(user) >= 0) return Math.min(Number(user), MAX_TIMEOUT_MS);
  if (database !== null && database !== undefined) return Number(database);
  return serverTimeoutMs;
}

/**
 * The timeout of this run. An explicit value may lower the configured
 * maximum; only a system administrator may raise it or switch it off (0),
 * unless the maximum is none already.
 */
export function effectiveTimeout(param: string | undefined, maximum: number, systemAdmin: boolean): number {
  if (param === undefined || param === '') return maximum;
  if (!/^\d{1,10}$/.test(param) || Number(param) > MAX_TIMEOUT_MS) {
    throw invalidParameter('statementTimeout', 'mustBeMilliseconds', { maximum: MAX_TIMEOUT_MS });
  }
  const value = Number(param);
  if (systemAdmin || maximum === 0) return value;
  if (value === 0) throw invalidParameter('statementTimeout', 'statementTimeoutNone');
  if (value > maximum) throw invalidParameter('statementTimeout', 'statementTimeoutAboveMaximum', { maximum });
  return value;
}

/** The hard ceiling applies to every run, one without a timeout (0) included. */
export function underCeiling(timeoutMs: number, ceilingMs: number): number {
  if (!ceilingMs) return timeoutMs;
  return timeoutMs === 0 ? ceilingMs : Math.min(timeoutMs, ceilingMs);
}

/**
 * A failed statement: 400 with the message, as the specification shows,
 * and where the parser or the database gives one, the position in the
 * caller's statement (1-based, in characters).
 */
function statementFailed(ctx: Context, message: string, position: number | undefined) {
  ctx.status = 400;
  ctx.body = position === undefined ? { message } : { message, position };
}

export function registerRoutes(deps: RouteDeps) {
  const { host, engine, jobs, views, schema } = deps;
  const errorLanguage = (ctx: Context) => languageOf(ctx, host.config.language);

  /** Everything a run needs from the request; throws the request's 400s and 403. */
  async function prepare(ctx: Context) {
    const principal = administrator(ctx);
    const db = ctx.state.db as DatabaseInfo;
    await host.jsonBody(ctx, 'ADMINISTRATOR');
    const sql = sqlOf(ctx);
    const format = formatOf(ctx);
    const language = languageParameter(ctx, host.config.language);
    const version = versionOf(ctx);
    const maximum = await configuredTimeout(host.knex, db.name, principal, deps.serverTimeoutMs);
    const timeoutMs = underCeiling(effectiveTimeout(single(ctx, 'statementTimeout'), maximum, principal.systemAdmin), deps.ceilingMs);
    // System administrators read every tenant of the database; everyone else the login tenant.
    const tenant = principal.systemAdmin ? null : principal.tenant!;
    const spec: Omit<QuerySpec, 'statement' | 'db'> = { format, tenant, version, language, timeoutMs };
    return { principal, db, sql, spec };
  }

  host.api.put('/queries/download', async (ctx) => {
    // A caller that leaves before the answer starts stops the statement (afterwards, closing the stream does).
    // Listened for from the start: a caller may leave while the request is still being prepared.
    const left = new AbortController();
    const leave = () => left.abort();
    ctx.res.once('close', leave);
    let release: (() => void) | null = null;
    try {
      const { principal, db, sql, spec } = await prepare(ctx);
      if (ctx.req.socket.destroyed) leave();
      try {
        const statement = await checkStatement(sql, { views, schema, target: schemaOf(db.name) });
        release = deps.slots.take(db.name, principal.tenant!);
        if (!release) throw createError('TOO_MANY_QUERIES', { limit: deps.slots.limit }, [], { 'Retry-After': '5' });
        // From here on this request is an export: it gives way to requests someone waits for, and holds none back.
        host.bulk(ctx);
        const result = await engine.run({ ...spec, db: db.name, statement }, { signal: left.signal });
        ctx.status = 200;
        ctx.set(resultHeaders(spec.format));
        ctx.body = deps.figures.counted(result.stream, spec.format, 'export');
        // The slot is the tenant's until the result has been read or abandoned.
        result.stream.once('close', release);
        release = null;
      } catch (err) {
        // Nobody is left to answer.
        if (left.signal.aborted) return;
        const message = describeFailure(err, spec.language, spec.timeoutMs);
        if (message === undefined) throw err;
        statementFailed(ctx, message, failurePosition(err));
      }
    } finally {
      release?.();
      ctx.res.off('close', leave);
    }
  });

  host.api.post('/queries/download', async (ctx) => {
    const { principal, db, sql, spec } = await prepare(ctx);
    // Starting a job is not somebody browsing: the job's statement may run with parallel workers (runtime/interactive.ts).
    host.bulk(ctx);
    const id = await jobs.submit({
      db: db.name, sql, views, schema, spec,
      owner: { tenant: principal.tenant!, allTenants: principal.systemAdmin, loginId: principal.loginId },
    });
    ctx.status = 200;
    ctx.body = { id };
  });

  /**
   * Query jobs are administrators'; a job of another kind (an upload) is also
   * its starter's. Everyone else is refused alike, whether the job exists or not.
   */
  async function job(ctx: Context) {
    const principal = ctx.state.principal as Principal;
    const db = ctx.state.db as DatabaseInfo;
    const id = String(ctx.params.id);
    const found = await jobs.find(db.name, id, { tenant: principal.tenant, systemAdmin: principal.systemAdmin });
    const own = !!found && found.kind !== 'query' && found.loginId === principal.loginId;
    if (!own && !isAdministrator(principal)) throw createError('FORBIDDEN');
    if (!found) throw createError('JOB_NOT_FOUND', { id });
    return { db, job: found };
  }

  host.api.get('/jobs/:id/statistics', async (ctx) => {
    const { job: found } = await job(ctx);
    const finished = found.status === 'COMPLETED' || found.status === 'FAILED';
    ctx.status = finished ? 200 : 202;
    ctx.body = {
      status: found.status, messages: found.messages,
      ...(found.progress ? { progress: found.progress } : {}),
      ...(found.statistics ? { kind: found.kind, statistics: found.statistics } : {}),
    };
  });

  host.api.get('/jobs/:id/logs', async (ctx) => {
    const { job: found } = await job(ctx);
    ctx.body = { totalCount: found.logs.length, data: found.logs };
  });

  host.api.get('/jobs/:id/download', async (ctx) => {
    const { db, job: found } = await job(ctx);
    if (found.status !== 'COMPLETED') {
      ctx.status = 409;
      ctx.body = { message: translate(errorLanguage(ctx), found.status === 'FAILED' ? 'jobFailedNoResult' : 'jobNotCompleted') };
      return;
    }
    host.bulk(ctx);
    ctx.status = 200;
    if (found.kind !== 'query') {
      // Another kind's report (an upload's changes), kept as the job ended.
      ctx.set('Content-Type', 'application/json; charset=utf-8');
      ctx.body = jobs.result(db.name, found.id);
      return;
    }
    ctx.set(resultHeaders(found.format));
    ctx.body = deps.figures.counted(jobs.result(db.name, found.id), found.format, 'job');
  });

  /** The views a statement may read and their columns (the query console's completion and list), as the database describes them. */
  host.api.get('/queries/views', async (ctx) => {
    administrator(ctx);
    const db = ctx.state.db as DatabaseInfo;
    const r = await host.knex.raw(
      `select table_name as view, column_name as name, data_type as type from information_schema.columns
        where table_schema = ? and table_name = any(?) order by table_name, ordinal_position`,
      [schemaOf(db.name), [...views]],
    );
    const columns = new Map<string, { name: string; type: string }[]>([...views].sort().map((v) => [v, []]));
    for (const row of r.rows as { view: string; name: string; type: string }[]) columns.get(row.view)?.push({ name: row.name, type: row.type });
    ctx.body = { views: [...columns].map(([name, cols]) => ({ name, columns: cols })) };
  });

  host.api.get('/queries/settings', async (ctx) => {
    administrator(ctx);
    const db = ctx.state.db as DatabaseInfo;
    const r = await host.knex.raw(`select statement_timeout from "${schemaOf(db.name)}".query_settings where singleton`);
    ctx.body = { statementTimeout: r.rows[0]?.statement_timeout ?? null, serverStatementTimeout: deps.serverTimeoutMs };
  });

  host.api.put('/queries/settings', async (ctx) => {
    const principal = administrator(ctx);
    if (!principal.systemAdmin) throw createError('FORBIDDEN');
    const db = ctx.state.db as DatabaseInfo;
    await host.jsonBody(ctx, 'ADMINISTRATOR');
    const body = ctx.request.body as unknown;
    const invalid = (path: string, key: string, params: Record<string, unknown> = {}) =>
      createError('INVALID_QUERY_SETTINGS', {}, [{ path, key, params }]);
    if (!body || typeof body !== 'object' || Array.isArray(body) || !('statementTimeout' in body)) throw invalid('statementTimeout', 'mandatory');
    const extra = Object.keys(body).find((k) => k !== 'statementTimeout');
    if (extra) throw invalid(extra, 'unknownProperty');
    const value = (body as { statementTimeout: unknown }).statementTimeout;
    if (value !== null && (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_TIMEOUT_MS)) {
      throw invalid('statementTimeout', 'mustBeMillisecondsOrNull', { maximum: MAX_TIMEOUT_MS });
    }
    await host.knex.raw(
      `insert into "${schemaOf(db.name)}".query_settings (singleton, statement_timeout, updated_at, updated_by) values (true, ?, now(), ?)
       on conflict (singleton) do update set statement_timeout = excluded.statement_timeout, updated_at = now(), updated_by = excluded.updated_by`,
      [value as number | null, principal.loginId],
    );
    ctx.body = { statementTimeout: value, serverStatementTimeout: deps.serverTimeoutMs };
  });
}
