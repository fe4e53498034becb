/**
 * The plugin loader. A plugin is a folder under plugins/ exporting a
 * manifest; the loader validates each plugin's settings with ajv and refuses
 * duplicates and missing dependencies before anything listens.
 */
import type { InteractiveGate } from './interactive.ts';
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { Ajv, type ErrorObject } from 'ajv';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { ConfigError } from './config.ts';
import type { AuthDriver, Directory } from './auth/types.ts';
import type { StoredObject } from './storage/objects.ts';
import type { Violation } from './errors.ts';
import type { Storage } from './storage/connection.ts';
import type { Databases } from './storage/databases.ts';
import type { Principal } from './auth/types.ts';
import type { CustomPropertiesCheck } from './rest/writer.ts';
import type { Context } from 'koa';
import type { JsonBodyReader } from './body.ts';
import type { Metrics } from './metrics.ts';

/** Keeps a write-only property (e.g. a password) outside the objects table, in the write's transaction. */
export type SecretHandler = (write: { trx: Knex.Transaction; db: string; object: StoredObject; value: unknown }) => Promise<Violation[] | void>;

/**
 * A path below /rest/<db>/ that is not a metadata object (e.g. access keys):
 * asked, after authentication and body parsing, before the generic handlers.
 * Returns false when the path is not its own.
 */
export type RestExtension = (call: {
  ctx: Context;
  principal: Principal;
  db: string;
  /** Decoded path segments after the database name. */
  segments: string[];
  /** Base URL including the context path. */
  base: string;
}) => Promise<boolean> | boolean;

export interface PluginHost {
  config: Config;
  knex: Knex;
  storage: Storage;
  databases: Databases;
  log: Logger;
  directory: Directory;
  /** Routes outside /rest and /api/<db>, mounted below the context path; unauthenticated unless the plugin authenticates. */
  router: Router;
  /**
   * Routes of `/api/<db>/…`, written relative to it (`/queries/download`).
   * They run after the database was found and the caller authenticated:
   * `ctx.state.principal` (Principal) and `ctx.state.db` (DatabaseInfo) are
   * set. Bodies are not parsed; use `jsonBody` for JSON.
   */
  api: Router;
  /**
   * Reads a JSON body into `ctx.request.body` within the configured limit
   * (415 / 413 / 400 as the REST interface does), after refusing (403) a
   * caller below `level`, the least access level that can write there.
   */
  jsonBody: JsonBodyReader;
  /** The instance's Prometheus figures: a plugin registers its own counters and gauges there. */
  metrics: Metrics;
  /** Requests in flight that someone waits for: bulk work calls `interactive.pause()` before each part it hands on. */
  interactive: InteractiveGate;
  /** This request's answer is bulk work (a streamed export): it no longer holds bulk work back. */
  bulk(ctx: Context): void;
  /** `listNames`: what the extension serves where a REST path names a list (e.g. accessKeys), for the request figures. */
  addRestExtension(extension: RestExtension, listNames?: string[]): void;
  /** The one check of custom properties on every REST write. */
  setCustomPropertiesCheck(check: CustomPropertiesCheck): void;
  /** Append-only migrations of tables the plugin keeps in every database (`$S` = the database's schema). */
  addDatabaseMigrations(plugin: string, migrations: string[]): void;
  /** Append-only migrations of tables in the control schema (`$S` = "service"). */
  addControlMigrations(plugin: string, migrations: string[]): void;
  /** Runs after a database's generated views were (re)created, and for every database at start. */
  afterViews(task: (q: Knex | Knex.Transaction, db: string) => Promise<void>): void;
  addAuthDriver(driver: AuthDriver, order: number): void;
  /** Key: `<Type>.<property>`. */
  addSecretHandler(key: string, handler: SecretHandler): void;
  /** Runs after the storage is ready, before the service listens. */
  onStart(task: () => Promise<void>): void;
  onClose(task: () => Promise<void>): void;
  /** Told after a REST write committed on this instance, with the types it touched. */
  onChange(listener: (db: string, types: string[]) => void): void;
  /** Tells every listener (caches of sign-ins, keys, assignments) that a plugin changed something they remember, e.g. `AccessRule`. */
  changed(db: string, types: string[]): void;
}

export interface PluginManifest {
  name: string;
  dependencies?: string[];
  /** JSON schema of the SERVICE_* settings the plugin reads, checked before it registers. */
  configSchema?: object;
  /** Whether configuration switches the plugin on. */
  enabled?(env: Record<string, string | undefined>): boolean;
  register(host: PluginHost): Promise<void> | void;
}

export class PluginError extends Error {
  constructor(readonly code: 'PLUGIN_DUPLICATE' | 'PLUGIN_MISSING_DEPENDENCY' | 'PLUGIN_INVALID', message: string) {
    super(`${code}: ${message}`);
  }
}

/** Orders plugins so that each comes after its dependencies. */
export function orderPlugins(manifests: PluginManifest[]): PluginManifest[] {
  const byName = new Map<string, PluginManifest>();
  for (const m of manifests) {
    if (!m || typeof m.name !== 'string' || typeof m.register !== 'function') {
      throw new PluginError('PLUGIN_INVALID', `a plugin lacks a name or a register function`);
    }
    if (byName.has(m.name)) throw new PluginError('PLUGIN_DUPLICATE', `plugin ${m.name} is registered twice`);
    byName.set(m.name, m);
  }
  const ordered: PluginManifest[] = [];
  const visiting = new Set<string>();
  const visit = (m: PluginManifest) => {
    if (ordered.includes(m)) return;
    if (visiting.has(m.name)) throw new PluginError('PLUGIN_INVALID', `plugin ${m.name} depends on itself`);
    visiting.add(m.name);
    for (const dep of m.dependencies ?? []) {
      const d = byName.get(dep);
      if (!d) throw new PluginError('PLUGIN_MISSING_DEPENDENCY', `plugin ${m.name} needs ${dep}`);
      visit(d);
    }
    ordered.push(m);
  };
  for (const m of [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))) visit(m);
  return ordered;
}

/**
 * Checks the plugin's settings against its schema. A refusal names the
 * setting and says in words what it must be: the setting's `description`
 * in the schema, not ajv's text, which shows the pattern.
 */
export function checkPluginConfig(manifest: PluginManifest, env: Record<string, string | undefined>) {
  if (!manifest.configSchema) return;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(manifest.configSchema);
  const settings = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('SERVICE_') && v !== undefined && v !== ''));
  if (!validate(settings)) {
    const e = validate.errors![0];
    const setting = e.instancePath.replace(/^\//, '') || String(e.params.missingProperty ?? manifest.name);
    throw new ConfigError(setting, `${requirement(e, setting, manifest.configSchema)} (plugin ${manifest.name})`);
  }
}

function requirement(error: ErrorObject, setting: string, schema: object): string {
  if (error.keyword === 'required') return 'must be set';
  if (error.keyword === 'dependencies') return `must be set together with ${String(error.params.property)}`;
  const description = (schema as { properties?: Record<string, { description?: string }> }).properties?.[setting]?.description;
  return description ? `must be ${description}` : 'has a value of the wrong form';
}
