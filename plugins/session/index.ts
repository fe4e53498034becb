/**
 * `GET /api/<db>/session`: who the caller is signed in as, by whichever
 * method is on, and where Logout leads (SERVICE_LOGOUT_URL; the user
 * interface shows Logout only when it is set). The user interface reads it;
 * it holds nothing secret.
 */
import type { Context } from 'koa';
import { databaseUiUrl, logoutUrl, type DatabaseInfo, type PluginHost, type PluginManifest, type Principal } from '../../runtime/host.ts';

import { openapi } from './openapi.ts';

export const manifest: PluginManifest<{ SERVICE_LOGOUT_URL?: string }> = {
  name: 'session',
  openapi,
  host: '^1',
  settingsPrefixes: ['SERVICE_LOGOUT_'],
  configSchema: {
    type: 'object',
    properties: {
      // An absolute http(s) address, or a path on the same host (e.g. a proxy's /oauth2/sign_out); not `//host`, which is neither plainly.
      SERVICE_LOGOUT_URL: {
        type: 'string', pattern: '^(?:https?://[^\\s/?#]+|/(?!/))[^\\s]*$',
        description: 'an http:// or https:// URL, or a path on this host starting with a single /, without spaces',
      },
    },
  },
  register(host: PluginHost, settings) {
    const template = settings.SERVICE_LOGOUT_URL;
    const base = (ctx: Context) => `${ctx.protocol}://${ctx.host}${host.config.contextPath}`;
    host.api.get('/session', (ctx) => {
      const principal = ctx.state.principal as Principal;
      const db = ctx.state.db as DatabaseInfo;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = {
        loginId: principal.loginId,
        tenant: principal.tenant,
        tenantLabel: principal.tenantLabel,
        accessLevel: principal.accessLevel,
        systemAdmin: principal.systemAdmin,
        method: principal.method,
        ...(template ? { logoutUrl: logoutUrl(template, databaseUiUrl(base(ctx), db.name)) } : {}),
      };
    });
  },
};
