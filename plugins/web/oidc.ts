/**
 * Sign-in to the pages with OpenID Connect: the Authorization Code flow with
 * PKCE, state and nonce (openid-client). `GET {ctx}/web/login` keeps the
 * pending sign-in (a digest of its state, the PKCE verifier, the nonce, the
 * scope and the return path) in the control schema, for ten minutes and
 * one use, and sends the browser to the provider; `GET {ctx}/web/auth`
 * takes it back, exchanges the code, and has the ID token verified by the
 * service's own chain, exactly as a bearer token of the programming
 * interfaces (the same plugin, checks and user assignment), before it opens
 * the session. The return path is a path below `{ctx}/web/` on this
 * service, never another host.
 *
 * The pending sign-in is bound to the browser that began it: `/web/login`
 * sets a short-lived cookie (SameSite=Lax, so that it comes back on the
 * provider's redirect; the session cookie is Strict and would not), and the
 * pending sign-in is found only by its state together with that cookie. An
 * answer of the provider taken to another browser (someone's own sign-in
 * slipped to a victim, "login CSRF") finds nothing and opens no session.
 */
import type { Context } from 'koa';
import * as client from 'openid-client';
import { randomBytes } from 'node:crypto';
import { createError, ServiceError, type PluginHost, type SignIn } from '../../runtime/host.ts';
import { cookieOf } from './sessions.ts';
import type { PendingSignIns } from './sessions.ts';
import { baseOf, openSession, scopeParameter, type SessionRoutes } from './sign-in.ts';
import type { WebSettings } from './settings.ts';

export interface OidcRoutes extends SessionRoutes {
  pending: PendingSignIns;
  settings: WebSettings;
}

/** The cookie that binds a pending sign-in to the browser that began it. */
export const SIGN_IN_COOKIE = 'mds-sign-in';
const SIGN_IN_COOKIE_MS = 10 * 60_000;
const bound = (state: string, binding: string) => `${state}.${binding}`;

const isLoopback = (hostname: string) => hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/** The provider's configuration by discovery, fetched once (again after a failure). */
function providerConfiguration(host: PluginHost, settings: WebSettings): () => Promise<client.Configuration> {
  let configuration: Promise<client.Configuration> | undefined;
  return () => {
    if (!settings.SERVICE_OIDC_PROVIDER_URL || !settings.SERVICE_OIDC_CLIENT_ID) {
      return Promise.reject(createError('UNAVAILABLE'));
    }
    if (!configuration) {
      const server = new URL(settings.SERVICE_OIDC_PROVIDER_URL);
      const secret = settings.SERVICE_OIDC_CLIENT_SECRET;
      // Plain http only for a provider on this machine (development, tests), as auth-oidc allows.
      const execute = server.protocol === 'http:' && isLoopback(server.hostname) ? [client.allowInsecureRequests] : [];
      configuration = client.discovery(server, settings.SERVICE_OIDC_CLIENT_ID, secret, secret ? undefined : client.None(), { execute, timeout: 10 });
      configuration.catch((err) => {
        host.log.warn({ err: String(err) }, 'OpenID Connect discovery for the sign-in of the pages failed');
        configuration = undefined;
      });
    }
    return configuration;
  };
}

/** The return path, when it is one below `{ctx}/web/` of this service; else undefined. */
export function returnPath(contextPath: string, value: unknown, fallback: string): string | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.length > 2000) return undefined;
  // Only a plain path: no scheme, no `//host`, no backslash (browsers read it as a slash), no control characters.
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value, 'http://service.invalid');
  } catch {
    return undefined;
  }
  if (url.origin !== 'http://service.invalid') return undefined;
  const below = `${contextPath}/web`;
  if (url.pathname !== below && !url.pathname.startsWith(`${below}/`)) return undefined;
  return url.pathname + url.search + url.hash;
}

export function registerOidcRoutes(o: OidcRoutes) {
  const { host, pending, settings } = o;
  const configuration = providerConfiguration(host, settings);
  const contextPath = host.config.contextPath;
  const redirectUri = (ctx: Context) => `${baseOf(host, ctx)}/web/auth`;
  const pageOf = (scope: string | null) => `${contextPath}/web/${scope ?? 'admin'}`;
  const failed = (ctx: Context, scope: string | null | undefined, code: string) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(`${scope === undefined ? `${contextPath}/web/` : pageOf(scope)}?signInError=${encodeURIComponent(code)}`);
  };

  host.router.get('/web/login', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (o.mode() !== 'oidc') throw createError('NOT_FOUND');
    const scope = scopeParameter(ctx);
    const back = returnPath(contextPath, ctx.query.return, pageOf(scope));
    if (!back) throw createError('INVALID_PARAMETER', { name: 'return' });
    let config: client.Configuration;
    try {
      config = await configuration();
    } catch {
      return failed(ctx, scope, 'UNAVAILABLE');
    }
    const state = client.randomState();
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    const binding = randomBytes(32).toString('base64url');
    await pending.begin(bound(state, binding), { verifier, nonce, scope, returnPath: back });
    ctx.cookies.set(SIGN_IN_COOKIE, binding, {
      httpOnly: true, sameSite: 'lax', path: `${contextPath}/web/auth`, secure: ctx.secure, maxAge: SIGN_IN_COOKIE_MS, overwrite: true,
    });
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri(ctx), scope: 'openid', state, nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    ctx.redirect(url.href);
  });

  host.router.get('/web/auth', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (o.mode() !== 'oidc') throw createError('NOT_FOUND');
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const binding = cookieOf(ctx.get('cookie'), SIGN_IN_COOKIE);
    ctx.cookies.set(SIGN_IN_COOKIE, null, { httpOnly: true, sameSite: 'lax', path: `${contextPath}/web/auth`, secure: ctx.secure, overwrite: true });
    const signIn = state && binding ? await pending.take(bound(state, binding)) : null;
    // Unknown, used or expired, or begun in another browser: a replayed, forged or slipped answer.
    if (!signIn) return failed(ctx, undefined, 'CREDENTIALS_REFUSED');
    const { scope } = signIn;
    let idToken: string | undefined;
    try {
      const config = await configuration();
      const current = new URL(`${redirectUri(ctx)}?${ctx.querystring}`);
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: signIn.verifier, expectedState: state, expectedNonce: signIn.nonce, idTokenExpected: true,
      });
      idToken = tokens.id_token;
    } catch (err) {
      host.log.debug({ reason: err instanceof Error ? err.name : 'unknown' }, 'OpenID Connect sign-in of the pages refused');
      return failed(ctx, scope, err instanceof ServiceError ? err.code : 'CREDENTIALS_REFUSED');
    }
    if (!idToken) return failed(ctx, scope, 'CREDENTIALS_REFUSED');
    let accepted: SignIn;
    try {
      const db = scope === null ? null : await host.databases.get(scope);
      accepted = await host.authenticate(ctx, db, { authorization: `Bearer ${idToken}` });
      if (scope !== null && !db) throw createError('DATABASE_NOT_FOUND', { name: scope });
    } catch (err) {
      return failed(ctx, scope, err instanceof ServiceError ? err.code : 'CREDENTIALS_REFUSED');
    }
    if (!accepted.identity || accepted.principal.accessKeyId) return failed(ctx, scope, 'CREDENTIALS_REFUSED');
    await openSession(o, ctx, scope, accepted, null);
    ctx.body = undefined;
    ctx.redirect(signIn.returnPath);
  });
}
