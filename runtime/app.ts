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
import { usePublicUrl, withServer } from './public-url.ts';
import { loadGenerated, type Generated } from './generated.ts';
import { openStorage, type Storage } from './storage/connection.ts';
import { migrateControl, PluginMigrations } from './storage/migrations.ts';
import { Databases } from './storage/databases.ts';
import { createDirectory } from './auth/directory.ts';
import { createAuthenticator } from './auth/middleware.ts';
import type { AuthDriver, Principal } from './auth/types.ts';
import { checkPluginConfig, orderPlugins, type PluginHost, type PluginManifest, type RestExtension, type SecretHandler } from './plugins.ts';
import { enabledMethods } from './auth/methods.ts';
import type { CustomPropertiesCheck } from './rest/writer.ts';
import { META_DATABASE, seedMetamodel } from './storage/meta-database.ts';
import { readStandardMetamodel } from './metamodel/standard.ts';
import { handleRest } from './rest/handlers.ts';
import { splitPath } from './rest/paths.ts';
import { adminRoutes } from './admin.ts';
import { knexPool, requestFigures, ServiceMetrics } from './metrics.ts';
import { metamodelListNames } from './route-templates.ts';

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
  listen(): Promise<number>;
  /** Where GET /metrics is served once listening; undefined without SERVICE_METRICS_PORT. */
  metricsPort(): number | undefined;
  close(): Promise<void>;
}

export interface ServiceOptions {
  plugins: PluginManifest[];
  log?: Logger;
}

export async function createService(config: Config, options: ServiceOptions): Promise<Service> {
  const log = options.log ?? pino({ level: config.logLevel, base: undefined });
  // Configuration errors stop the start before anything is opened.
  enabledMethods(config.env);
  const plugins = orderPlugins(options.plugins).filter((p) => !p.enabled || p.enabled(config.env));
  for (const plugin of plugins) checkPluginConfig(plugin, config.env);
  const generated = await loadGenerated(config.generatedDir);
  const storage = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, log });
  try {
    return await assemble(config, log, plugins, generated, storage);
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw err;
  }
}

async function assemble(config: Config, log: Logger, plugins: PluginManifest[], generated: Generated, storage: Storage): Promise<Service> {
  const { knex } = storage;
  const standard = readStandardMetamodel();
  const migrations = new PluginMigrations();
  const viewTasks: ((q: Knex | Knex.Transaction, db: string) => Promise<void>)[] = [];
  const databases = new Databases(knex, {
    afterCreate: async (trx, db, tenant, actor) => {
      if (db === META_DATABASE) await seedMetamodel(trx, standard, tenant, actor);
    },
    afterViews: async (q, db) => {
      for (const task of viewTasks) await task(q, db);
    },
    migrations,
  }, generated.viewsSql);
  const directory = createDirectory(knex, config.adminUsers);
  const drivers: { driver: AuthDriver; order: number }[] = [];
  const secretHandlers = new Map<string, SecretHandler>();
  const startTasks: (() => Promise<void>)[] = [];
  const closeTasks: (() => Promise<void>)[] = [];
  const changeListeners: ((db: string, types: string[]) => void)[] = [];
  const pluginRouter = new Router();
  const apiRouter = new Router({ prefix: '/api/:db' });
  const restExtensions: RestExtension[] = [];
  let customProperties: CustomPropertiesCheck | undefined;
  const readJson = jsonBodyReader(config.bodyLimitBytes);
  const interactive = new InteractiveGate();
  const metrics = new ServiceMetrics();
  metrics.addGate(interactive.figures);
  metrics.addPool('service', knexPool(knex));
  const restListNames = new Set(metamodelListNames(generated.metamodel));
  const host: PluginHost = {
    config, knex, storage, databases, log, directory, router: pluginRouter, api: apiRouter, metrics,
    jsonBody: readJson,
    interactive,
    bulk: (ctx) => (ctx.state.leaveInteractive as ((bulk: boolean) => void) | undefined)?.(true),
    addRestExtension: (extension, listNames = []) => {
      restExtensions.push(extension);
      for (const name of listNames) restListNames.add(name);
    },
    setCustomPropertiesCheck: (check) => {
      if (customProperties) throw new Error('a custom-properties check is registered already');
      customProperties = check;
    },
    addDatabaseMigrations: (plugin, list) => migrations.database.set(plugin, list),
    addControlMigrations: (plugin, list) => migrations.control.set(plugin, list),
    afterViews: (task) => viewTasks.push(task),
    addAuthDriver: (driver, order) => drivers.push({ driver, order }),
    addSecretHandler: (key, handler) => secretHandlers.set(key, handler),
    onStart: (task) => startTasks.push(task),
    onClose: (task) => closeTasks.push(task),
    onChange: (listener) => changeListeners.push(listener),
    changed: (db, types) => changeListeners.forEach((listener) => listener(db, types)),
  };
  for (const plugin of plugins) await plugin.register(host);
  const restDeps = {
    model: generated.metamodel, routes: generated.routes, validators: generated.validators, knex, secretHandlers, customProperties,
    changed: (db: string, types: string[]) => changeListeners.forEach((listener) => listener(db, types)),
  };
  const authenticator = createAuthenticator(drivers.sort((a, b) => a.order - b.order).map((d) => d.driver), directory, {
    knex, env: config.env, signInFailed: (method, status) => metrics.signInFailed(method, status),
  });
  changeListeners.push((_db, types) => {
    if (types.some((t) => t === 'User' || t === 'Tenant' || t === 'AccessRule')) authenticator.forgetAssignments();
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
  const openapi = { yaml: generated.openapiYaml, json: generated.openapiJson };
  const described = config.publicUrl ? withServer(openapi, `${config.publicUrl}${config.contextPath}`) : openapi;
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

  // Three fixed addresses: a switch costs the request path less than a router.
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
    if (ctx.path === '/specification/openapi.yaml') {
      ctx.type = 'application/yaml';
      ctx.body = described.yaml;
      return;
    }
    if (ctx.path === '/specification/openapi.json') {
      ctx.type = 'application/json';
      ctx.body = described.json;
      return;
    }
    return next();
  });
  app.use(async function readiness(ctx, next) {
    if (!ready) throw createError('UNAVAILABLE', {}, [], { 'Retry-After': '5' });
    return next();
  });

  const admin = adminRoutes({ databases, authenticator, readJson, dropped: (db) => restDeps.changed(db, ['Tenant', 'User']) });
  app.use(async function adminApi(ctx, next) {
    if (!ctx.path.startsWith('/api/admin/')) return next();
    return admin(ctx, next);
  });

  app.use(async function rest(ctx, next) {
    if (!ctx.path.startsWith('/rest/')) return next();
    // Only the database name is read before authentication; the rest of the path is judged after it.
    const rest = ctx.path.slice('/rest/'.length);
    const slash = rest.indexOf('/');
    const [dbName] = splitPath(slash < 0 ? rest : rest.slice(0, slash));
    const db = await databases.get(dbName);
    if (!db) {
      // Only a system administrator learns that a database does not exist; anyone else cannot tell it from a wrong password.
      ctx.state.principal = await authenticator.authenticate(ctx, null);
      throw createError('DATABASE_NOT_FOUND', { name: dbName });
    }
    ctx.state.principal = await authenticator.authenticate(ctx, db);
    if (slash < 0 || slash === rest.length - 1) throw createError('NOT_FOUND');
    const segments = splitPath(rest.slice(slash + 1));
    const handle = async () => {
      for (const extension of restExtensions) {
        if (await extension({ ctx, principal: ctx.state.principal, db: db.name, segments, base: base(ctx) })) return;
      }
      return handleRest(ctx, restDeps, ctx.state.principal, db.name, segments, { base: base(ctx), db: db.name });
    };
    // Nothing in /rest can be written below EDITOR: a READ_ONLY caller's body is refused unread.
    if (ctx.method === 'POST' || ctx.method === 'PUT' || ctx.method === 'PATCH') await readJson(ctx, 'EDITOR');
    return handle();
  });
  // The plugins' interfaces of a database (query, profiles): authenticated like /rest.
  const apiRoutes = apiRouter.routes();
  app.use(async function api(ctx, next) {
    if (!ctx.path.startsWith('/api/')) return next();
    const rest = ctx.path.slice('/api/'.length);
    const slash = rest.indexOf('/');
    const [dbName] = splitPath(slash < 0 ? rest : rest.slice(0, slash));
    const db = await databases.get(dbName);
    if (!db) {
      ctx.state.principal = await authenticator.authenticate(ctx, null);
      throw createError('DATABASE_NOT_FOUND', { name: dbName });
    }
    ctx.state.principal = await authenticator.authenticate(ctx, db);
    ctx.state.db = db;
    await apiRoutes(ctx as never, async () => {
      throw createError('NOT_FOUND');
    });
  });
  app.use(pluginRouter.routes());

  app.on('error', (err) => {
    if (!isDatabaseUnavailable(err)) log.error({ err: String(err) }, 'unhandled');
  });

  let server: http.Server | undefined;
  let metricsServer: http.Server | undefined;
  return {
    app, config, storage, generated, databases, log, metrics,
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
