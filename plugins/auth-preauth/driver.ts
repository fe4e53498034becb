/**
 * The two drivers of pre-authentication.
 *
 * - The API-key gate (phase `gate`): with SERVICE_API_KEY_TOKEN set, a request
 *   that does not carry exactly that token in the SERVICE_API_KEY header is
 *   not authenticated by any method, access keys included.
 * - The header driver (phase `credentials`): turns the proxy's headers, completed by an
 *   injected JWT, into an external identity; the core assigns it to a user.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { createError, type AuthDriver, type AuthRequest, type AuthResult, type ExternalIdentity } from '../../runtime/host.ts';
import { HeaderValueError, listValue, singleRaw, singleValue } from './headers.ts';
import { ClaimError, claimContains, decodeInjectedJwt, listClaim, textClaim } from './jwt.ts';
import type { PreAuthSettings } from './settings.ts';

export const METHOD = 'pre-authentication';

type Log = { warn: (o: object, m: string) => void };

/**
 * Every rejection looks the same: no challenge, since no credentials the
 * client could send would help (passwords are not accepted), and nothing
 * that says which check failed.
 */
function rejection() {
  return createError('UNAUTHENTICATED');
}

export class ApiKeyGate implements AuthDriver {
  readonly name = 'pre-authentication-api-key';
  private readonly expected: Buffer;

  constructor(private readonly header: string, token: string) {
    this.expected = digest(token);
  }

  async authenticate({ ctx }: AuthRequest): Promise<AuthResult | null> {
    const sent = ctx.req.headers[this.header];
    // Digests have one length whatever was sent, so the comparison neither throws nor tells the token's length.
    const matches = typeof sent === 'string' && timingSafeEqual(digest(sent), this.expected);
    if (!matches) throw rejection();
    return null;
  }
}

function digest(text: string): Buffer {
  // Header values are Latin-1 strings of the wire bytes: hash exactly those bytes.
  return createHash('sha256').update(text, 'latin1').digest();
}

export class PreAuthDriver implements AuthDriver {
  readonly name = METHOD;

  constructor(private readonly settings: PreAuthSettings, private readonly log: Log) {}

  /** The core assigns the identity: a user, a system administrator (also for /api/admin), or the access rules. */
  async authenticate({ ctx }: AuthRequest): Promise<AuthResult | null> {
    const identity = this.identityOf(ctx);
    return identity ? { kind: 'external', identity } : null;
  }

  /** The identity the proxy asserts; null without a login ID. Throws 401 for values no proxy should send. */
  identityOf(ctx: Context): ExternalIdentity | null {
    const { headers } = this.settings;
    try {
      const loginId = singleValue(ctx, headers.loginId);
      // The JWT never signs anyone in by itself.
      if (!loginId) return null;
      const identity: ExternalIdentity = { loginId };
      const groups = listValue(ctx, headers.groups);
      const fields = {
        tenantId: singleValue(ctx, headers.tenantId),
        familyName: singleValue(ctx, headers.familyName),
        givenName: singleValue(ctx, headers.givenName),
        tenantName: singleValue(ctx, headers.tenantName),
      };
      if (groups) identity.groups = groups;
      for (const [key, value] of Object.entries(fields)) if (value !== undefined) identity[key as keyof typeof fields] = value;
      const jwt = singleRaw(ctx, headers.jwt);
      if (jwt) this.complete(identity, jwt);
      // Subjects are pinned (SERVICE_OIDC_JWT_SUB_ID), and this request names none: whoever has one pinned is refused.
      if (this.settings.claims.subjectId && identity.subjectId === undefined) identity.subjectId = null;
      return identity;
    } catch (err) {
      if (err instanceof HeaderValueError) {
        this.log.warn({ header: err.header, reason: err.reason }, 'pre-authentication header refused');
        throw rejection();
      }
      throw err;
    }
  }

  /** Fills what the headers left empty from the JWT's claims, exactly as the specification's table says. */
  private complete(identity: ExternalIdentity, jwt: string) {
    const { claims, clientId } = this.settings;
    let payload;
    try {
      payload = decodeInjectedJwt(jwt);
    } catch {
      // Never the token itself: it may be a valid credential elsewhere.
      this.log.warn({ header: this.settings.headers.jwt }, 'pre-authentication JWT is malformed');
      throw rejection();
    }
    try {
      // The table lists the client-ID claim; it is used as method 4 uses it: a token issued for another client is refused.
      if (clientId && !claimContains(payload, claims.clientId, clientId)) {
        this.log.warn({ claim: claims.clientId }, 'pre-authentication JWT was issued for another client');
        throw rejection();
      }
      const subjectId = textClaim(payload, claims.subjectId);
      if (subjectId !== undefined) identity.subjectId = subjectId;
      identity.groups ??= listClaim(payload, claims.groups);
      identity.tenantId ??= textClaim(payload, claims.tenantId);
      identity.tenantName ??= textClaim(payload, claims.tenantName);
      const namesFromHeaders = identity.familyName !== undefined || identity.givenName !== undefined;
      identity.familyName ??= textClaim(payload, claims.familyName);
      identity.givenName ??= textClaim(payload, claims.givenName);
      if (!namesFromHeaders) identity.commonName = textClaim(payload, claims.userName);
      for (const key of Object.keys(identity) as (keyof ExternalIdentity)[]) if (identity[key] === undefined) delete identity[key];
    } catch (err) {
      if (err instanceof ClaimError) {
        this.log.warn({ claim: err.claim, reason: err.message }, 'pre-authentication JWT claim refused');
        throw rejection();
      }
      throw err;
    }
  }
}
