/**
 * Single sign-on by pre-authentication (specification, method 2): a reverse
 * proxy authenticates the user and names them in a request header; the
 * service trusts it without further verification. Passwords are not
 * accepted while this is on (password sign-in is on only when no other
 * method is: runtime/auth/methods.ts).
 */
import type { PluginHost, PluginManifest } from '../../runtime/host.ts';
import { ApiKeyGate, METHOD, PreAuthDriver } from './driver.ts';
import { configSchema, readSettings, type PreAuthPluginSettings } from './settings.ts';

export const manifest: PluginManifest<PreAuthPluginSettings> = {
  name: 'auth-preauth',
  host: '^1',
  method: {
    name: METHOD,
    on: { setting: 'SERVICE_PRE_AUTHENTICATION' },
    phase: 'credentials',
    excludes: [
      { method: 'directory', reason: 'with pre-authentication the proxy signs users in, and login ID and password are not accepted' },
      { method: 'oidc', reason: 'with pre-authentication the proxy signs users in; pass the identity provider\'s token in SERVICE_REMOTE_USER_OIDC_JWT instead' },
    ],
  },
  // SERVICE_OIDC_JWT_* and SERVICE_OIDC_CLIENT_ID are read here too, but the prefix is auth-oidc's.
  settingsPrefixes: ['SERVICE_REMOTE_USER', 'SERVICE_API_KEY'],
  configSchema,
  register(host: PluginHost, pluginSettings) {
    const settings = readSettings(pluginSettings);
    if (settings.usesDeprecatedAlias) {
      host.log.warn({ setting: 'SERVICE_REMOTE_USER' }, 'SERVICE_REMOTE_USER is deprecated; use SERVICE_REMOTE_USER_ID');
    }
    // The gate refuses a request without the token before any method, access keys included, looks at it.
    if (settings.apiKey) host.addAuthDriver(new ApiKeyGate(settings.apiKey.header, settings.apiKey.token), 'gate');
    host.addAuthDriver(new PreAuthDriver(settings, host.log));
  },
};
