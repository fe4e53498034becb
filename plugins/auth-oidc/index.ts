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
import type { PluginHost, PluginManifest } from '../../runtime/host.ts';
import { VerifiedTokens } from './cache.ts';
import { METHOD, OidcDriver } from './driver.ts';
import { IdentityProvider } from './provider.ts';
import { configSchema, readSettings, type OidcPluginSettings } from './settings.ts';
import { TokenVerifier, type VerifiedToken } from './verify.ts';

export const manifest: PluginManifest<OidcPluginSettings> = {
  name: 'auth-oidc',
  host: '^1',
  method: { name: METHOD, on: { setting: 'SERVICE_OIDC_AUTHENTICATION' }, phase: 'bearer' },
  settingsPrefixes: ['SERVICE_OIDC_'],
  configSchema,
  // Read before any storage is opened, so a missing or malformed setting stops the start at once.
  checkSettings: (settings) => void readSettings(settings),
  register(host: PluginHost, pluginSettings) {
    const settings = readSettings(pluginSettings);
    const provider = new IdentityProvider(settings.providerUrl, host.log);
    const cache = new VerifiedTokens<VerifiedToken>({ ttlMs: settings.cacheTtlMs });
    host.addAuthDriver(new OidcDriver(new TokenVerifier(settings, provider, cache), host.log));
    host.onStart(async () => {
      host.log.info({ url: settings.providerUrl, provider: settings.providerName, clientId: settings.clientId }, 'OpenID Connect bearer authentication on');
      // Not awaited: a provider that cannot be reached now must not keep the service from starting.
      provider.prefetch();
    });
  },
};
