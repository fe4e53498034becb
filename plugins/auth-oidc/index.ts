/**
 * OpenID Connect bearer authentication (specification, method 4): programs
 * and the user interface send a JWT from the identity provider as
 * `Authorization: Bearer …`; the service verifies it against the provider's
 * published keys and signs the login ID it names in. Passwords are not kept
 * while this is on (the basic driver is off: runtime/auth/methods.ts).
 *
 * Parts: settings.ts (what may be configured), provider.ts (issuer and
 * keys through discovery), verify.ts (the checks), claims.ts (claims to
 * identity), cache.ts (verified tokens), driver.ts (the request side).
 */
import { enabledMethods } from '../../runtime/auth/methods.ts';
import type { PluginHost, PluginManifest } from '../../runtime/plugins.ts';
import { VerifiedTokens } from './cache.ts';
import { OidcDriver } from './driver.ts';
import { IdentityProvider } from './provider.ts';
import { configSchema, readSettings } from './settings.ts';
import { TokenVerifier, type VerifiedToken } from './verify.ts';

export const manifest: PluginManifest = {
  name: 'auth-oidc',
  configSchema,
  enabled(env) {
    const on = enabledMethods(env).oidc;
    // Read here, before any storage is opened, so a missing or malformed setting stops the start at once.
    if (on) readSettings(env);
    return on;
  },
  register(host: PluginHost) {
    const settings = readSettings(host.config.env);
    const provider = new IdentityProvider(settings.providerUrl, host.log);
    const cache = new VerifiedTokens<VerifiedToken>({ ttlMs: settings.cacheTtlMs });
    host.addAuthDriver(new OidcDriver(new TokenVerifier(settings, provider, cache), host.log), 10);
    host.onStart(async () => {
      host.log.info({ url: settings.providerUrl, provider: settings.providerName, clientId: settings.clientId }, 'OpenID Connect bearer authentication on');
      // Not awaited: a provider that cannot be reached now must not keep the service from starting.
      provider.prefetch();
    });
  },
};
