/**
 * The plugin loader. A plugin is a package or folder exporting a manifest:
 * what host API it was written for, the settings it reads, the sign-in
 * method it adds, the tables and messages it brings, and `register`. Before
 * anything is opened the loader checks the host version, decides from the
 * configuration which plugins are on, orders those by their dependencies,
 * and turns each one's SERVICE_* strings into typed, defaulted settings with
 * ajv; every refusal names the plugin or the setting.
 */
import type { InteractiveGate } from './interactive.ts';
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { OpenApiFragment } from './openapi-fragment.ts';
import { Ajv, type ErrorObject } from 'ajv';
import semver from 'semver';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { ConfigError } from './config.ts';
import type { AuthDriver, DatabaseInfo, Directory } from './auth/types.ts';
import type { SignIn } from './auth/middleware.ts';
import type { StoredObject } from './storage/objects.ts';
import type { Violation } from './errors.ts';
import type { Storage } from './storage/connection.ts';
import type { Databases } from './storage/databases.ts';
import type { Principal } from './auth/types.ts';
import type { CustomPropertiesCheck, StatusCheck } from './rest/writer.ts';
import type { Context } from 'koa';
import type { JsonBodyReader } from './body.ts';
import type { Metrics } from './metrics.ts';
import type { Language } from './messages.ts';
import type { JobService } from './jobs.ts';
import type { ObjectWrites } from './rest/object-writes.ts';
import type { BulkWrites } from './rest/bulk-writes.ts';

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

/**
 * Sees each write of objects once, before any of its objects is prepared and
 * checked: a REST write of objects (POST, PUT, PATCH below /rest/<db>/ that no
 * REST extension served, after its body
 * was read) and a plugin's writes of many objects (`writeObjects`,
 * `bulkWrites`, once their caller hands them the payloads). `request` is what
 * the checks of that write are given as theirs (CustomPropertiesCheck,
 * StatusCheck): a plugin keeps what it found for the write by it, e.g. the
 * annotations it read once for the whole write. It may normalize the
 * payloads (they are the objects the writer reads). Since host API 1.8.
 */
export type WriteObserver = (write: {
  /** The REST request's Koa context, or a token of the plugin's write of its own. */
  request: object;
  method: 'POST' | 'PUT' | 'PATCH';
  principal: Principal;
  db: string;
  /** The request body as parsed (an object or a list); the payloads of a plugin's write, as a list. */
  body: unknown;
}) => Promise<void> | void;

/**
 * A list a plugin serves below objects of one type (`<object>/<name>`, e.g. a
 * user's `accessKeys`), linked from those objects (decisions §7.3) for the
 * callers `visible` lets read it: the link must lead to a 200, so a caller
 * the list would refuse does not see it.
 */
export interface ObjectLink {
  type: string;
  name: string;
  visible(principal: Principal, object: { id: string; type: string; tenant: string }): boolean;
}

/**
 * Where a driver sits in the authentication chain, first to last. The first
 * driver that finds its credentials decides (runtime/auth/middleware.ts).
 * - `gate`: refuses requests before any method looks at them (the
 *   pre-authentication API key);
 * - `bearer`: bearer tokens, ahead of access keys because a client's token
 *   plus an access key identifies the key's user;
 * - `access-key`: the service's access keys, beside every method;
 * - `credentials`: methods that vouch for an identity from the request
 *   (directory, proxy headers, a gateway);
 * - `password`: the service's own passwords, last, on only when no other
 *   method is.
 */
export const AUTH_PHASES = ['gate', 'bearer', 'access-key', 'credentials', 'password'] as const;
export type AuthPhase = (typeof AUTH_PHASES)[number];

/** A method that cannot be on together with the declaring one; the start stops with the reason. */
export interface MethodExclusion {
  method: string;
  reason: string;
}

/**
 * A sign-in method as its plugin declares it. From these declarations the
 * core derives which methods are on, which combinations stop the start, and
 * whether password sign-in is on (general rule 6): runtime/auth/methods.ts.
 */
export interface SignInMethod {
  /** The method's name as its drivers report it (principals, figures). */
  name: string;
  /**
   * `{ setting }`: on when that setting is true; `always`: on whatever the
   * configuration (access keys); `otherwise`: on only when no switched
   * method is (password sign-in).
   */
  on: { setting: string } | 'always' | 'otherwise';
  /** Where the method's drivers sit in the chain unless `addAuthDriver` names another phase. */
  phase: AuthPhase;
  excludes?: MethodExclusion[];
}

/** Tables and texts a plugin brings, declared rather than registered. */
export interface PluginResources {
  /**
   * Append-only migrations, counted per plugin apart from the core's: of
   * tables in the control schema (`$S` = "service") and in every database
   * (`$S` = the database's schema).
   */
  migrations?: { control?: string[]; database?: string[] };
  /** Message texts by key, in every language the service speaks. */
  messages?: Record<Language, Record<string, string>>;
  /**
   * The plugin's calls in the OpenAPI document (runtime/openapi-fragment.ts):
   * the generator adds the built-in plugins' to generated/openapi.gen.*, and
   * the service adds those of plugins from outside the repository to the
   * document it serves at /specification/.
   */
  openapi?: OpenApiFragment;
}

/**
 * What `PluginHost.authenticate` runs the chain with instead of the request's own headers.
 * With `authorization` the request's cookie, anti-forgery token and access key are not seen;
 * with `csrfToken` its Authorization header and access key are not seen.
 */
export interface AuthenticateOptions {
  /** An `Authorization` header, e.g. `Basic …` made of a sign-in form's login ID and password, or `Bearer <token>`. */
  authorization?: string;
  /** The login tenant requested (as the `service-tenant` header). */
  tenant?: string;
  /** An `X-CSRF-Token` header (a session of the user interface re-read without the page's header). */
  csrfToken?: string;
}

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
   * caller below `level`, the least access level that can write there;
   * `level` null: no caller is needed (a sign-in form).
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
  /** Sees every write of objects before its objects are checked, in the order observers were added. Since host API 1.8. */
  addWriteObserver(observer: WriteObserver): void;
  /** Links objects of a type to a list the plugin serves below them (with addRestExtension). */
  addObjectLink(link: ObjectLink): void;
  /** The one check of custom properties on every REST write. */
  setCustomPropertiesCheck(check: CustomPropertiesCheck): void;
  /**
   * The one check of statuses beyond the standard workflow's and of changes
   * of status on every REST write (decisions §7.2). Without one, only the
   * standard statuses are accepted and every change is allowed.
   */
  setStatusCheck(check: StatusCheck): void;
  /** Runs after a database's generated views were (re)created, and for every database at start. */
  afterViews(task: (q: Knex | Knex.Transaction, db: string) => Promise<void>): void;
  /**
   * Runs the service's authentication chain (the same drivers, throttling and
   * user assignment as every request of the programming interfaces) for this
   * request, with `options` instead of its own headers. `db` null: the
   * service-wide calls. Throws the chain's 401/403/429/503.
   */
  authenticate(ctx: Context, db: DatabaseInfo | null, options?: AuthenticateOptions): Promise<SignIn>;
  /** `phase`: where in the chain; by default the phase the plugin's sign-in method declares. */
  addAuthDriver(driver: AuthDriver, phase?: AuthPhase): void;
  /** Whether the named sign-in method is on (by the declarations of every plugin offered). */
  methodOn(method: string): boolean;
  /** Key: `<Type>.<property>`. */
  addSecretHandler(key: string, handler: SecretHandler): void;
  /** Runs after the storage is ready, before the service listens. */
  onStart(task: () => Promise<void>): void;
  onClose(task: () => Promise<void>): void;
  /**
   * Writes many objects in one transaction through the REST interface's
   * writer and checks, as `principal` (runtime/rest/object-writes.ts);
   * listeners are told after it committed. Since host API 1.4.
   */
  writeObjects<T>(db: string, principal: Principal, work: (writes: ObjectWrites) => Promise<T>): Promise<T>;
  /**
   * Writes many objects as one change through the REST interface's writer
   * and checks, as `principal`, without holding the database while they are
   * prepared and checked (runtime/rest/bulk-writes.ts): the writes are
   * staged in parts, giving way to interactive requests, then made in one
   * short transaction. `work` runs again from the start when the objects
   * changed under it. Since host API 1.6.
   */
  bulkWrites<T>(db: string, principal: Principal, work: (writes: BulkWrites) => Promise<T>): Promise<T>;
  /** The plugin that keeps jobs offers them to the others (once). Since host API 1.4. */
  provideJobs(service: JobService): void;
  /** The job service a plugin provided; throws when none did (declare a dependency on that plugin). Since host API 1.4. */
  jobs(): JobService;
  /** Told after a REST write committed on this instance, with the types it touched. */
  onChange(listener: (db: string, types: string[]) => void): void;
  /** Tells every listener (caches of sign-ins, keys, assignments) that a plugin changed something they remember, e.g. `AccessRule`. */
  changed(db: string, types: string[]): void;
}

/** Settings as `register` receives them: checked, converted and defaulted by the plugin's `configSchema`. */
export type PluginSettings = Record<string, unknown>;

/**
 * `S`: the settings as the plugin's schema makes them. The default is open
 * (`any`) so that lists of manifests with different settings are one type.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface PluginManifest<S extends object = any> extends PluginResources {
  name: string;
  /** The range of host API versions (runtime/host.ts HOST_API_VERSION) the plugin was written for, e.g. `^1`. */
  host: string;
  dependencies?: string[];
  /**
   * JSON schema of the SERVICE_* settings the plugin reads (draft-07, as ajv
   * reads it with type coercion and defaults). A constrained setting has a
   * `description` saying in words what it must be.
   */
  configSchema?: object;
  /**
   * Prefixes of settings that are the plugin's: with the plugin on, a
   * SERVICE_* setting under one of them that no plugin's schema knows stops
   * the start (a misspelt setting would otherwise be ignored).
   */
  settingsPrefixes?: string[];
  /** The sign-in method the plugin adds; a plugin with a switched method is on exactly when the method is. */
  method?: SignInMethod;
  /** Whether configuration switches the plugin on (besides its method's switch). */
  enabled?(env: Record<string, string | undefined>): boolean;
  /** Checks of the typed settings ajv cannot make; throws ConfigError. Runs before any storage is opened. */
  checkSettings?(settings: S): void;
  register(host: PluginHost, settings: S): Promise<void> | void;
}

export class PluginError extends Error {
  constructor(readonly code: 'PLUGIN_DUPLICATE' | 'PLUGIN_MISSING_DEPENDENCY' | 'PLUGIN_INVALID' | 'PLUGIN_HOST_VERSION', message: string) {
    super(`${code}: ${message}`);
  }
}

/** Refuses a manifest that is not one, or that was written for another host API. */
export function checkManifest(manifest: PluginManifest, hostVersion: string): void {
  if (!manifest || typeof manifest !== 'object' || typeof manifest.name !== 'string' || !manifest.name || typeof manifest.register !== 'function') {
    throw new PluginError('PLUGIN_INVALID', 'a plugin lacks a name or a register function');
  }
  const range = manifest.host;
  if (typeof range !== 'string' || !semver.validRange(range)) {
    throw new PluginError('PLUGIN_INVALID', `plugin ${manifest.name} does not declare the host API version it was written for (host: a semver range such as "^1")`);
  }
  if (!semver.satisfies(hostVersion, range)) {
    throw new PluginError('PLUGIN_HOST_VERSION', `plugin ${manifest.name} was written for host API ${range}; this service offers host API ${hostVersion}`);
  }
}

/** Orders plugins so that each comes after its dependencies; a dependency that is not among them stops the start. */
export function orderPlugins<M extends PluginManifest>(manifests: M[]): M[] {
  const byName = new Map<string, M>();
  for (const m of manifests) {
    if (!m || typeof m.name !== 'string' || typeof m.register !== 'function') {
      throw new PluginError('PLUGIN_INVALID', `a plugin lacks a name or a register function`);
    }
    if (byName.has(m.name)) throw new PluginError('PLUGIN_DUPLICATE', `plugin ${m.name} is registered twice`);
    byName.set(m.name, m);
  }
  const ordered: M[] = [];
  const visiting = new Set<string>();
  const visit = (m: M) => {
    if (ordered.includes(m)) return;
    if (visiting.has(m.name)) throw new PluginError('PLUGIN_INVALID', `plugin ${m.name} depends on itself`);
    visiting.add(m.name);
    for (const dep of m.dependencies ?? []) {
      const d = byName.get(dep);
      if (!d) throw new PluginError('PLUGIN_MISSING_DEPENDENCY', `plugin ${m.name} needs ${dep}, which is not installed or not switched on`);
      visit(d);
    }
    ordered.push(m);
  };
  for (const m of [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))) visit(m);
  return ordered;
}

/**
 * Checks the plugin's settings against its schema and returns them typed:
 * ajv converts the SERVICE_* strings to the schema's types and fills in its
 * defaults; an empty value counts as unset. A refusal names the setting and
 * says in words what it must be: the setting's `description` in the schema,
 * not ajv's text, which shows the pattern. The result has the manifest's
 * settings type `S`, which its schema promises.
 */
export function checkPluginConfig<S extends object = PluginSettings>(manifest: PluginManifest<S>, env: Record<string, string | undefined>): S {
  const settings: PluginSettings = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('SERVICE_') && v !== undefined && v !== ''));
  if (!manifest.configSchema) return {} as S;
  const validate = settingsValidator(manifest.configSchema);
  if (!validate(settings)) {
    const e = validate.errors![0];
    const setting = e.instancePath.replace(/^\//, '') || String(e.params.missingProperty ?? manifest.name);
    throw new ConfigError(setting, `${requirement(e, setting, manifest.configSchema)} (plugin ${manifest.name})`);
  }
  // Only the plugin's own settings: a plugin has no business reading another's.
  const known = Object.keys((manifest.configSchema as { properties?: object }).properties ?? {});
  return Object.fromEntries(known.filter((k) => settings[k] !== undefined).map((k) => [k, settings[k]])) as S;
}

const validators = new WeakMap<object, ReturnType<Ajv['compile']>>();

function settingsValidator(schema: object) {
  let validate = validators.get(schema);
  if (!validate) {
    validate = new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true }).compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/**
 * A SERVICE_* setting under the prefix of a plugin that is on, which no
 * offered plugin's schema and no core setting knows, is refused: it is a
 * misspelling the service would otherwise silently ignore.
 */
export function checkUnknownSettings(on: PluginManifest[], offered: PluginManifest[], coreSettings: ReadonlySet<string>, env: Record<string, string | undefined>): void {
  const known = new Set(coreSettings);
  for (const m of offered) {
    for (const name of Object.keys((m.configSchema as { properties?: object } | undefined)?.properties ?? {})) known.add(name);
    if (m.method && typeof m.method.on === 'object') known.add(m.method.on.setting);
  }
  for (const m of on) {
    for (const prefix of m.settingsPrefixes ?? []) {
      const unknown = Object.keys(env).filter((k) => k.startsWith(prefix) && !known.has(k)).sort();
      if (unknown.length) throw new ConfigError(unknown[0], `is not a setting of plugin ${m.name} (its settings start with ${prefix}; check the spelling)`);
    }
  }
}

function requirement(error: ErrorObject, setting: string, schema: object): string {
  if (error.keyword === 'required') return 'must be set';
  if (error.keyword === 'dependencies') return `must be set together with ${String(error.params.property)}`;
  const description = (schema as { properties?: Record<string, { description?: string }> }).properties?.[setting]?.description;
  return description ? `must be ${description}` : 'has a value of the wrong form';
}
