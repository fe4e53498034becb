/**
 * The bearer driver (order 10): `Authorization: Bearer <JWT>`, verified
 * against the configured OpenID provider (verify.ts), becomes an external
 * identity; the core assigns it to a user like any external method's.
 *
 * - A token that fails any check: 401 with `WWW-Authenticate: Bearer
 *   realm="metadata", error="invalid_token"` (RFC 6750), and nothing more:
 *   which check failed is logged (at debug level, without the token), never
 *   told to the client.
 * - The provider or its keys cannot be reached: 503 with Retry-After; the
 *   token may well be good.
 * - With a `service-access-key` header the token only has to be valid (the
 *   specification's machine clients: a client-credentials token carries no
 *   login ID, so it passes the authentication module in front and the key
 *   names the user); the driver then steps aside for the access-key driver.
 *   Without a key, a token without a login ID is refused.
 * - The token is read only from the Authorization header, never from the
 *   query string or a form body (RFC 6750 allows those; they end up in logs).
 */
import { createError, type AuthDriver, type AuthRequest, type AuthResult } from '../../runtime/host.ts';
import { ProviderUnavailable } from './provider.ts';
import { InvalidToken, type TokenVerifier } from './verify.ts';

export const METHOD = 'oidc';
const REALM = 'metadata';

type Log = { debug: (o: object, m: string) => void };

export class OidcDriver implements AuthDriver {
  readonly name = METHOD;

  constructor(private readonly verifier: TokenVerifier, private readonly log: Log) {}

  challenge() {
    return `Bearer realm="${REALM}"`;
  }

  async authenticate({ ctx }: AuthRequest): Promise<AuthResult | null> {
    const header = ctx.get('authorization');
    if (!/^Bearer(?:\s|$)/i.test(header)) return null;
    const token = /^Bearer +([^\s]+) *$/i.exec(header)?.[1];
    if (!token) throw this.rejection('malformed authorization header');
    let verified;
    try {
      verified = await this.verifier.verify(token);
    } catch (err) {
      if (err instanceof InvalidToken) throw this.rejection(err.reason, err.claim);
      if (err instanceof ProviderUnavailable) throw createError('UNAVAILABLE', {}, [], { 'Retry-After': String(err.retryAfterSeconds) });
      throw err;
    }
    if (ctx.get('service-access-key')) return null;
    if (!verified.identity) throw this.rejection('no login ID in the token');
    const { identity } = verified;
    // The verified identity is remembered: the caller gets a copy it may change.
    return { kind: 'external', identity: { ...identity, ...(identity.groups ? { groups: [...identity.groups] } : {}) } };
  }

  private rejection(reason: string, claim?: string) {
    this.log.debug({ reason, ...(claim ? { claim } : {}) }, 'bearer token refused');
    return createError('UNAUTHENTICATED', {}, [], { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"` });
  }
}
