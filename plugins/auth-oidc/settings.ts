/**
 * The settings of OpenID Connect bearer authentication (specification,
 * method 4). The JSON schema is checked before the plugin registers; the
 * provider URL, which a pattern cannot judge well, is checked here. Either
 * failure stops the start with a ConfigError naming the setting: the service
 * never starts with the method half set up.
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

const CLAIM_SETTINGS = [
  'SERVICE_OIDC_JWT_USER_ID', 'SERVICE_OIDC_JWT_SUB_ID', 'SERVICE_OIDC_JWT_GROUP_ID', 'SERVICE_OIDC_JWT_TENANT_ID',
  'SERVICE_OIDC_JWT_CLIENT_ID', 'SERVICE_OIDC_JWT_USER_NAME', 'SERVICE_OIDC_JWT_FAMILY_NAME', 'SERVICE_OIDC_JWT_GIVEN_NAME',
  'SERVICE_OIDC_JWT_TENANT_NAME',
];

export const configSchema = {
  type: 'object',
  properties: {
    ...Object.fromEntries(CLAIM_SETTINGS.map((name) => [name, { type: 'string', pattern: CLAIM_NAME, description: 'a claim name of at most 200 characters, without spaces' }])),
    SERVICE_OIDC_CLIENT_ID: { type: 'string', pattern: '^\\S{1,500}$', description: 'a client ID of at most 500 characters, without spaces' },
    SERVICE_OIDC_PROVIDER_URL: { type: 'string', pattern: '^https?://\\S+$', description: 'an http:// or https:// URL' },
    SERVICE_OIDC_PROVIDER_NAME: { type: 'string' },
    SERVICE_AUTH_CACHE_TTL: { type: 'string', pattern: '^[0-9]{1,9}$', description: 'a whole number of milliseconds, at most 999999999' },
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

/** Reads the (schema-checked) settings; an empty value counts as unset. */
export function readSettings(env: Record<string, string | undefined>): OidcSettings {
  const value = (name: string) => env[name]?.trim() || undefined;
  const required = (name: string) => {
    const v = value(name);
    if (!v) throw new ConfigError(name, 'must be set when SERVICE_OIDC_AUTHENTICATION is true');
    return v;
  };
  return {
    clientId: required('SERVICE_OIDC_CLIENT_ID'),
    providerUrl: providerUrl(required('SERVICE_OIDC_PROVIDER_URL')),
    providerName: value('SERVICE_OIDC_PROVIDER_NAME'),
    claims: {
      loginId: required('SERVICE_OIDC_JWT_USER_ID'),
      subjectId: value('SERVICE_OIDC_JWT_SUB_ID'),
      groups: value('SERVICE_OIDC_JWT_GROUP_ID'),
      tenantId: value('SERVICE_OIDC_JWT_TENANT_ID'),
      clientId: value('SERVICE_OIDC_JWT_CLIENT_ID') ?? 'aud',
      userName: value('SERVICE_OIDC_JWT_USER_NAME'),
      familyName: value('SERVICE_OIDC_JWT_FAMILY_NAME'),
      givenName: value('SERVICE_OIDC_JWT_GIVEN_NAME'),
      tenantName: value('SERVICE_OIDC_JWT_TENANT_NAME'),
    },
    cacheTtlMs: Number(value('SERVICE_AUTH_CACHE_TTL') ?? 10_000),
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
