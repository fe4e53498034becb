/**
 * The service's configuration, read once from the environment. A malformed
 * setting stops the start with a message naming it; no other module reads
 * process.env.
 */
import { fileURLToPath } from 'node:url';
import type { Language } from './messages.ts';

export class ConfigError extends Error {
  constructor(readonly setting: string, message: string) {
    super(`${setting}: ${message}`);
  }
}

export interface Config {
  port: number;
  host: string;
  /** SERVICE_METRICS_PORT: where GET /metrics is served (0: any free port); undefined: not at all. */
  metricsPort?: number;
  metricsHost: string;
  databaseUrl?: string;
  dataDir: string;
  contextPath: string;
  adminUsers: string[];
  adminPassword?: string;
  language: Language;
  /**
   * SERVICE_DEFAULT_TENANT (decisions §7.6): the label the default tenant of a
   * database gets when the database is created. An existing database keeps
   * its tenant as it is: the default tenant is the one `service.databases`
   * names by technical key, never found by its label.
   */
  defaultTenantLabel: string;
  bodyLimitBytes: number;
  generatedDir: string;
  logLevel: string;
  shutdownTimeoutMs: number;
  /** SERVICE_PUBLIC_URL: scheme, host and port clients reach the service at; links use it instead of Host. */
  publicUrl?: string;
  /** SERVICE_TRUST_PROXY: the client's address, scheme and host come from X-Forwarded-* headers. */
  trustProxy: boolean;
  /**
   * SERVICE_TRUST_PROXY_HOPS: how many proxies in front of the service append
   * to X-Forwarded-For; the client's address is the one the outermost of them
   * saw. Entries further left were written by the client and prove nothing.
   */
  proxyHops: number;
  /** Everything the plugins read, by its SERVICE_* name. */
  env: Record<string, string | undefined>;
}

export const DEFAULT_GENERATED_DIR = fileURLToPath(new URL('../generated', import.meta.url));

function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}`);
  }
  return Number(text);
}

export function booleanSetting(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const text = env[name]?.trim().toLowerCase();
  if (text === undefined || text === '') return fallback;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new ConfigError(name, 'must be true or false');
}

/** An origin (scheme, host, port) with no path, query, fragment or credentials: the context path is added to it. */
function publicUrlOf(env: Record<string, string | undefined>): string | undefined {
  const text = env.SERVICE_PUBLIC_URL?.trim();
  if (!text) return undefined;
  const refuse = () => new ConfigError('SERVICE_PUBLIC_URL', 'must be an absolute http:// or https:// URL of host and optional port, without path, query, fragment or user (e.g. https://metadata.example.com)');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse();
  }
  if (!/^https?:$/.test(url.protocol) || url.username || url.password || url.pathname !== '/' || /[?#]/.test(text)) throw refuse();
  return url.origin;
}

/** The longest label SERVICE_DEFAULT_TENANT may give: the longest label a tenant may have. */
export const MAX_TENANT_LABEL = 1000;

/** SERVICE_DEFAULT_TENANT: a label a tenant could be given through the REST interface (no control characters, not blank). */
function defaultTenantLabelOf(env: Record<string, string | undefined>): string {
  const text = env.SERVICE_DEFAULT_TENANT;
  if (text === undefined || text === '') return 'Default';
  if (text.trim() !== text || [...text].length > MAX_TENANT_LABEL || /[\u0000-\u001f\u007f]/.test(text)) {
    throw new ConfigError('SERVICE_DEFAULT_TENANT', `must be a label of 1 to ${MAX_TENANT_LABEL} characters without control characters or surrounding blanks`);
  }
  return text;
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const contextPath = (env.SERVICE_CONTEXT_PATH ?? '').replace(/\/+$/, '');
  if (contextPath && !/^(\/[A-Za-z0-9._~-]+)+$/.test(contextPath)) {
    throw new ConfigError('SERVICE_CONTEXT_PATH', 'must look like /name or /name/name');
  }
  const language = (env.SERVICE_LANGUAGE ?? 'en').toLowerCase();
  if (language !== 'en' && language !== 'de') throw new ConfigError('SERVICE_LANGUAGE', 'must be en or de');
  const databaseUrl = env.SERVICE_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('SERVICE_DATABASE_URL', 'must be a postgres:// URL');
  }
  const adminUsers = (env.SERVICE_ADMIN_USER ?? '').split(';').map((s) => s.trim()).filter(Boolean);
  const adminPassword = env.SERVICE_ADMIN_PASSWORD || undefined;
  if (adminPassword !== undefined) {
    if (adminPassword.length < 8) throw new ConfigError('SERVICE_ADMIN_PASSWORD', 'must have at least 8 characters');
    if (!adminUsers.length) throw new ConfigError('SERVICE_ADMIN_PASSWORD', 'needs SERVICE_ADMIN_USER');
  }
  const defaultTenantLabel = defaultTenantLabelOf(env);
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const metricsPort = env.SERVICE_METRICS_PORT ? integer(env, 'SERVICE_METRICS_PORT', 0, 0, 65535) : undefined;
  if (metricsPort && metricsPort === port) throw new ConfigError('SERVICE_METRICS_PORT', 'must differ from PORT');
  return {
    port,
    host: env.HOST || '127.0.0.1',
    metricsPort,
    metricsHost: env.SERVICE_METRICS_HOST || env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir: env.SERVICE_DATA_DIR || './data',
    contextPath,
    adminUsers,
    adminPassword,
    language,
    defaultTenantLabel,
    bodyLimitBytes: integer(env, 'SERVICE_BODY_LIMIT', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    generatedDir: env.SERVICE_GENERATED_DIR || DEFAULT_GENERATED_DIR,
    logLevel: env.SERVICE_LOG_LEVEL || 'info',
    shutdownTimeoutMs: integer(env, 'SERVICE_SHUTDOWN_TIMEOUT', 10_000, 0, 600_000),
    publicUrl: publicUrlOf(env),
    trustProxy: booleanSetting(env, 'SERVICE_TRUST_PROXY', false),
    proxyHops: integer(env, 'SERVICE_TRUST_PROXY_HOPS', 1, 1, 10),
    env: { ...env },
  };
}

/**
 * Every SERVICE_* setting the core reads (loadConfig above, the
 * authentication core, the interactive gate): a plugin's settings prefix
 * never makes one of these an unknown setting (runtime/plugins.ts).
 */
export const CORE_SETTINGS: ReadonlySet<string> = new Set([
  'SERVICE_ACCESS_RULES', 'SERVICE_GUEST_USERS', 'SERVICE_ADMIN_PASSWORD', 'SERVICE_ADMIN_USER', 'SERVICE_AUTH_CACHE_TTL',
  'SERVICE_BODY_LIMIT', 'SERVICE_CONTEXT_PATH', 'SERVICE_DATABASE_URL', 'SERVICE_DATA_DIR', 'SERVICE_DEFAULT_TENANT', 'SERVICE_GENERATED_DIR',
  'SERVICE_LANGUAGE', 'SERVICE_LOG_LEVEL', 'SERVICE_METRICS_HOST', 'SERVICE_METRICS_PORT', 'SERVICE_PLUGINS',
  'SERVICE_PUBLIC_URL', 'SERVICE_QUERY_BULK_RATE', 'SERVICE_SHUTDOWN_TIMEOUT', 'SERVICE_TRUST_PROXY', 'SERVICE_TRUST_PROXY_HOPS',
]);
