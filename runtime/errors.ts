/**
 * One error factory and one catalog of codes. Every error that reaches a
 * client is a ServiceError, rendered by the error middleware in the
 * specification's payload, with its message in the caller's language.
 */
import type { Context, Next } from 'koa';
import { translate, type Language } from './messages.ts';

export interface Violation {
  path: string;
  /** Message key in the catalog, with its parameters. */
  key: string;
  params?: Record<string, unknown>;
}

export const ERRORS = {
  BAD_REQUEST: { status: 400, key: 'badRequest' },
  INVALID_JSON: { status: 400, key: 'invalidJson' },
  INVALID_PAYLOAD: { status: 400, key: 'invalidPayload' },
  INVALID_PATH: { status: 400, key: 'invalidPath' },
  INVALID_PARAMETER: { status: 400, key: 'invalidParameter' },
  INVALID_ENCODING: { status: 400, key: 'invalidEncoding' },
  RESERVED_PROPERTY: { status: 400, key: 'reservedProperty' },
  // A payload of something that is not a metamodel type, named in a message of its own (German needs its article).
  INVALID_DATABASE: { status: 400, key: 'invalidDatabase' },
  INVALID_QUERY: { status: 400, key: 'invalidQuery' },
  INVALID_QUERY_SETTINGS: { status: 400, key: 'invalidQuerySettings' },
  INVALID_ACCESS_KEY: { status: 400, key: 'invalidAccessKey' },
  INVALID_ACCESS_RULES: { status: 400, key: 'invalidAccessRules' },
  INVALID_EXPLAIN_REQUEST: { status: 400, key: 'invalidExplainRequest' },
  /** No method found credentials in the request. */
  UNAUTHENTICATED: { status: 401, key: 'unauthenticated' },
  /** A method found credentials and refused them (which part was wrong is not told). */
  CREDENTIALS_REFUSED: { status: 401, key: 'credentialsRefused' },
  FORBIDDEN: { status: 403, key: 'forbidden' },
  NOT_FOUND: { status: 404, key: 'notFound' },
  OBJECT_NOT_FOUND: { status: 404, key: 'objectNotFound' },
  DATABASE_NOT_FOUND: { status: 404, key: 'databaseNotFound' },
  JOB_NOT_FOUND: { status: 404, key: 'jobNotFound' },
  ACCESS_KEY_NOT_FOUND: { status: 404, key: 'accessKeyNotFound' },
  PROFILE_NOT_FOUND: { status: 404, key: 'profileNotFound' },
  METHOD_NOT_ALLOWED: { status: 405, key: 'methodNotAllowed' },
  CONFLICT: { status: 409, key: 'conflict' },
  LABEL_CLASH: { status: 409, key: 'labelClash' },
  ID_CLASH: { status: 409, key: 'idClash' },
  LOGIN_ID_CLASH: { status: 409, key: 'loginIdClash' },
  DATABASE_EXISTS: { status: 409, key: 'databaseExists' },
  TENANT_IS_DEFAULT: { status: 409, key: 'tenantIsDefault' },
  TENANT_NOT_EMPTY: { status: 409, key: 'tenantNotEmpty' },
  PRECONDITION_FAILED: { status: 412, key: 'preconditionFailed' },
  PAYLOAD_TOO_LARGE: { status: 413, key: 'payloadTooLarge' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, key: 'unsupportedMediaType' },
  UNSUPPORTED_ENCODING: { status: 415, key: 'unsupportedEncoding' },
  CONTENT_TYPE_MISSING: { status: 415, key: 'contentTypeMissing' },
  TOO_MANY_ATTEMPTS: { status: 429, key: 'tooManyAttempts' },
  TOO_MANY_QUERIES: { status: 429, key: 'tooManyQueries' },
  INTERNAL: { status: 500, key: 'internal' },
  UNAVAILABLE: { status: 503, key: 'unavailable' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** An error payload lists this many violations at most, and says how many more there were. */
export const MAX_VIOLATIONS = 100;

/** Parameters and paths echo the request (a label, a type name, a content type): each is cut to this many characters. */
const MAX_ECHO = 500;

/**
 * The violations of one request: the first MAX_VIOLATIONS are kept, the
 * rest only counted, so that a payload of a million bad items costs no more
 * memory than its first hundred.
 */
export class ViolationList {
  readonly kept: Violation[] = [];
  omitted = 0;

  push(...violations: Violation[]): void {
    for (const v of violations) {
      if (this.kept.length < MAX_VIOLATIONS) this.kept.push(v);
      else this.omitted++;
    }
  }

  get length(): number {
    return this.kept.length + this.omitted;
  }
}

/**
 * Marks a ServiceError whichever copy of this module made it: a plugin from
 * outside may load the host module as a module instance of its own (its
 * own installation of the package, or ESM beside CommonJS), and its 401
 * must still be a 401, not an unknown error answered with 500.
 */
const SERVICE_ERROR = Symbol.for('metadata-service.ServiceError');

export class ServiceError extends Error {
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SERVICE_ERROR] === true;
  }

  readonly [SERVICE_ERROR] = true;
  readonly code: ErrorCode;
  readonly status: number;
  readonly params: Record<string, unknown>;
  readonly violations: Violation[];
  /** Violations counted but not kept (ViolationList). */
  readonly violationsOmitted: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, params: Record<string, unknown> = {}, violations: Violation[] | ViolationList = [], headers: Record<string, string> = {}) {
    super(`${code} ${JSON.stringify(params).slice(0, MAX_ECHO)}`);
    this.code = code;
    this.status = ERRORS[code].status;
    this.params = params;
    this.violations = violations instanceof ViolationList ? violations.kept : violations;
    this.violationsOmitted = violations instanceof ViolationList ? violations.omitted : 0;
    this.headers = headers;
  }
}

export function createError(
  code: ErrorCode, params: Record<string, unknown> = {}, violations: Violation[] | ViolationList = [], headers: Record<string, string> = {},
): ServiceError {
  return new ServiceError(code, params, violations, headers);
}

/** Connection-level failures mean the database is away, not that the request is bad. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004']);

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string; name?: string };
  if (!e) return false;
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
  return /Connection terminated|connection is closed|Client has encountered a connection error|Knex: Timeout acquiring a connection|Connection ended unexpectedly/i.test(e.message ?? '');
}

/** Koa middleware: renders every error as the specification's error payload. */
export function errorMiddleware(options: { log: { error: (o: object, m: string) => void }; defaultLanguage: Language }) {
  return async function renderErrors(ctx: Context, next: Next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw createError('NOT_FOUND');
    } catch (err) {
      const error = toServiceError(err);
      if (error.status >= 500 && error.code !== 'UNAVAILABLE') options.log.error({ err }, 'request failed');
      ctx.status = error.status;
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      ctx.body = errorPayload(ctx, error, languageOf(ctx, options.defaultLanguage));
    }
  };
}

/**
 * The specification's error payload. However much the request got wrong,
 * the payload stays small: at most MAX_VIOLATIONS violations (and
 * `violationsOmitted`, the count of the others), every echoed text cut.
 */
function errorPayload(ctx: Context, error: ServiceError, language: Language) {
  const shown = error.violations.slice(0, MAX_VIOLATIONS);
  const omitted = error.violations.length - shown.length + error.violationsOmitted;
  return {
    statusCode: error.status,
    method: ctx.method,
    message: translate(language, ERRORS[error.code].key, bounded(error.params)),
    ...(shown.length
      ? { violations: shown.map((v) => ({ message: translate(language, v.key, bounded(v.params ?? {})), path: cut(v.path) })) }
      : {}),
    ...(omitted ? { violationsOmitted: omitted } : {}),
    _links: { self: selfLink(ctx.href) },
  };
}

function cut(text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text;
}

function bounded(params: Record<string, unknown>): Record<string, unknown> {
  const text = (value: unknown) => (typeof value === 'string' || (typeof value === 'object' && value !== null) ? cut(String(value)) : value);
  return Object.fromEntries(Object.entries(params).map(([name, value]) => [name, text(value)]));
}

/** Query parameters whose values are credentials by their name (`access_token`, `password`, `api_key` …). */
const SECRET_PARAMETER = /token|passw|secret|key|jwt|auth|credential|session/i;

/**
 * The failed call's URL, as the specification asks, but with the value of
 * every credential-like query parameter masked: a caller who put a token in
 * `?access_token=` must not find it echoed in a payload that proxies and
 * clients log.
 */
export function selfLink(href: string): string {
  const q = href.indexOf('?');
  if (q < 0) return href;
  const hash = href.indexOf('#', q);
  const query = href.slice(q + 1, hash < 0 ? undefined : hash);
  const masked = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    let name = pair.slice(0, eq);
    try { name = decodeURIComponent(name.replace(/\+/g, ' ')); } catch { /* keep it raw */ }
    return SECRET_PARAMETER.test(name) ? `${pair.slice(0, eq)}=***` : pair;
  });
  return `${href.slice(0, q)}?${masked.join('&')}`;
}

/** Values the database cannot take (a NUL in text, numbers out of range, statements too complex): the request is at fault. */
const BAD_VALUE_CODES = new Set(['22P02', '22P05', '22003', '22021', '54000', '54001']);

function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  const e = err as { status?: number; expose?: boolean; code?: string };
  if (isDatabaseUnavailable(err)) return createError('UNAVAILABLE', {}, [], { 'Retry-After': '5' });
  if (e?.code && BAD_VALUE_CODES.has(e.code)) return createError('BAD_REQUEST');
  // Bodies are read by runtime/body.ts, which translates what reading them throws; other libraries' client errors say so by `expose`.
  if (e?.status && e.status >= 400 && e.status < 500 && e.expose) return createError('BAD_REQUEST');
  return createError('INTERNAL');
}

export function languageOf(ctx: Context, fallback: Language): Language {
  const header = ctx.get('Accept-Language').toLowerCase();
  for (const part of header.split(',')) {
    const tag = part.split(';')[0].trim();
    if (tag.startsWith('de')) return 'de';
    if (tag.startsWith('en')) return 'en';
  }
  return fallback;
}

/**
 * The language a result is written in: the `language` parameter wins over
 * Accept-Language; absent both, `fallback`. Another value, or the parameter
 * given twice, is a 400 naming it.
 */
export function languageParameter(ctx: Context, fallback: Language): Language {
  const value = ctx.query.language;
  const refused = (params: Record<string, unknown> = {}, key = 'invalidValue') =>
    createError('INVALID_PARAMETER', { name: 'language' }, [{ path: 'language', key, params }]);
  if (Array.isArray(value)) throw refused();
  if (value === undefined || value === '') return languageOf(ctx, fallback);
  const language = value.toLowerCase();
  if (language !== 'de' && language !== 'en') throw refused({ allowed: 'de, en' }, 'notAllowedValue');
  return language;
}
