/**
 * `{ctx}/web/session`: the pages' sign-in. POST checks a login ID and
 * password with exactly the drivers (and throttling) of the programming
 * interfaces' Basic sign-in, by running the service's chain with the
 * credentials as an Authorization header, and opens a session; GET tells
 * the page who is signed in (and the anti-forgery token again, after a
 * reload); PATCH switches the login tenant; DELETE signs out.
 *
 * No answer here carries a WWW-Authenticate challenge: a browser would
 * show its own password dialog for it.
 */
import type { Context } from 'koa';
import { createError, DATABASE_NAME, databaseUiUrl, logoutUrl, ServiceError, type DatabaseInfo, type PluginHost, type Principal, type SignIn, type Violation } from '../../runtime/host.ts';
import { CSRF_HEADER, type SessionDriver } from './driver.ts';
import { cookieName, cookieOf, csrfTokenOf, type Session, type SessionStore } from './sessions.ts';
import type { SignInMode } from './shell.ts';

const MAX_FIELD = 1024;

export interface SessionRoutes {
  host: PluginHost;
  sessions: SessionStore;
  driver: SessionDriver;
  mode: () => SignInMode;
  logoutTemplate?: string;
}

/** The base URL of the service (the public one when SERVICE_PUBLIC_URL is set). */
export const baseOf = (host: PluginHost, ctx: Context) => `${ctx.protocol}://${ctx.host}${host.config.contextPath}`;

export function sessionBody(o: SessionRoutes, ctx: Context, principal: Principal, scope: string | null, csrfToken?: string) {
  const base = baseOf(o.host, ctx);
  return {
    ...(csrfToken ? { csrfToken } : {}),
    loginId: principal.loginId,
    ...(principal.tenant ? { tenant: principal.tenant, tenantLabel: principal.tenantLabel } : {}),
    accessLevel: principal.accessLevel,
    systemAdmin: principal.systemAdmin,
    // The tenant page shows who is a system administrator (not editable there); only administrators of a database learn it.
    ...(scope !== null && (principal.systemAdmin || principal.accessLevel === 'ADMINISTRATOR') ? { systemAdministrators: [...o.host.config.adminUsers] } : {}),
    method: principal.method,
    ...(o.logoutTemplate ? { logoutUrl: logoutUrl(o.logoutTemplate, scope === null ? `${base}/web/admin` : databaseUiUrl(base, scope)) } : {}),
  };
}

/** The chain's 401 without its challenges; a refused sign-in says the same whatever was wrong. */
export function withoutChallenge(err: unknown, code: 'CREDENTIALS_REFUSED' | 'UNAUTHENTICATED'): unknown {
  if (err instanceof ServiceError && err.status === 401) return createError(code);
  return err;
}

/** `?database=`: the scope of the call; absent: the service-wide one. */
export function scopeParameter(ctx: Context): string | null {
  const value = ctx.query.database;
  if (value === undefined) return null;
  if (typeof value !== 'string' || !DATABASE_NAME.test(value)) {
    throw createError('INVALID_PARAMETER', { name: 'database' }, [{ path: 'database', key: 'databaseNameInvalid' }]);
  }
  return value;
}

export function setSessionCookie(host: PluginHost, ctx: Context, scope: string | null, value: string | null) {
  ctx.cookies.set(cookieName(scope), value, {
    httpOnly: true, sameSite: 'strict', path: `${host.config.contextPath}/`, secure: ctx.secure, overwrite: true,
  });
}

/** Opens a session for a sign-in the chain accepted; returns the page's body. */
export async function openSession(o: SessionRoutes, ctx: Context, scope: string | null, signIn: SignIn, tenant: string | null) {
  const { principal, identity } = signIn;
  const value = await o.sessions.open({
    scope, kind: identity ? 'external' : 'password', loginId: principal.loginId, identity: identity ?? null,
    method: principal.method, tenant,
  });
  setSessionCookie(o.host, ctx, scope, value);
  return sessionBody(o, ctx, principal, scope, csrfTokenOf(value));
}

async function databaseOf(host: PluginHost, scope: string | null): Promise<DatabaseInfo | null> {
  return scope === null ? null : host.databases.get(scope);
}

/**
 * The session of the page a shell request opens (`/web/<db>/…`: that
 * database; `/web`, `/web/admin`: the service-wide scope), as `GET
 * /web/session` would answer it, with its `database`; undefined when there
 * is none (the page then asks, and signs in). Nothing is refused here: the
 * shell is served either way.
 */
export async function pageSession(o: SessionRoutes, ctx: Context): Promise<object | undefined> {
  if (o.mode() === 'preauth') return undefined;
  const [first] = ctx.path.split('/').filter(Boolean).slice(1);
  const scope = first === undefined || first === 'admin' ? null : DATABASE_NAME.test(first) ? first : undefined;
  if (scope === undefined) return undefined;
  try {
    const db = await databaseOf(o.host, scope);
    if (scope !== null && !db) return undefined;
    const body = await cookieSession(o, ctx, scope, db);
    return body ? { database: scope, ...body } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The live session the request's cookie holds for `scope`, as the page is
 * told it (with its anti-forgery token), the person signed in again by the
 * chain; null when the cookie holds none. GET /web/session and the shell
 * both answer with it.
 */
async function cookieSession(o: SessionRoutes, ctx: Context, scope: string | null, db: DatabaseInfo | null) {
  const value = cookieOf(ctx.get('cookie'), cookieName(scope));
  const session = value ? await o.sessions.find(value) : null;
  if (!value || !session || session.scope !== scope) return null;
  const csrfToken = csrfTokenOf(value);
  const { principal } = await o.host.authenticate(ctx, db, { csrfToken });
  return sessionBody(o, ctx, principal, scope, csrfToken);
}

export function registerSessionRoutes(o: SessionRoutes) {
  const { host, sessions, driver } = o;
  const router = host.router;

  router.get('/web/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const scope = scopeParameter(ctx);
    const db = await databaseOf(host, scope);
    if (scope !== null && !db) throw createError('UNAUTHENTICATED');
    if (o.mode() === 'preauth') {
      // The proxy's headers sign every request in; there is no session and no token.
      const { principal } = await host.authenticate(ctx, db).catch((err) => { throw withoutChallenge(err, 'CREDENTIALS_REFUSED'); });
      ctx.body = sessionBody(o, ctx, principal, scope);
      return;
    }
    const body = await cookieSession(o, ctx, scope, db).catch((err) => { throw withoutChallenge(err, 'UNAUTHENTICATED'); });
    if (!body) throw createError('UNAUTHENTICATED');
    ctx.body = body;
  });

  router.post('/web/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const mode = o.mode();
    if (mode !== 'password' && mode !== 'directory') throw createError('FORBIDDEN');
    await host.jsonBody(ctx, null);
    const body = signInBody(ctx.request.body);
    const scope = body.database ?? null;
    const db = await databaseOf(host, scope);
    const authorization = `Basic ${Buffer.from(`${body.loginId}:${body.password}`, 'utf8').toString('base64')}`;
    let signIn: SignIn;
    try {
      signIn = await host.authenticate(ctx, db, { authorization, tenant: body.tenant });
    } catch (err) {
      throw withoutChallenge(err, 'CREDENTIALS_REFUSED');
    }
    // An unknown database is told only to a system administrator, as the programming interfaces do.
    if (scope !== null && !db) throw createError('DATABASE_NOT_FOUND', { name: scope });
    // An access key is for programs; the pages take passwords only.
    if (signIn.principal.accessKeyId) throw createError('CREDENTIALS_REFUSED');
    ctx.body = await openSession(o, ctx, scope, signIn, body.tenant ?? null);
  });

  router.patch('/web/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (o.mode() === 'preauth') throw createError('FORBIDDEN');
    const scope = scopeParameter(ctx);
    const db = await databaseOf(host, scope);
    const session = db || scope === null ? await driver.sessionOf({ ctx, db }) : null;
    if (!session) throw createError('UNAUTHENTICATED');
    if (scope === null) throw createError('BAD_REQUEST');
    await host.jsonBody(ctx, null);
    const tenant = tenantBody(ctx.request.body);
    await sessions.setTenant(session.idDigest, tenant);
    try {
      const { principal } = await host.authenticate(ctx, db, { csrfToken: ctx.get(CSRF_HEADER) });
      ctx.body = sessionBody(o, ctx, principal, scope, ctx.get(CSRF_HEADER));
    } catch (err) {
      // The tenant was refused: the session stays in the one it had.
      await sessions.setTenant(session.idDigest, session.tenant);
      throw withoutChallenge(err, 'UNAUTHENTICATED');
    }
  });

  router.delete('/web/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const scope = scopeParameter(ctx);
    const db = await databaseOf(host, scope);
    const session: Session | null = db || scope === null ? await driver.sessionOf({ ctx, db }) : null;
    if (!session) throw createError('UNAUTHENTICATED');
    await sessions.end(session.idDigest);
    setSessionCookie(host, ctx, scope, null);
    const base = baseOf(host, ctx);
    ctx.body = o.logoutTemplate ? { logoutUrl: logoutUrl(o.logoutTemplate, scope === null ? `${base}/web/admin` : databaseUiUrl(base, scope)) } : {};
  });
}

interface SignInBody { database?: string; loginId: string; password: string; tenant?: string }

function signInBody(body: unknown): SignInBody {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw createError('INVALID_PAYLOAD', {}, [{ path: '', key: 'mustBeObject' }]);
  const b = body as Record<string, unknown>;
  const violations: Violation[] = [];
  for (const name of Object.keys(b)) {
    if (!['database', 'loginId', 'password', 'tenant'].includes(name)) violations.push({ path: name, key: 'unknownProperty' });
  }
  for (const name of ['loginId', 'password']) if (b[name] === undefined) violations.push({ path: name, key: 'mandatory' });
  for (const name of ['database', 'loginId', 'password', 'tenant']) {
    const v = b[name];
    if (v === undefined) continue;
    if (typeof v !== 'string') violations.push({ path: name, key: 'mustBeText' });
    else if (v.length > MAX_FIELD) violations.push({ path: name, key: 'tooLong', params: { limit: MAX_FIELD } });
  }
  if (typeof b.database === 'string' && !DATABASE_NAME.test(b.database)) violations.push({ path: 'database', key: 'databaseNameInvalid' });
  if (violations.length) throw createError('INVALID_PAYLOAD', {}, violations);
  const tenant = b.tenant as string | undefined;
  return { database: b.database as string | undefined, loginId: b.loginId as string, password: b.password as string, ...(tenant ? { tenant } : {}) };
}

function tenantBody(body: unknown): string | null {
  const b = (body ?? {}) as Record<string, unknown>;
  const violations: Violation[] = [];
  if (typeof body !== 'object' || Array.isArray(body)) violations.push({ path: '', key: 'mustBeObject' });
  else {
    for (const name of Object.keys(b)) if (name !== 'tenant') violations.push({ path: name, key: 'unknownProperty' });
    if (b.tenant === undefined) violations.push({ path: 'tenant', key: 'mandatory' });
    else if (typeof b.tenant !== 'string') violations.push({ path: 'tenant', key: 'mustBeText' });
    else if (b.tenant.length > MAX_FIELD) violations.push({ path: 'tenant', key: 'tooLong', params: { limit: MAX_FIELD } });
  }
  if (violations.length) throw createError('INVALID_PAYLOAD', {}, violations);
  return (b.tenant as string) || null;
}
