/**
 * The pages' calls: one fetch wrapper that adds the session's CSRF token and
 * the chosen language to every request, given to the typed client for the
 * calls the document names, and used as it is for the metamodel-driven paths
 * of objects and lists (`/rest/<db>/<plural>/<uuid>/…`), which the pages
 * only learn at run time from the metamodel and the HAL links.
 */
import { createClient, type Schemas, type ServiceClient } from '../../../client/index.ts';
import type { Language } from './i18n.ts';

export type ErrorPayload = Schemas['Error'];
export type Metamodel = Schemas['ResolvedMetamodel'];
export type MetaType = Schemas['ResolvedType'];
export type MetaProperty = Schemas['ResolvedProperty'];
export type MetaList = Schemas['ResolvedList'];
export type SearchHit = Schemas['SearchHit'];
export type Obj = Record<string, unknown> & { _type: string; id: string; label?: string; _version?: number; href?: string; _links?: Record<string, { href: string }> };

export interface ServiceConfig {
  contextPath: string;
  signIn: 'password' | 'directory' | 'oidc' | 'preauth';
  languages: Language[];
  defaultLanguage: Language;
  /** The page's session as the shell found it (`database` null: the service-wide one); taken once, instead of asking. */
  session?: WebSession & { database: string | null };
}

export interface WebSession {
  csrfToken?: string;
  loginId: string;
  tenant: string;
  tenantLabel: string;
  accessLevel: string;
  systemAdmin: boolean;
  /** The login IDs of the system administrators (SERVICE_ADMIN_USER), told to administrators of a database only. */
  systemAdministrators?: string[];
  method: string;
  logoutUrl?: string;
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly payload: ErrorPayload | undefined, readonly response?: Response) {
    super(payload?.message ?? `HTTP ${status}`);
  }
}

export interface Answer<T> { status: number; data: T; etag: string | null }

export class Api {
  csrfToken: string | undefined;
  language: Language;
  /** Called when a call of the pages (not the session's own) is answered 401: the session has ended. */
  onUnauthorized: (() => void) | undefined;
  readonly client: ServiceClient;

  constructor(readonly config: ServiceConfig, language: Language) {
    this.language = language;
    this.client = createClient({ baseUrl: location.origin + config.contextPath, fetch: (request) => this.fetch(request) });
  }

  /** Every call goes through here: the token (when there is one) and the language. */
  fetch = (request: Request): Promise<Response> => {
    if (this.csrfToken) request.headers.set('X-CSRF-Token', this.csrfToken);
    request.headers.set('Accept-Language', this.language);
    return fetch(request).then((response) => {
      if (response.status === 401 && !new URL(request.url).pathname.endsWith('/web/session')) this.onUnauthorized?.();
      return response;
    });
  };

  /** An absolute or context-relative service URL as a path the wrapper can call. */
  url(pathOrHref: string): string {
    if (/^https?:/.test(pathOrHref)) {
      const u = new URL(pathOrHref);
      return u.pathname + u.search;
    }
    return this.config.contextPath + pathOrHref;
  }

  private prefetched = new Map<string, Promise<Answer<unknown>>>();

  /**
   * Starts a plain GET that a page is about to make (the object of the
   * address the page opened with, while the metamodel is still on its
   * way); the page's own `call` of the same address takes its answer, once.
   */
  prefetch(path: string): void {
    const key = new URL(this.url(path), location.origin).href;
    const answer = this.call('GET', path, { prefetch: true });
    answer.catch(() => undefined);
    this.prefetched.set(key, answer);
    setTimeout(() => this.prefetched.delete(key), 10_000);
  }

  /** A JSON call; a failure throws ApiError with the specification's error payload. */
  async call<T = unknown>(method: string, pathOrHref: string, init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal; query?: Record<string, string | number | undefined>; prefetch?: boolean } = {}): Promise<Answer<T>> {
    const target = new URL(this.url(pathOrHref), location.origin);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) target.searchParams.set(k, String(v));
    const early = method === 'GET' && !init.prefetch && !init.headers && !init.signal ? this.prefetched.get(target.href) : undefined;
    if (early) {
      this.prefetched.delete(target.href);
      return early as Promise<Answer<T>>;
    }
    // Two parts of a page that ask for one object at once (a breadcrumb by the parent link, a reference by its
    // type's list) share the answer: the same technical key names the same object under any list of its types.
    const object = method === 'GET' && !init.headers && !init.signal ? OBJECT_PATH.exec(target.pathname) : null;
    const sharedKey = object ? `${object[1]}/${object[2]}${target.search}` : undefined;
    const pending = sharedKey ? this.inFlight.get(sharedKey) : undefined;
    // A list that does not hold the object answers 404 where another list of it answers: then ask for oneself.
    if (pending) return (pending as Promise<Answer<T>>).catch(() => this.send<T>(method, target, init));
    const answer = this.send<T>(method, target, init);
    if (sharedKey) {
      this.inFlight.set(sharedKey, answer);
      const done = () => { this.inFlight.delete(sharedKey); };
      answer.then(done, done);
    }
    return answer;
  }

  private inFlight = new Map<string, Promise<Answer<unknown>>>();

  private async send<T>(method: string, target: URL, init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal }): Promise<Answer<T>> {
    const headers = new Headers(init.headers);
    headers.set('Accept', 'application/json');
    if (init.body !== undefined) headers.set('Content-Type', 'application/json');
    const request = new Request(target, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), signal: init.signal, credentials: 'same-origin' });
    const response = await this.fetch(request);
    const text = await response.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!response.ok && response.status !== 304) throw new ApiError(response.status, data as ErrorPayload | undefined, response);
    return { status: response.status, data: data as T, etag: response.headers.get('etag') };
  }

  /** The typed client's answer as data, or ApiError. */
  static unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
    if (result.error !== undefined || !result.response.ok) throw new ApiError(result.response.status, result.error as ErrorPayload, result.response);
    return result.data as T;
  }

  sessionPath(db?: string): string {
    return `/web/session${db ? `?database=${encodeURIComponent(db)}` : ''}`;
  }

  async session(db?: string): Promise<WebSession> {
    const embedded = this.config.session;
    this.config.session = undefined;
    if (embedded && embedded.database === (db ?? null)) {
      const { database: _scope, ...s } = embedded;
      if (s.csrfToken) this.csrfToken = s.csrfToken;
      return s;
    }
    const s = (await this.call<WebSession>('GET', this.sessionPath(db))).data;
    if (s.csrfToken) this.csrfToken = s.csrfToken;
    return s;
  }

  async signIn(db: string | undefined, loginId: string, password: string, tenant: string): Promise<WebSession> {
    const body: Record<string, string> = { loginId, password };
    if (db) body.database = db;
    if (tenant) body.tenant = tenant;
    const s = (await this.call<WebSession>('POST', '/web/session', { body })).data;
    this.csrfToken = s.csrfToken;
    return s;
  }

  /** Switches the session's login tenant (by label); the login-tenant rules of the service decide. */
  async switchTenant(db: string, tenant: string): Promise<WebSession> {
    const s = (await this.call<WebSession>('PATCH', this.sessionPath(db), { body: { tenant } })).data;
    if (s.csrfToken) this.csrfToken = s.csrfToken;
    return s;
  }

  async signOut(db?: string): Promise<{ logoutUrl?: string }> {
    const answer = await this.call<{ logoutUrl?: string }>('DELETE', this.sessionPath(db));
    this.csrfToken = undefined;
    return answer.data ?? {};
  }

  private metamodels = new Map<string, { etag: string | null; model: Metamodel; language: Language }>();

  /** Where the tab keeps the last metamodel of a database across page loads (sessionStorage: gone with the tab). */
  private metamodelKey(db: string): string {
    return `mds-metamodel:${this.config.contextPath}:${db}`;
  }

  /**
   * The metamodel this tab last saw for the database, before any call: what
   * a page load uses to ask for its lists at once, beside the object and the
   * metamodel's own revalidation. Never drawn from: the pages wait for
   * `metamodel`.
   */
  lastMetamodel(db: string): Metamodel | undefined {
    const kept = this.metamodels.get(db);
    if (kept) return kept.model;
    try {
      const stored = JSON.parse(sessionStorage.getItem(this.metamodelKey(db)) ?? 'null') as { etag: string | null; model: Metamodel; language: Language } | null;
      if (!stored?.model?.types) return undefined;
      this.metamodels.set(db, stored);
      return stored.model;
    } catch {
      return undefined;
    }
  }

  private metamodelCalls = new Map<string, Promise<Metamodel>>();

  /** The resolved metamodel of the database; asked again each time with If-None-Match, so that an uploaded profile shows at once. */
  metamodel(db: string): Promise<Metamodel> {
    const key = `${db}\0${this.language}`;
    const pending = this.metamodelCalls.get(key);
    if (pending) return pending;
    const call = this.askMetamodel(db);
    this.metamodelCalls.set(key, call);
    const done = () => { this.metamodelCalls.delete(key); };
    call.then(done, done);
    return call;
  }

  private async askMetamodel(db: string): Promise<Metamodel> {
    this.lastMetamodel(db);
    const kept = this.metamodels.get(db);
    const usable = kept && kept.language === this.language ? kept : undefined;
    const result = await this.client.GET('/api/{db}/metamodel', {
      params: { path: { db }, query: { language: this.language }, header: usable?.etag ? { 'If-None-Match': usable.etag } : {} },
    });
    if (result.response.status === 304 && usable) return usable.model;
    const model = Api.unwrap(result);
    const entry = { etag: result.response.headers.get('etag'), model, language: this.language };
    this.metamodels.set(db, entry);
    try {
      sessionStorage.setItem(this.metamodelKey(db), JSON.stringify(entry));
    } catch { /* storage full or switched off: the next page load asks without it */ }
    return model;
  }

  async search(db: string, q: string, signal: AbortSignal, types?: string): Promise<SearchHit[]> {
    const result = await this.client.GET('/rest/{db}/search', { params: { path: { db }, query: { q, limit: 10, ...(types ? { types } : {}) } }, signal });
    return Api.unwrap(result)._embedded.results;
  }
}

/** `/…/rest/<db>/<list>/<uuid>`: one object by its technical key (database and key captured). */
const OBJECT_PATH = /\/rest\/([^/]+)\/[^/]+\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The path part of an object's `href` (its page), whatever host it names. */
export function pagePath(href: string): string {
  return /^https?:/.test(href) ? new URL(href).pathname : href;
}
