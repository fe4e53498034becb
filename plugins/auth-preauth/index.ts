/**
 * Single sign-on by pre-authentication (specification, method 2): a reverse
 * proxy authenticates the user and names them in a request header; the
 * service trusts it without further verification. Passwords are not
 * accepted while this is on (the basic driver is off: runtime/auth/methods.ts).
 */
import { enabledMethods } from '../../runtime/auth/methods.ts';
import type { PluginHost, PluginManifest } from '../../runtime/plugins.ts';
import { ApiKeyGate, PreAuthDriver } from './driver.ts';
import { configSchema, readSettings } from './settings.ts';

export const manifest: PluginManifest = {
  name: 'auth-preauth',
  configSchema,
  enabled: (env) => enabledMethods(env).preAuthentication,
  register(host: PluginHost) {
    const settings = readSettings(host.config.env);
    if (settings.usesDeprecatedAlias) {
      host.log.warn({ setting: 'SERVICE_REMOTE_USER' }, 'SERVICE_REMOTE_USER is deprecated; use SERVICE_REMOTE_USER_ID');
    }
    if (settings.apiKey) host.addAuthDriver(new ApiKeyGate(settings.apiKey.header, settings.apiKey.token), 5);
    host.addAuthDriver(new PreAuthDriver(settings, host.log), 30);
  },
};
