/**
 * The user interface (issue 18), the server's part: the pages' HTML shell
 * and assets below `{ctx}/web`, sessions kept in the database, the session
 * cookie as a sign-in method of the calls the pages make (with an
 * anti-forgery token), the sign-in by password, directory or OpenID
 * Connect, and sign-out.
 *
 * Parts: settings.ts, sessions.ts (the tables), driver.ts (cookie + token
 * on /rest, /api), sign-in.ts (`/web/session`), oidc.ts (`/web/login`,
 * `/web/auth`), shell.ts (the shell, assets, headers), build.ts (assets).
 */
import type { Context } from 'koa';
import { createError, type PluginHost, type PluginManifest } from '../../runtime/host.ts';
import { buildAssets, type Assets } from './build.ts';
import { SessionDriver } from './driver.ts';
import { registerOidcRoutes } from './oidc.ts';
import { openapi } from './openapi.ts';
import { MIGRATIONS, PendingSignIns, SessionStore } from './sessions.ts';
import { configSchema, type WebSettings } from './settings.ts';
import { securityHeaders, sendAsset, shellHtml, type SignInMode } from './shell.ts';
import { pageSession, registerSessionRoutes } from './sign-in.ts';

/** How people sign in to the pages, by the methods that are on. */
export function signInMode(host: Pick<PluginHost, 'methodOn'>): SignInMode {
  if (host.methodOn('pre-authentication')) return 'preauth';
  if (host.methodOn('oidc')) return 'oidc';
  if (host.methodOn('directory')) return 'directory';
  return 'password';
}

export const manifest: PluginManifest<WebSettings> = {
  name: 'web',
  host: '^1',
  openapi,
  settingsPrefixes: ['SERVICE_SESSION_'],
  configSchema,
  migrations: { control: MIGRATIONS },
  register(host: PluginHost, settings) {
    const sessions = new SessionStore(host.knex, { idleMs: settings.SERVICE_SESSION_IDLE_TIMEOUT, maxAgeMs: settings.SERVICE_SESSION_MAX_AGE });
    const driver = new SessionDriver(sessions, host.directory);
    host.addAuthDriver(driver, 'bearer');
    const mode = () => signInMode(host);
    const routes = { host, sessions, driver, mode, logoutTemplate: settings.SERVICE_LOGOUT_URL };

    // Every answer below /web carries the security headers, errors too.
    host.router.use(['/web', '/web/{*rest}'], async (ctx, next) => {
      securityHeaders(ctx);
      await next();
    });
    registerSessionRoutes(routes);
    registerOidcRoutes({ ...routes, pending: new PendingSignIns(host.knex), settings });

    let assets: Assets | undefined;
    host.router.get('/web/assets/:name', (ctx) => {
      if (!assets || !sendAsset(ctx, assets, ctx.params.name)) throw createError('NOT_FOUND');
    });
    const shell = async (ctx: Context) => {
      if (!assets) throw createError('UNAVAILABLE', {}, [], { 'Retry-After': '5' });
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      const session = await pageSession(routes, ctx);
      ctx.body = shellHtml(assets, {
        contextPath: host.config.contextPath, signIn: mode(), languages: ['en', 'de'], defaultLanguage: host.config.language,
        ...(session ? { session } : {}),
      });
    };
    host.router.get('/web', shell);
    host.router.get('/web/{*page}', shell);

    host.onStart(async () => {
      assets = await buildAssets();
      await sessions.sweep(true);
    });
    const sweeper = setInterval(() => void sessions.sweep(), 60_000);
    sweeper.unref();
    host.onClose(async () => clearInterval(sweeper));
  },
};
