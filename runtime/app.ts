/**
 * Builds the service from its configuration: storage, generated code,
 * plugins, and the Koa application with its request path
 * (context path → logging → errors → readiness → routes → authentication).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import pino, { type Logger } from 'pino';
import type { Knex } from 'knex';
import type { Config } from './config.ts';
import { InteractiveGate } from './interactive.ts';
import { createError, errorMiddleware, isDatabaseUnavailable } from './errors.ts';
import { jsonBodyReader } from './body.ts';
import { usePublicUrl } from './public-url.ts';
import { sendAsset, servedOpenapi, specificationAssets, SPECIFICATION } from './specification.ts';
import { loadGenerated, type Generated } from './generated.ts';
import { openStorage, type Storage } from './storage/connection.ts';
import { migrateControl, PluginMigrations } from './storage/migrations.ts';
import { Databases } from './storage/databases.ts';
import { createDirectory } from './auth/directory.ts';
import { createAuthenticator, type Authenticator } from './auth/middleware.ts';
import type { AuthDriver, Principal } from './auth/types.ts';
import { AUTH_PHASES, type AuthenticateOptions, type AuthPhase, type PluginHost, type ObjectLink, type PluginManifest, type RestExtension, type SecretHandler, type WriteObserver } from './plugins.ts';
import { importPlugins, loadPlugins } from './plugin-loader.ts';
import type { CustomPropertiesCheck, StatusCheck } from './rest/writer.ts';
import { META_DATABASE, seedMetamodel } from './storage/meta-database.ts';
import { readStandardMetamodel } from './metamodel/standard.ts';
import { apiOpening, restOpening } from './openings.ts';
import { adminRoutes } from './admin.ts';
import { knexPool, requestFigures, ServiceMetrics } from './metrics.ts';
import { metamodelListNames } from './route-templates.ts';
import { SEARCH_PATH } from './rest/search.ts';
import type { RestDeps } from './rest/handlers.ts';
import { writeObjects } from './rest/object-writes.ts';
import { bulkWrites } from './rest/bulk-writes.ts';
import type { JobService } from './jobs.ts';

/** Where load balancers ask whether the instance is up (after the context path). */
const HEALTH_PATH = '/health';

export interface Service {
  app: Koa;
  config: Config;
  storage: Storage;
  generated: Generated;
  databases: Databases;
  log: Logger;
  metrics: ServiceMetrics;
  /** What the plugins serve: the routers of `/api/<db>` and of their own addresses, and the list names REST extensions add (for the contract test and the request figures). */
  routes: { api: Router; plugins: Router; restListNames: ReadonlySet<string> };
  listen(): Promise<number>;
  /** Where GET /metrics is served once listening; undefined without SERVICE_METRICS_PORT. */
  metricsPort(): number | undefined;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** The built-in plugins (or a test's choice); the ones SERVICE_PLUGINS names are loaded after them. */
  plugins: PluginManifest[];
  log?: Logger;
}

export async function createService(config: Config, options: ServiceOptions): Promise<Service> {
  const log = options.log ?? pino({ level: config.logLevel, base: undefined });
  // Configuration errors stop the start before anything is opened.
  const external = await importPlugins(config.env.SERVICE_PLUGINS);
  const plugins = loadPlugins([...options.plugins, ...external], config.env);
  const generated = await loadGenerated(config.generatedDir);
  const openapi = servedOpenapi({ yaml: generated.openapiYaml, json: generated.openapiJson }, external.filter((m) => plugins.plugins.some((p) => p.manifest === m)));
  const storage = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, log });
  try {
    return await assemble(config, log, plugins, generated, openapi, storage);
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw err;
  }
}

async function assemble(config: Config, log: Logger, { plugins, methodsOn }: ReturnType<typeof loadPlugins>, generated: Generated,
  openapi: { yaml: string; json: string }, storage: Storage): Promise<Service> {
  const { knex } = storage;
  const standard = readStandardMetamodel();
  const migrations = new PluginMigrations();
  for (const { manifest } of plugins) {
    if (manifest.migrations?.control) migrations.control.set(manifest.name, manifest.migrations.control);
    if (manifest.migrations?.database) migrations.database.set(manifest.name, manifest.migrations.database);
  }
  const viewTasks: ((q: Knex | Knex.Transaction, db: string) => Promise<void>)[] = [];
  const databases = new Databases(knex, {
    afterCreate: async (trx, db, tenant, actor) => {
      if (db === META_DATABASE) await seedMetamodel(trx, standard, tenant, actor);
    },
    afterViews: async (q, db) => {
      for (const task of viewTasks) await task(q, db);
    },
    migrations,
    defaultTenantLabel: config.defaultTenantLabel,
  }, { views: generated.viewsSql, indexes: generated.indexesSql });
  const directory = createDirectory(knex, config.adminUsers);
  const drivers: { driver: AuthDriver; phase: number }[] = [];
  const secretHandlers = new Map<string, SecretHandler>();
  const startTasks: (() => Promise<void>)[] = [];
  const closeTasks: (() => Promise<void>)[] = [];
  const changeListeners: ((db: string, types: string[]) => void)[] = [];
  const pluginRouter = new Router();
  const apiRouter = new Router({ prefix: '/api/:db' });
  const restExtensions: RestExtension[] = [];
  const writeObservers: WriteObserver[] = [];
  const objectLinks: ObjectLink[] = [];
  let customProperties: CustomPropertiesCheck | undefined;
  let statusCheck: StatusCheck | undefined;
  const readJson = jsonBodyReader(config.bodyLimitBytes);
  const interactive = new InteractiveGate();
  const metrics = new ServiceMetrics();
  metrics.addGate(interactive.figures);
  metrics.addPool('service', knexPool(knex));
  const restListNames = new Set([...metamodelListNames(generated.metamodel), SEARCH_PATH]);
  // Made once every plugin has added its drivers; plugins call it only while serving requests.
  let authenticator: Authenticator | undefined;
  let jobService: JobService | undefined;
  // Made once every plugin registered (the checks plugins set are part of it); plugins write only while serving.
  let restDeps: RestDeps | undefined;
  const host: PluginHost = {
    config, knex, storage, databases, log, directory, router: pluginRouter, api: apiRouter, metrics,
    jsonBody: readJson,
    interactive,
    bulk: (ctx) => (ctx.state.leaveInteractive as ((bulk: boolean) => void) | undefined)?.(true),
    addRestExtension: (extension, listNames = []) => {
      restExtensions.push(extension);
      for (const name of listNames) restListNames.add(name);
    },
    addWriteObserver: (observer) => writeObservers.push(observer),
    addObjectLink: (link) => objectLinks.push(link),
    setCustomPropertiesCheck: (check) => {
      if (customProperties) throw new Error('a custom-properties check is registered already');
      customProperties = check;
    },
    setStatusCheck: (check) => {
      if (statusCheck) throw new Error('a status check is registered already');
      statusCheck = check;
    },
    afterViews: (task) => viewTasks.push(task),
    addAuthDriver: () => {
      throw new Error('addAuthDriver is bound to each plugin');
    },
    methodOn: (method) => methodsOn.has(method),
    authenticate: (ctx, db, options) => {
      if (!authenticator) throw new Error('authenticate is available once the service is assembled');
      return authenticator.signIn(options ? withHeaders(ctx, options) : ctx, db);
    },
    addSecretHandler: (key, handler) => secretHandlers.set(key, handler),
    onStart: (task) => startTasks.push(task),
    onClose: (task) => closeTasks.push(task),
    onChange: (listener) => changeListeners.push(listener),
    writeObjects: (db, principal, work) => {
      if (!restDeps) throw new Error('writeObjects is available once the service is assembled');
      return writeObjects(restDeps, db, principal, work);
    },
    bulkWrites: (db, principal, work) => {
      if (!restDeps) throw new Error('bulkWrites is available once the service is assembled');
      return bulkWrites(restDeps, db, principal, { gate: interactive, oneConnection: storage.kind === 'pglite' }, work);
    },
    provideJobs: (service) => {
      if (jobService) throw new Error('a job service is provided already');
      jobService = service;
    },
    jobs: () => {
      if (!jobService) throw new Error('no plugin provides jobs');
      return jobService;
    },
    changed: (db, types) => changeListeners.forEach((listener) => listener(db, types)),
  };
  for (const { manifest, settings } of plugins) await manifest.register(withDrivers(host, manifest, drivers), settings);
  const deps: RestDeps = {
    model: generated.metamodel, routes: generated.routes, validators: generated.validators, knex, secretHandlers, customProperties, statusCheck, objectLinks, writeObservers,
    changed: (db: string, types: string[]) => changeListeners.forEach((listener) => listener(db, types)),
  };
  restDeps = deps;
  authenticator = createAuthenticator(drivers.sort((a, b) => a.phase - b.phase).map((d) => d.driver), directory, {
    knex, env: config.env, signInFailed: (method, status) => metrics.signInFailed(method, status),
  });
  changeListeners.push((_db, types) => {
    if (types.some((t) => t === 'User' || t === 'Tenant' || t === 'AccessRule')) authenticator!.forgetAssignments();
  });

  let ready = false;
  const prepare = async () => {
    await migrateControl(knex, migrations);
    await databases.upgradeAll();
    for (const task of startTasks) await task();
    ready = true;
  };

  const app = new Koa();
  app.proxy = config.trustProxy;
  // ctx.ip: the address the outermost trusted proxy saw, never one the client wrote into X-Forwarded-For.
  app.maxIpsCount = config.proxyHops;
  if (config.publicUrl) usePublicUrl(app, config.publicUrl);
  // `servers`: where clients reach the service; relative to the document's own address when no public URL is set.
  const specification = specificationAssets(openapi,
    `${config.publicUrl ?? ''}${config.contextPath}` || '/');
  const base = (ctx: Context) => `${ctx.protocol}://${ctx.host}${config.contextPath}`;

  app.use(async function requestLog(ctx, next) {
    const started = process.hrtime.bigint();
    const requestId = randomUUID();
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const principal = ctx.state.principal as Principal | undefined;
      log.info({
        requestId, method: ctx.method, path: ctx.path, status: ctx.status,
        durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        ...(principal ? { loginId: principal.loginId, tenant: principal.tenantLabel } : {}),
      }, 'request');
    }
  });
  if (config.metricsPort !== undefined) {
    app.use(requestFigures(metrics, { contextPath: config.contextPath, listNames: restListNames, routers: [apiRouter, pluginRouter] }));
  }
  app.use(async function interactiveFirst(ctx, next) {
    // A load balancer's health check goes first too, but is not somebody browsing.
    const leave = interactive.enter(ctx.path === `${config.contextPath}${HEALTH_PATH}`);
    ctx.state.leaveInteractive = leave;
    try {
      await next();
    } finally {
      leave();
    }
  });
  app.use(errorMiddleware({ log, defaultLanguage: config.language }));
  app.use(async function contextPath(ctx, next) {
    if (config.contextPath) {
      if (ctx.path !== config.contextPath && !ctx.path.startsWith(`${config.contextPath}/`)) {
        throw createError('NOT_FOUND');
      }
      ctx.path = ctx.path.slice(config.contextPath.length) || '/';
    }
    return next();
  });

  // Fixed addresses: a switch costs the request path less than a router.
  app.use(async function serviceRoutes(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === HEALTH_PATH) {
      try {
        if (!ready) throw new Error('not ready');
        await knex.raw('select 1');
        ctx.body = { status: 'ok' };
      } catch {
        ctx.status = 503;
        ctx.body = { status: 'unavailable' };
      }
      return;
    }
    const asset = ctx.path.startsWith(SPECIFICATION) ? specification(ctx.path) : undefined;
    if (asset) return sendAsset(ctx, asset);
    return next();
  });
  app.use(async function readiness(ctx, next) {
    if (!ready) throw createError('UNAVAILABLE', {}, [], { 'Retry-After': '5' });
    return next();
  });

  const admin = adminRoutes({ databases, authenticator, readJson, dropped: (db) => deps.changed!(db, ['Tenant', 'User']) });
  app.use(async function adminApi(ctx, next) {
    if (!ctx.path.startsWith('/api/admin/')) return next();
    return admin(ctx, next);
  });

  app.use(restOpening({ databases, authenticator, deps, extensions: restExtensions, readJson, base }));
  app.use(apiOpening({ databases, authenticator, router: apiRouter }));
  app.use(pluginRouter.routes());

  app.on('error', (err) => {
    if (!isDatabaseUnavailable(err)) log.error({ err: String(err) }, 'unhandled');
  });

  let server: http.Server | undefined;
  let metricsServer: http.Server | undefined;
  return {
    app, config, storage, generated, databases, log, metrics,
    routes: { api: apiRouter, plugins: pluginRouter, restListNames },
    async listen() {
      await prepareWithRetry(prepare, log);
      server = http.createServer(app.callback());
      server.keepAliveTimeout = 5_000;
      await new Promise<void>((resolve) => server!.listen(config.port, config.host, resolve));
      if (config.metricsPort !== undefined) metricsServer = await metrics.listen(config.metricsPort, config.metricsHost);
      return (server.address() as { port: number }).port;
    },
    metricsPort: () => (metricsServer?.address() as { port: number } | null)?.port,
    async close() {
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      if (server) {
        const closing = new Promise<void>((resolve) => server!.close(() => resolve()));
        server.closeIdleConnections();
        const timer = setTimeout(() => server!.closeAllConnections(), config.shutdownTimeoutMs);
        await closing;
        clearTimeout(timer);
      }
      for (const task of closeTasks) await task();
      await storage.close();
    },
  };
}

/**
 * The host as one plugin sees it: its drivers go where its method's phase
 * says, unless it names another. The sort that orders the chain is stable,
 * so drivers of one phase keep the order plugins registered them in.
 */
function withDrivers(host: PluginHost, manifest: PluginManifest, drivers: { driver: AuthDriver; phase: number }[]): PluginHost {
  return {
    ...host,
    addAuthDriver(driver, phase?: AuthPhase) {
      const chosen = phase ?? manifest.method?.phase;
      if (!chosen || !AUTH_PHASES.includes(chosen)) {
        throw new Error(`plugin ${manifest.name} adds an authentication driver without a phase (one of ${AUTH_PHASES.join(', ')})`);
      }
      drivers.push({ driver, phase: AUTH_PHASES.indexOf(chosen) });
    },
  };
}

/**
 * The request as the chain sees it with other credentials (PluginHost.authenticate):
 * everything else (the client's address, the path) is the request's own.
 */
function withHeaders(ctx: Context, options: AuthenticateOptions): Context {
  const replaced: Record<string, string> = options.authorization !== undefined
    ? { authorization: options.authorization, 'service-tenant': options.tenant ?? '', 'service-access-key': '', cookie: '', 'x-csrf-token': '' }
    : { authorization: '', 'service-tenant': options.tenant ?? '', 'service-access-key': '', 'x-csrf-token': options.csrfToken ?? '' };
  const view = Object.create(ctx) as Context;
  const get = (name: string) => {
    const key = name.toLowerCase();
    return key in replaced ? replaced[key] : ctx.get(name);
  };
  Object.defineProperty(view, 'get', { value: get });
  return view;
}

/** The database may not be up yet when the service starts: keep trying rather than exit. */
async function prepareWithRetry(prepare: () => Promise<void>, log: Logger) {
  for (let attempt = 1; ; attempt++) {
    try {
      await prepare();
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err) || attempt >= 60) throw err;
      log.warn({ attempt }, 'database unavailable at start; retrying');
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
