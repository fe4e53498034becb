/**
 * From a verified token's claims to what the core needs: the login ID and
 * the external identity (groups, tenant, names, subject identifier), each
 * read from the claim the configuration names, by the claim reader every
 * token-reading method shares (runtime/auth/claims.ts).
 *
 * A claim of a shape the method cannot read is refused, not skipped: the
 * access rules decide on groups and tenant IDs, and a DENY rule must not be
 * passed because the groups came as something else than a list or a text.
 * An absent or empty claim is simply not there.
 */
import type { JWTPayload } from 'jose';
import { ClaimError, claimContains, claimReader, type ExternalIdentity } from '../../runtime/host.ts';
import type { OidcClaims } from './settings.ts';

export { ClaimError, claimContains };

/** A provider's claims: up to 1,000 characters, no C0 control characters (the database refuses NUL). */
export const { textClaim, listClaim } = claimReader({ maxLength: 1000, control: /[\u0000-\u001f\u007f]/, maxItems: 1000 });

/** The identity the token names; null when it has no login ID (a client-credentials token). */
export function identityOf(payload: JWTPayload, claims: OidcClaims): ExternalIdentity | null {
  const loginId = textClaim(payload, claims.loginId);
  if (loginId === undefined) return null;
  const identity: ExternalIdentity = { loginId };
  const fields = {
    groups: listClaim(payload, claims.groups),
    tenantId: textClaim(payload, claims.tenantId),
    commonName: textClaim(payload, claims.userName),
    familyName: textClaim(payload, claims.familyName),
    givenName: textClaim(payload, claims.givenName),
    tenantName: textClaim(payload, claims.tenantName),
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (identity as unknown as Record<string, unknown>)[key] = value;
  }
  if (claims.subjectId) {
    // With pinning on, a token without the identifier cannot be checked against the user's: refused.
    const subjectId = textClaim(payload, claims.subjectId);
    if (subjectId === undefined) throw new ClaimError(claims.subjectId, 'is missing');
    identity.subjectId = subjectId;
  }
  return identity;
}
