/**
 * Verifies a bearer token (a JWT) against the configured provider and
 * reads the identity from its claims.
 *
 * What a token must be, checked in this order, each failure a 401:
 * - a compact JWS of at most 16 KiB whose header names an allowed
 *   asymmetric algorithm (RS*, PS*, ES*, EdDSA/Ed25519): never `none`, never
 *   HMAC, whose shared secret could be the provider's public key;
 * - signed by a key of the provider's key set (the key named by `kid`;
 *   `jku`, `jwk`, `x5u` in the header are ignored);
 * - `iss` equal to the provider's issuer; `exp` present and not past;
 *   `nbf`, if present, not in the future; 30 s of clock tolerance for both
 *   (clocks of provider and service drift; a token is still short-lived);
 * - the configured client ID in the client-ID claim (default `aud`, a text
 *   or a list);
 * - claims of shapes the method can read (claims.ts).
 *
 * A token that passes is remembered (cache.ts) until it expires or the
 * cache TTL ends, so a warm token costs a hash and a map lookup.
 */
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { ExternalIdentity } from '../../runtime/host.ts';
import { VerifiedTokens } from './cache.ts';
import { ClaimError, claimContains, identityOf } from './claims.ts';
import type { IdentityProvider } from './provider.ts';
import type { OidcSettings } from './settings.ts';

export const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
export const CLOCK_TOLERANCE_SECONDS = 30;
const MAX_TOKEN_LENGTH = 16 * 1024;
/** A compact JWS: three base64url parts (the signature may not be empty here, so `alg: none` fails early too). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Tokens without a key ID are tried against this many keys of their type at most. */
const MAX_CANDIDATE_KEYS = 10;

/** Why a token was refused; for the log only, never for the client. */
export class InvalidToken extends Error {
  constructor(readonly reason: string, readonly claim?: string) {
    super(reason);
  }
}

/** A verified token: the identity it names, or null for a token without a login ID (client credentials). */
export interface VerifiedToken {
  identity: ExternalIdentity | null;
}

export class TokenVerifier {
  private readonly algorithms = new Set(ALGORITHMS);

  constructor(
    private readonly settings: OidcSettings,
    private readonly provider: IdentityProvider,
    private readonly cache: VerifiedTokens<VerifiedToken>,
  ) {}

  /** Throws InvalidToken (401) or ProviderUnavailable (503). */
  async verify(token: string): Promise<VerifiedToken> {
    if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) throw new InvalidToken('malformed');
    const key = this.cache.keyOf(token);
    const known = this.cache.get(key);
    if (known) return known;
    let header;
    try {
      header = decodeProtectedHeader(token);
      // Only to refuse what is no JWT at all without asking the provider; the claims are read after verification.
      decodeJwt(token);
    } catch {
      throw new InvalidToken('malformed');
    }
    // Refused before the provider is asked, so a forged algorithm costs nothing and never reaches the key set.
    if (typeof header.alg !== 'string' || !this.algorithms.has(header.alg)) throw new InvalidToken('algorithm not allowed');
    const { issuer, keys } = await this.provider.current();
    const payload = await this.verifySignature(token, keys, issuer);
    if (!claimContains(payload, this.settings.claims.clientId, this.settings.clientId)) {
      throw new InvalidToken('issued for another client', this.settings.claims.clientId);
    }
    let verified: VerifiedToken;
    try {
      verified = { identity: identityOf(payload, this.settings.claims) };
    } catch (err) {
      if (err instanceof ClaimError) throw new InvalidToken(`claim ${err.message}`, err.claim);
      throw err;
    }
    this.cache.remember(key, verified, payload.exp! * 1000);
    return verified;
  }

  private async verifySignature(token: string, keys: JWTVerifyGetKey, issuer: string): Promise<JWTPayload> {
    const options = { issuer, algorithms: ALGORITHMS, clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: ['exp'] };
    try {
      return (await jwtVerify(token, keys, options)).payload;
    } catch (err) {
      if (err instanceof joseErrors.JWKSMultipleMatchingKeys) return this.tryEachKey(token, err, options);
      throw asInvalid(err);
    }
  }

  /** A token without a key ID where several keys fit: the documented jose way, bounded. */
  private async tryEachKey(token: string, candidates: joseErrors.JWKSMultipleMatchingKeys, options: Parameters<typeof jwtVerify>[2]) {
    let tried = 0;
    for await (const publicKey of candidates) {
      if (++tried > MAX_CANDIDATE_KEYS) break;
      try {
        return (await jwtVerify(token, publicKey, options)).payload;
      } catch (err) {
        if (err instanceof joseErrors.JWSSignatureVerificationFailed) continue;
        throw asInvalid(err);
      }
    }
    throw new InvalidToken('signature');
  }
}

/** jose's errors are the token's fault; anything else (ProviderUnavailable) goes on as it is. */
function asInvalid(err: unknown): unknown {
  if (err instanceof joseErrors.JOSEError) {
    const claim = (err as { claim?: string }).claim;
    return new InvalidToken(err.code, claim);
  }
  return err;
}
