/**
 * The JWT a trusted authentication module injects next to the proxy's
 * headers (SERVICE_REMOTE_USER_OIDC_JWT). Per the specification its
 * signature is NOT verified (nor its expiry: the module that issued and
 * injected it answers for that); it only supplies user information the
 * headers left empty, and never the login ID.
 */
import { decodeJwt, type JWTPayload } from 'jose';
import { checked } from './headers.ts';

export class ClaimError extends Error {
  constructor(readonly claim: string, reason: string) {
    super(`claim ${claim}: ${reason}`);
  }
}

/** Decodes without verifying; throws for anything that is not a JWT with a JSON object as payload. */
export function decodeInjectedJwt(token: string): JWTPayload {
  return decodeJwt(token);
}

/**
 * A claim by name. A name that is not a top-level claim is read as a dotted
 * path (`realm_access.roles`), since providers nest group claims; a
 * top-level name wins, so namespaced claims (`https://example.com/groups`)
 * are found as they are.
 */
export function claimOf(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A single-valued claim as text; numbers (a numeric tenant ID) read as their decimal text. */
export function textClaim(payload: JWTPayload, name: string | undefined): string | undefined {
  if (!name) return undefined;
  const value = claimOf(payload, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw new ClaimError(name, 'is not a string');
  return checkedClaim(name, value.trim()) || undefined;
}

/** A list claim: a JSON array of strings, or one comma-separated string. */
export function listClaim(payload: JWTPayload, name: string | undefined): string[] | undefined {
  if (!name) return undefined;
  const value = claimOf(payload, name);
  if (value === undefined || value === null) return undefined;
  let items: unknown[];
  if (typeof value === 'string') items = value.split(',');
  else if (Array.isArray(value)) items = value;
  else throw new ClaimError(name, 'is neither an array nor a string');
  const list = items.map((item) => {
    if (typeof item !== 'string') throw new ClaimError(name, 'holds an item that is not a string');
    return checkedClaim(name, item.trim());
  }).filter(Boolean);
  return list.length ? list : undefined;
}

/** Whether the client-ID claim (a string or an array, like `aud`) contains the client ID. */
export function claimContains(payload: JWTPayload, name: string, clientId: string): boolean {
  const value = claimOf(payload, name);
  if (typeof value === 'string') return value === clientId;
  return Array.isArray(value) && value.includes(clientId);
}

function checkedClaim(name: string, value: string): string {
  try {
    return checked(name, value);
  } catch (err) {
    throw new ClaimError(name, (err as { reason?: string }).reason ?? 'is not acceptable');
  }
}
