/**
 * The settings of OpenID Connect bearer authentication (specification,
 * method 4). The JSON schema checks, converts and defaults them before the
 * plugin registers; the provider URL, which a pattern cannot judge well, is
 * checked here, by readSettings, which takes the typed settings and returns
 * what the driver uses. Either failure stops the start with a ConfigError
 * naming the setting: the service never starts with the method half set up.
 *
 * Decisions where the specification is silent:
 * - SERVICE_OIDC_PROVIDER_URL must be https, except for loopback hosts
 *   (localhost, 127.0.0.0/8, [::1]), where http is allowed for development
 *   and tests: keys fetched over plain http from another host could be
 *   swapped by anyone on the path. It must not carry user info, a query or
 *   a fragment. A trailing slash is ignored.
 * - SERVICE_OIDC_PROVIDER_NAME is accepted with any value and only logged at
 *   start: the one value the specification names selects a vendor's cloud
 *   directory, which speaks standard OpenID Connect discovery like any other
 *   provider, so nothing here depends on it.
 * - SERVICE_AUTH_CACHE_TTL (ms, default 10000; 0 turns it off) also bounds
 *   how long a verified token is remembered, as it does for passwords and
 *   directory sign-ins.
 */
import { ConfigError } from '../../runtime/host.ts';

/** A claim name: what a provider may put in a token (no whitespace). */
const CLAIM_NAME = '^\\S{1,200}$';

const claimName = { type: 'string', pattern: CLAIM_NAME, description: 'a claim name of at most 200 characters, without spaces' };

/** The settings as the schema makes them: the three the method needs are there, the client-ID claim and the cache time have their defaults. */
export interface OidcPluginSettings {
  SERVICE_OIDC_CLIENT_ID: string;
  SERVICE_OIDC_PROVIDER_URL: string;
  SERVICE_OIDC_PROVIDER_NAME?: string;
  SERVICE_OIDC_JWT_USER_ID: string;
  SERVICE_OIDC_JWT_SUB_ID?: string;
  SERVICE_OIDC_JWT_GROUP_ID?: string;
  SERVICE_OIDC_JWT_TENANT_ID?: string;
  SERVICE_OIDC_JWT_CLIENT_ID: string;
  SERVICE_OIDC_JWT_USER_NAME?: string;
  SERVICE_OIDC_JWT_FAMILY_NAME?: string;
  SERVICE_OIDC_JWT_GIVEN_NAME?: string;
  SERVICE_OIDC_JWT_TENANT_NAME?: string;
  SERVICE_AUTH_CACHE_TTL: number;
}

export const configSchema = {
  type: 'object',
  properties: {
    SERVICE_OIDC_JWT_USER_ID: claimName,
    SERVICE_OIDC_JWT_SUB_ID: claimName,
    SERVICE_OIDC_JWT_GROUP_ID: claimName,
    SERVICE_OIDC_JWT_TENANT_ID: claimName,
    SERVICE_OIDC_JWT_CLIENT_ID: { ...claimName, default: 'aud' },
    SERVICE_OIDC_JWT_USER_NAME: claimName,
    SERVICE_OIDC_JWT_FAMILY_NAME: claimName,
    SERVICE_OIDC_JWT_GIVEN_NAME: claimName,
    SERVICE_OIDC_JWT_TENANT_NAME: claimName,
    SERVICE_OIDC_CLIENT_ID: { type: 'string', pattern: '^\\S{1,500}$', description: 'a client ID of at most 500 characters, without spaces' },
    SERVICE_OIDC_PROVIDER_URL: { type: 'string', pattern: '^https?://\\S+$', description: 'an http:// or https:// URL' },
    SERVICE_OIDC_PROVIDER_NAME: { type: 'string' },
    // The same as auth-basic's and auth-ldap's: one setting, one meaning.
    SERVICE_AUTH_CACHE_TTL: {
      type: 'integer', minimum: 0, maximum: 999_999_999, default: 10_000,
      description: 'a whole number of milliseconds from 0 to 999999999',
    },
  },
  // The order is the order of the error message: the first missing one is named.
  required: ['SERVICE_OIDC_CLIENT_ID', 'SERVICE_OIDC_PROVIDER_URL', 'SERVICE_OIDC_JWT_USER_ID'],
};

/** Claim names, as configured. */
export interface OidcClaims {
  loginId: string;
  subjectId?: string;
  groups?: string;
  tenantId?: string;
  /** Default `aud`. */
  clientId: string;
  userName?: string;
  familyName?: string;
  givenName?: string;
  tenantName?: string;
}

export interface OidcSettings {
  clientId: string;
  /** The provider URL without a trailing slash: the issuer its configuration must name. */
  providerUrl: string;
  providerName?: string;
  claims: OidcClaims;
  /** How long a verified token is remembered at most (its expiry bounds it too); 0: not at all. */
  cacheTtlMs: number;
}

/** The structured settings the method uses, from the settings as the schema made them (checkPluginConfig). */
export function readSettings(settings: OidcPluginSettings): OidcSettings {
  return {
    clientId: settings.SERVICE_OIDC_CLIENT_ID,
    providerUrl: providerUrl(settings.SERVICE_OIDC_PROVIDER_URL),
    // Any text, only logged: blanks alone are no name.
    providerName: settings.SERVICE_OIDC_PROVIDER_NAME?.trim() || undefined,
    claims: {
      loginId: settings.SERVICE_OIDC_JWT_USER_ID,
      subjectId: settings.SERVICE_OIDC_JWT_SUB_ID,
      groups: settings.SERVICE_OIDC_JWT_GROUP_ID,
      tenantId: settings.SERVICE_OIDC_JWT_TENANT_ID,
      clientId: settings.SERVICE_OIDC_JWT_CLIENT_ID,
      userName: settings.SERVICE_OIDC_JWT_USER_NAME,
      familyName: settings.SERVICE_OIDC_JWT_FAMILY_NAME,
      givenName: settings.SERVICE_OIDC_JWT_GIVEN_NAME,
      tenantName: settings.SERVICE_OIDC_JWT_TENANT_NAME,
    },
    cacheTtlMs: settings.SERVICE_AUTH_CACHE_TTL,
  };
}

/** The provider URL as the issuer is compared with it; throws a ConfigError naming the setting. */
export function providerUrl(text: string): string {
  const setting = 'SERVICE_OIDC_PROVIDER_URL';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(setting, 'must be an absolute URL');
  }
  const problem = urlProblem(url);
  if (problem) throw new ConfigError(setting, problem);
  // The issuer is the URL as configured (RFC 8414 compares it character by character), less a trailing slash.
  return text.replace(/\/+$/, '');
}

/**
 * Why a URL the service fetches keys or the provider configuration from is
 * not acceptable, or undefined. Shared with the key-set address found
 * through discovery, so the configuration cannot lead the service to plain
 * http on another host either.
 */
export function urlProblem(url: URL): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) return 'must be an https URL (http is allowed only for localhost and loopback addresses)';
  if (url.username || url.password) return 'must not contain user name or password';
  if (url.search || url.hash) return 'must not contain a query or a fragment';
  return undefined;
}

export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
