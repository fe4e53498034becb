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
 * - SERVICE_QUERY_SCHEMA: the schema name a statement may put before a view's
 *   name (`service.scheme_view`; decisions §7.4), standing for the database's
 *   own schema; default service. An installation moving over from the
 *   original product sets the original's schema name, and its reports run
 *   unchanged. A lower-case name (unquoted names are folded to lower case, so
 *   `SERVICE.scheme_view` matches too); PostgreSQL's own schemas (pg_…,
 *   information_schema) and the service's database schemas (db_…) are
 *   refused at start: a statement naming them would seem to read them.
 */
import type { Knex } from 'knex';
import { ConfigError, readViewsSql, type PluginHost, type PluginManifest, type Storage } from '../../runtime/host.ts';
import { DEFAULT_QUERY_SCHEMA } from './sandbox.ts';
import { QUERY_MESSAGES } from './messages.ts';
import { ensureRole, grantViews, ROLE_NAME, viewNames } from './role.ts';
import { QueryEngine } from './runner.ts';
import { JOB_MIGRATIONS, JobManager } from './jobs.ts';
import { registerJobList } from './job-list.ts';
import { MAX_TIMEOUT_MS, registerRoutes, underCeiling } from './routes.ts';
import { QueryFigures } from './metrics.ts';
import { TenantSlots } from './tenant-slots.ts';
import { openapi } from './openapi.ts';

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

const milliseconds = { type: 'integer', minimum: 0, maximum: 9_999_999_999, description: 'a whole number of milliseconds, at most 10 digits' };
const upTo99 = { type: 'integer', minimum: 1, maximum: 99, description: 'a whole number from 1 to 99' };

/** As the schema makes them: numbers are numbers; what has no default depends on the storage. */
interface QuerySettings {
  SERVICE_DATABASE_READONLY_USER: string;
  SERVICE_DATABASE_READONLY_PASSWORD?: string;
  SERVICE_STATEMENT_TIMEOUT: number;
  SERVICE_JOB_RETENTION: number;
  SERVICE_JOB_HEARTBEAT: number;
  SERVICE_QUERY_POOL_SIZE?: number;
  SERVICE_QUERY_JOB_CONCURRENCY: number;
  SERVICE_QUERY_BULK_RATE: number;
  SERVICE_QUERY_TENANT_CONCURRENCY: number;
  SERVICE_STATEMENT_TIMEOUT_MAX?: number;
  SERVICE_QUERY_SCHEMA: string;
}

/** A schema name the query interface's statements may use: a lower-case identifier, 63 characters at most. */
const SCHEMA_NAME = '^[a-z_][a-z0-9_$]{0,62}$';

/** Why SERVICE_QUERY_SCHEMA may not be `name`, or undefined when it may. */
export function reservedSchema(name: string): string | undefined {
  if (/^pg_/.test(name) || name === 'information_schema') return `must not name a schema of PostgreSQL (pg_…, information_schema): ${name}`;
  if (/^db_/.test(name)) return `must not name a schema of the service's databases (db_…): ${name}`;
  return undefined;
}

export const manifest: PluginManifest<QuerySettings> = {
  name: 'query',
  openapi,
  host: '^1',
  settingsPrefixes: ['SERVICE_QUERY_', 'SERVICE_JOB_', 'SERVICE_STATEMENT_TIMEOUT', 'SERVICE_DATABASE_READONLY_'],
  migrations: { database: JOB_MIGRATIONS },
  messages: QUERY_MESSAGES,
  configSchema: {
    type: 'object',
    properties: {
      SERVICE_DATABASE_READONLY_USER: {
        type: 'string', pattern: ROLE_NAME, default: DEFAULTS.role,
        description: 'a role name of lower-case letters, digits and underscores, not starting with a digit, 63 characters at most',
      },
      SERVICE_DATABASE_READONLY_PASSWORD: { type: 'string', minLength: 8, description: 'a password of at least 8 characters' },
      SERVICE_STATEMENT_TIMEOUT: { ...milliseconds, default: DEFAULTS.statementTimeoutMs },
      SERVICE_JOB_RETENTION: { type: 'integer', minimum: 1, maximum: 999_999_999_999, default: DEFAULTS.retentionMs, description: 'a whole number of milliseconds from 1, at most 12 digits' },
      SERVICE_JOB_HEARTBEAT: { type: 'integer', minimum: 50, maximum: 9_999_999, default: DEFAULTS.heartbeatMs, description: 'a whole number of milliseconds from 50 to 9999999' },
      SERVICE_QUERY_POOL_SIZE: upTo99,
      SERVICE_QUERY_JOB_CONCURRENCY: { ...upTo99, default: DEFAULTS.concurrency },
      SERVICE_QUERY_BULK_RATE: { type: 'integer', minimum: 0, maximum: 999_999_999_999, default: DEFAULTS.bulkRate, description: 'a whole number of bytes a second (0: no cap), at most 12 digits' },
      SERVICE_QUERY_TENANT_CONCURRENCY: { ...upTo99, default: DEFAULTS.tenantConcurrency },
      SERVICE_STATEMENT_TIMEOUT_MAX: milliseconds,
      SERVICE_QUERY_SCHEMA: {
        type: 'string', pattern: SCHEMA_NAME, default: DEFAULT_QUERY_SCHEMA,
        description: 'a schema name of lower-case letters, digits, underscores and $, not starting with a digit or $, 63 characters at most',
      },
    },
  },
  register(host: PluginHost, settings) {
    const role = settings.SERVICE_DATABASE_READONLY_USER;
    const password = settings.SERVICE_DATABASE_READONLY_PASSWORD;
    const schema = settings.SERVICE_QUERY_SCHEMA;
    const reserved = reservedSchema(schema);
    if (reserved) throw new ConfigError('SERVICE_QUERY_SCHEMA', reserved);
    const views = viewNames(readViewsSql(host.config.generatedDir));
    const embedded = host.storage.kind === 'pglite';
    const ceilingMs = settings.SERVICE_STATEMENT_TIMEOUT_MAX ?? (embedded ? DEFAULTS.embeddedCeilingMs : 0);
    if (embedded && ceilingMs === 0) {
      throw new ConfigError('SERVICE_STATEMENT_TIMEOUT_MAX', 'must be above 0 on the embedded database, where every statement needs a limit');
    }
    const serverTimeoutMs = underCeiling(Math.min(settings.SERVICE_STATEMENT_TIMEOUT, MAX_TIMEOUT_MS), ceilingMs);
    const slots = new TenantSlots(settings.SERVICE_QUERY_TENANT_CONCURRENCY);

    const bulkRate = settings.SERVICE_QUERY_BULK_RATE;
    const engine = new QueryEngine({
      storage: host.storage, databaseUrl: host.config.databaseUrl, role, log: host.log,
      poolSize: settings.SERVICE_QUERY_POOL_SIZE ?? (embedded ? DEFAULTS.embeddedReaders : DEFAULTS.poolSize),
      interactive: host.interactive, bulkRate,
    });
    engines.set(host.storage, engine);
    const jobs = new JobManager({
      knex: host.knex, engine, databases: host.databases, log: host.log,
      heartbeatMs: settings.SERVICE_JOB_HEARTBEAT,
      retentionMs: settings.SERVICE_JOB_RETENTION,
      concurrency: settings.SERVICE_QUERY_JOB_CONCURRENCY, slots,
      interactive: host.interactive, bulkRate,
      finished: (status) => figures.jobFinished(status),
    });
    // One address space for jobs of every kind: uploads run as jobs here too (runtime/jobs.ts).
    host.provideJobs({ submit: (task) => jobs.submitTask(task) });
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
    registerRoutes({ host, engine, jobs, figures, views: new Set(views), schema, serverTimeoutMs, ceilingMs, slots });
    registerJobList(host);
  },
};
