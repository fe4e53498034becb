/**
 * The identity provider as the service knows it: its issuer and its key
 * set, found through the provider configuration of SERVICE_OIDC_PROVIDER_URL
 * (`<url>/.well-known/openid-configuration` → `jwks_uri`). Only that URL
 * leads anywhere: an issuer, `jku`, `jwk` or `x5u` a token names is never
 * fetched or trusted, so a token can point the service at no key of its
 * choosing.
 *
 * - The configuration's `issuer` must equal the configured URL (a trailing
 *   slash aside); otherwise it is the wrong provider or a misconfiguration,
 *   and no token is accepted.
 * - The configuration is fetched on first use, not at start: a provider that
 *   cannot be reached does not keep the service from starting. Until it can
 *   be, requests with a token get 503 (Retry-After); failed attempts back off
 *   from 1 s to 30 s, so an outage does not turn every request into a fetch.
 * - Keys (jose's remote key set) are kept for 10 minutes, then fetched again
 *   before use; a token with an unknown key ID fetches them again at most
 *   once per 30 s (cooldown), so a stream of forged key IDs costs the
 *   provider one request per 30 s at most.
 */
import { createLocalJWKSet, createRemoteJWKSet, type JWTHeaderParameters, type FlattenedJWSInput, type JWTVerifyGetKey } from 'jose';
import { urlProblem } from './settings.ts';

/** The provider or its keys cannot be had now: the token may be fine, so 503, not 401. */
export class ProviderUnavailable extends Error {
  constructor(readonly retryAfterSeconds: number, reason: string) {
    super(reason);
  }
}

export interface ProviderKeys {
  issuer: string;
  keys: JWTVerifyGetKey;
}

type Log = { warn: (o: object, m: string) => void; error: (o: object, m: string) => void; info: (o: object, m: string) => void };

/** Errors of the key lookup that say the token names no usable key: the token's fault. */
const TOKEN_KEY_ERRORS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'ERR_JOSE_NOT_SUPPORTED']);

export const KEY_REFETCH_COOLDOWN_MS = 30_000;
const KEY_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

/** Backs off after failures: 1 s, 2 s, 4 s … 30 s; a success resets it. */
class Backoff {
  private failures = 0;
  private retryAt = 0;

  /** Seconds to wait before the next attempt, or 0 when one may be made now. */
  waitSeconds(): number {
    const wait = this.retryAt - Date.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  failed(): number {
    const delay = Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** this.failures);
    this.failures++;
    this.retryAt = Date.now() + delay;
    return Math.ceil(delay / 1000);
  }

  succeeded() {
    this.failures = 0;
    this.retryAt = 0;
  }
}

export class IdentityProvider {
  private discovered?: ProviderKeys;
  private pending?: Promise<ProviderKeys>;
  private readonly discovery = new Backoff();
  private readonly keyFetch = new Backoff();

  /** `url`: SERVICE_OIDC_PROVIDER_URL without a trailing slash. */
  constructor(private readonly url: string, private readonly log: Log) {}

  /** The issuer and keys; throws ProviderUnavailable while the provider cannot be reached. */
  async current(): Promise<ProviderKeys> {
    if (this.discovered) return this.discovered;
    const wait = this.discovery.waitSeconds();
    if (wait) throw new ProviderUnavailable(wait, 'the provider configuration could not be fetched a moment ago');
    this.pending ??= this.discover().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Fetches the configuration ahead of the first token; a failure is only logged (requests retry). */
  prefetch() {
    this.current().catch(() => undefined);
  }

  private async discover(): Promise<ProviderKeys> {
    const address = `${this.url}/.well-known/openid-configuration`;
    try {
      const config = await fetchConfiguration(address);
      const issuer = typeof config.issuer === 'string' ? config.issuer : '';
      if (issuer.replace(/\/+$/, '') !== this.url) {
        // The address answers for another issuer: its keys are not the configured provider's.
        throw new ConfigurationProblem(`the provider configuration names issuer ${JSON.stringify(issuer.slice(0, 200))}, not SERVICE_OIDC_PROVIDER_URL`);
      }
      const jwksUri = typeof config.jwks_uri === 'string' ? parseUrl(config.jwks_uri) : undefined;
      if (!jwksUri) throw new ConfigurationProblem('the provider configuration has no valid jwks_uri');
      const problem = urlProblem(jwksUri);
      if (problem) throw new ConfigurationProblem(`the provider configuration's jwks_uri ${problem}`);
      const remote = createRemoteJWKSet(jwksUri, {
        cooldownDuration: KEY_REFETCH_COOLDOWN_MS,
        cacheMaxAge: KEY_MAX_AGE_MS,
        timeoutDuration: FETCH_TIMEOUT_MS,
      });
      this.discovery.succeeded();
      this.discovered = { issuer, keys: this.guardKeys(remote) };
      this.log.info({ issuer, jwksUri: jwksUri.href }, 'OpenID provider configuration fetched');
      return this.discovered;
    } catch (err) {
      const retryAfter = this.discovery.failed();
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof ConfigurationProblem) this.log.error({ url: address, reason }, 'OpenID provider configuration refused');
      else this.log.warn({ url: address, reason }, 'OpenID provider configuration cannot be fetched');
      throw new ProviderUnavailable(retryAfter, reason);
    }
  }

  /**
   * The key lookup, telling a token that names no usable key (401) from a
   * key set that cannot be fetched (503), and backing off after the latter.
   */
  private guardKeys(remote: RemoteKeySet): JWTVerifyGetKey {
    return async (header: JWTHeaderParameters, token: FlattenedJWSInput) => {
      const wait = this.keyFetch.waitSeconds();
      if (wait) return this.withoutFetch(remote, wait, header, token);
      try {
        const key = await remote(header, token);
        this.keyFetch.succeeded();
        return key;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code && TOKEN_KEY_ERRORS.has(code)) throw err;
        const retryAfter = this.keyFetch.failed();
        this.log.warn({ reason: err instanceof Error ? err.message : String(err), code }, 'OpenID provider key set cannot be fetched');
        throw new ProviderUnavailable(retryAfter, 'the key set cannot be fetched');
      }
    };
  }

  /** While fetches back off, keys that are still fresh verify the tokens they signed; any other token waits (503). */
  private async withoutFetch(remote: RemoteKeySet, wait: number, header: JWTHeaderParameters, token: FlattenedJWSInput) {
    const known = remote.fresh ? remote.jwks() : undefined;
    if (!known) throw new ProviderUnavailable(wait, 'the key set could not be fetched a moment ago');
    try {
      return await createLocalJWKSet(known)(header, token);
    } catch (err) {
      // It may be signed with a key the provider added since: that cannot be known before the next fetch.
      if ((err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY') throw new ProviderUnavailable(wait, 'the key set could not be fetched a moment ago');
      throw err;
    }
  }
}

type RemoteKeySet = ReturnType<typeof createRemoteJWKSet>;

class ConfigurationProblem extends Error {}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

async function fetchConfiguration(address: string): Promise<Record<string, unknown>> {
  // No redirects: the configuration is where the operator said it is.
  const r = await fetch(address, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
  if (r.status !== 200) throw new Error(`the provider configuration answered ${r.status}`);
  const text = await r.text();
  if (text.length > 1_000_000) throw new Error('the provider configuration is too large');
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    throw new ConfigurationProblem('the provider configuration is not JSON');
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw new ConfigurationProblem('the provider configuration is not a JSON object');
  return config as Record<string, unknown>;
}
