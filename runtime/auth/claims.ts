/**
 * Reading a JWT's claims into what the core needs (login ID, groups,
 * tenant, names), shared by every method that receives tokens: OpenID
 * Connect verifies its token first, pre-authentication reads the one its
 * proxy injected. The methods differ only in how long a value may be and
 * which control characters they refuse, so each makes its own reader.
 *
 * A claim of a shape the method cannot read is refused, not skipped: the
 * access rules decide on groups and tenant IDs, and a DENY rule must not be
 * passed because the groups came as something else than a list or a text.
 * An absent or empty claim is simply not there.
 */
import type { JWTPayload } from 'jose';

export class ClaimError extends Error {
  constructor(readonly claim: string, readonly reason: string) {
    super(reason);
  }
}

/**
 * A claim's value by its name; a name that is not a top-level claim is read
 * as a dotted path into nested objects (`realm_access.roles`), since
 * providers nest group claims. A top-level name wins, so namespaced claims
 * (`https://example.com/groups`) are found as they are.
 */
export function claimOf(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  if (!name.includes('.')) return undefined;
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Whether the claim (a text or a list of texts, as `aud` may be) holds the value exactly. */
export function claimContains(payload: JWTPayload, name: string, expected: string): boolean {
  const value = claimOf(payload, name);
  if (typeof value === 'string') return value === expected;
  return Array.isArray(value) && value.some((item) => item === expected);
}

export interface ClaimLimits {
  /** The longest value, once trimmed. */
  maxLength: number;
  /** Characters no value may hold (the database refuses NUL; no identifier or name holds a control character). */
  control: RegExp;
  /** The most items a list claim may have. */
  maxItems?: number;
  /** Whether a number among a list's items is read as its decimal text (a provider's numeric group IDs) or refused. */
  numbersInLists?: boolean;
}

export interface ClaimReader {
  /** A single text (a number is taken as its decimal text); undefined when absent or empty. */
  textClaim(payload: JWTPayload, name: string | undefined): string | undefined;
  /** A list: an array of texts (or numbers), or one text of comma-separated values; undefined when absent or empty. */
  listClaim(payload: JWTPayload, name: string | undefined): string[] | undefined;
}

export function claimReader({ maxLength, control, maxItems = 1000, numbersInLists = true }: ClaimLimits): ClaimReader {
  const checked = (name: string, value: string): string => {
    if (control.test(value)) throw new ClaimError(name, 'holds control characters');
    const text = value.trim();
    if (text.length > maxLength) throw new ClaimError(name, 'is too long');
    return text;
  };
  const textClaim = (payload: JWTPayload, name: string | undefined): string | undefined => {
    if (!name) return undefined;
    const value = claimOf(payload, name);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value !== 'string') throw new ClaimError(name, 'is not a text');
    return checked(name, value) || undefined;
  };
  const listClaim = (payload: JWTPayload, name: string | undefined): string[] | undefined => {
    if (!name) return undefined;
    const value = claimOf(payload, name);
    if (value === undefined || value === null) return undefined;
    const items = typeof value === 'string' ? value.split(',') : value;
    if (!Array.isArray(items)) throw new ClaimError(name, 'is neither a list nor a text');
    if (items.length > maxItems) throw new ClaimError(name, 'has too many values');
    const list = items.map((item) => {
      if (numbersInLists && typeof item === 'number' && Number.isFinite(item)) return String(item);
      if (typeof item !== 'string') throw new ClaimError(name, 'holds a value that is not a text');
      return checked(name, item);
    }).filter(Boolean);
    return list.length ? list : undefined;
  };
  return { textClaim, listClaim };
}
