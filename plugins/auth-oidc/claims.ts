/**
 * From a verified token's claims to what the core needs: the login ID and
 * the external identity (groups, tenant, names, subject identifier), each
 * read from the claim the configuration names.
 *
 * A claim of a shape the method cannot read is refused, not skipped: the
 * access rules decide on groups and tenant IDs, and a DENY rule must not be
 * passed because the groups came as something else than a list or a text.
 * An absent or empty claim is simply not there.
 */
import type { JWTPayload } from 'jose';
import type { ExternalIdentity } from '../../runtime/auth/types.ts';
import type { OidcClaims } from './settings.ts';

export class ClaimError extends Error {
  constructor(readonly claim: string, reason: string) {
    super(reason);
  }
}

const MAX_TEXT = 1000;
const MAX_GROUPS = 1000;

/**
 * A claim's value by its name; a name with dots that is not a claim itself
 * is followed into nested objects (e.g. `realm_access.roles`).
 */
function claim(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  if (!name.includes('.')) return undefined;
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A single text (a number is taken as its decimal text); undefined when absent or empty. */
export function textClaim(payload: JWTPayload, name: string | undefined): string | undefined {
  if (!name) return undefined;
  const value = claim(payload, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw new ClaimError(name, 'is not a text');
  const text = value.trim();
  if (text.length > MAX_TEXT) throw new ClaimError(name, 'is too long');
  // No identifier or name holds control characters, and the database refuses NUL in text.
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new ClaimError(name, 'holds control characters');
  return text || undefined;
}

/** A list: an array of texts, or one text of comma-separated values. */
export function listClaim(payload: JWTPayload, name: string | undefined): string[] | undefined {
  if (!name) return undefined;
  const value = claim(payload, name);
  if (value === undefined || value === null) return undefined;
  const items = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(items)) throw new ClaimError(name, 'is neither a list nor a text');
  if (items.length > MAX_GROUPS) throw new ClaimError(name, 'has too many values');
  const list = items.map((item) => {
    if (typeof item !== 'string' && !(typeof item === 'number' && Number.isFinite(item))) throw new ClaimError(name, 'holds a value that is not a text');
    return textClaim({ item }, 'item');
  }).filter((item): item is string => item !== undefined);
  return list.length ? list : undefined;
}

/** Whether the claim (a text or a list of texts, as `aud` may be) holds the value exactly. */
export function claimContains(payload: JWTPayload, name: string, expected: string): boolean {
  const value = claim(payload, name);
  if (typeof value === 'string') return value === expected;
  return Array.isArray(value) && value.some((item) => item === expected);
}

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
