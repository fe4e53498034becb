/**
 * The metadata query interface (specification, "Metadata query interface";
 * decisions §5): read-only SQL over the generated views of a database, as
 * CSV, JSON or XML, synchronously or as jobs, as of a chosen time.
 *
 * Settings:
 * - SERVICE_DATABASE_READONLY_USER / _PASSWORD: the role statements run as
 *   (default service_readonly); created and granted at start.
 * - SERVICE_STATEMENT_TIMEOUT: the server's maximum run time of a statement
 *   in milliseconds (default 300000; 0: none). A database's own setting
 *   (PUT /api/<db>/queries/settings) overrides it, a user's statementTimeout
 *   property overrides both.
 * - SERVICE_JOB_RETENTION: how long a finished job and its result are kept,
 *   in milliseconds (default 86400000, 24 h).
 * - SERVICE_JOB_HEARTBEAT: how often a running job's instance says it is
 *   alive, in milliseconds (default 10000); three missed beats fail the job.
 * - SERVICE_QUERY_POOL_SIZE: connections of the query pool on PostgreSQL
 *   (default 4); on the embedded database, the copies of it that statements
 *   run on (default 2). SERVICE_QUERY_JOB_CONCURRENCY: jobs one instance
 *   runs at once (default 2).
 * - SERVICE_STATEMENT_TIMEOUT_MAX: the hard ceiling of any statement's run
 *   time in milliseconds, whatever a user's, a database's or a request's
 *   statementTimeout says, 0 (none) included. Default on the embedded
 *   database 300000 (it must be above 0 there); on PostgreSQL none.
 * - SERVICE_QUERY_TENANT_CONCURRENCY: statements and jobs one tenant runs
 *   at once on an instance (default 2); a synchronous statement beyond it
 *   is a 429, a job waits in the queue.
 * - SERVICE_QUERY_BULK_RATE: bytes a second that all exports and jobs of an
 *   instance together produce while it serves interactive requests (one in
 *   flight or answered in the last 100 ms); default 10000000; 0: no cap. With
 *   no interactive request they run at full speed (runtime/interactive.ts).
 */
import type { Knex } from 'knex';
import type { PluginHost, PluginManifest } from '../../runtime/plugins.ts';
import type { Storage } from '../../runtime/storage/connection.ts';
import { readViewsSql } from '../../runtime/storage/views.ts';
import './messages.ts';
import { ensureRole, grantViews, ROLE_NAME, viewNames } from './role.ts';
import { QueryEngine } from './runner.ts';
import { JOB_MIGRATIONS, JobManager } from './jobs.ts';
import { MAX_TIMEOUT_MS, registerRoutes, underCeiling } from './routes.ts';
import { QueryFigures } from './metrics.ts';
import { TenantSlots } from './tenant-slots.ts';
import { ConfigError } from '../../runtime/config.ts';

const DEFAULTS = {
  role: 'service_readonly',
  statementTimeoutMs: 300_000,
  retentionMs: 24 * 60 * 60 * 1000,
  heartbeatMs: 10_000,
  poolSize: 4,
  /** Copies of the embedded database a statement may run on at once (each a thread with its own memory). */
  embeddedReaders: 2,
  concurrency: 2,
  bulkRate: 10_000_000,
  tenantConcurrency: 2,
  /** The embedded database has no statement_timeout of its own: no run may outlast this there (ms). */
  embeddedCeilingMs: 300_000,
};

const engines = new WeakMap<Storage, QueryEngine>();

/** The query engine of a running service, found by its storage: tests inspect its pooled connections. */
export function queryEngineOf(storage: Storage): QueryEngine | undefined {
  return engines.get(storage);
}

const milliseconds = { type: 'string', pattern: '^[0-9]{1,10}$', description: 'a whole number of milliseconds, at most 10 digits' };
const upTo99 = { type: 'string', pattern: '^([1-9]|[1-9][0-9])$', description: 'a whole number from 1 to 99' };

export const manifest: PluginManifest = {
  name: 'query',
  configSchema: {
    type: 'object',
    properties: {
      SERVICE_DATABASE_READONLY_USER: {
        type: 'string', pattern: ROLE_NAME,
        description: 'a role name of lower-case letters, digits and underscores, not starting with a digit, 63 characters at most',
      },
      SERVICE_DATABASE_READONLY_PASSWORD: { type: 'string', minLength: 8, description: 'a password of at least 8 characters' },
      SERVICE_STATEMENT_TIMEOUT: milliseconds,
      SERVICE_JOB_RETENTION: { type: 'string', pattern: '^[1-9][0-9]{0,11}$', description: 'a whole number of milliseconds from 1, at most 12 digits' },
      SERVICE_JOB_HEARTBEAT: { type: 'string', pattern: '^([5-9][0-9]|[1-9][0-9]{2,6})$', description: 'a whole number of milliseconds from 50 to 9999999' },
      SERVICE_QUERY_POOL_SIZE: upTo99,
      SERVICE_QUERY_JOB_CONCURRENCY: upTo99,
      SERVICE_QUERY_BULK_RATE: { type: 'string', pattern: '^(0|[1-9][0-9]{0,11})$', description: 'a whole number of bytes a second (0: no cap), at most 12 digits' },
      SERVICE_QUERY_TENANT_CONCURRENCY: upTo99,
      SERVICE_STATEMENT_TIMEOUT_MAX: milliseconds,
    },
  },
  register(host: PluginHost) {
    const env = host.config.env;
    const setting = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
    const role = env.SERVICE_DATABASE_READONLY_USER || DEFAULTS.role;
    const password = env.SERVICE_DATABASE_READONLY_PASSWORD || undefined;
    const views = viewNames(readViewsSql(host.config.generatedDir));
    const embedded = host.storage.kind === 'pglite';
    const ceilingMs = setting('SERVICE_STATEMENT_TIMEOUT_MAX', embedded ? DEFAULTS.embeddedCeilingMs : 0);
    if (embedded && ceilingMs === 0) {
      throw new ConfigError('SERVICE_STATEMENT_TIMEOUT_MAX', 'must be above 0 on the embedded database, where every statement needs a limit');
    }
    const serverTimeoutMs = underCeiling(Math.min(setting('SERVICE_STATEMENT_TIMEOUT', DEFAULTS.statementTimeoutMs), MAX_TIMEOUT_MS), ceilingMs);
    const slots = new TenantSlots(setting('SERVICE_QUERY_TENANT_CONCURRENCY', DEFAULTS.tenantConcurrency));
    host.addDatabaseMigrations('query', JOB_MIGRATIONS);

    const bulkRate = setting('SERVICE_QUERY_BULK_RATE', DEFAULTS.bulkRate);
    const engine = new QueryEngine({
      storage: host.storage, databaseUrl: host.config.databaseUrl, role, log: host.log,
      poolSize: setting('SERVICE_QUERY_POOL_SIZE', embedded ? DEFAULTS.embeddedReaders : DEFAULTS.poolSize),
      interactive: host.interactive, bulkRate,
    });
    engines.set(host.storage, engine);
    const jobs = new JobManager({
      knex: host.knex, engine, databases: host.databases, log: host.log,
      heartbeatMs: setting('SERVICE_JOB_HEARTBEAT', DEFAULTS.heartbeatMs),
      retentionMs: setting('SERVICE_JOB_RETENTION', DEFAULTS.retentionMs),
      concurrency: setting('SERVICE_QUERY_JOB_CONCURRENCY', DEFAULTS.concurrency), slots,
      interactive: host.interactive, bulkRate,
      finished: (status) => figures.jobFinished(status),
    });
    const figures = new QueryFigures(host.metrics, () => jobs.counts);
    if (engine.poolFigures()) host.metrics.addPool('query', () => engine.poolFigures()!);

    // At start the views of existing databases are granted before onStart runs: the role must exist by then.
    // Once made outside a transaction (which could still roll back), the role is not made again by this instance.
    let roleReady = false;
    const ensure = async (q: Knex | Knex.Transaction) => {
      if (roleReady) return;
      await ensureRole(q, role, password);
      if (!(q as Knex.Transaction).isTransaction) roleReady = true;
    };
    host.afterViews(async (q, db) => {
      await ensure(q);
      await grantViews(q, db, role, views);
    });
    host.onStart(async () => {
      await ensure(host.knex);
      jobs.start();
    });
    host.onClose(async () => {
      await jobs.close();
      await engine.close();
    });
    registerRoutes({ host, engine, jobs, figures, views: new Set(views), serverTimeoutMs, ceilingMs, slots });
  },
};
