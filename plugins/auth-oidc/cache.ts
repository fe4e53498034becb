/**
 * Remembers verified tokens briefly, so a client that sends the same token
 * with every request pays for the signature check once, not every time.
 *
 * Keyed by the token's SHA-256 digest: the cache never holds a usable token,
 * and an attacker's choice of token length does not matter. An entry lives
 * until the token expires or the TTL ends, whichever is first; a token that
 * failed is never remembered, so no answer other than a verified one comes
 * out of here. Bounded: when full, the oldest entry goes.
 */
import { createHash } from 'node:crypto';

export class VerifiedTokens<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  constructor(private readonly options: { ttlMs: number; maxEntries?: number; now?: () => number }) {}

  private get now() {
    return (this.options.now ?? Date.now)();
  }

  keyOf(token: string): string {
    return createHash('sha256').update(token, 'latin1').digest('base64url');
  }

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now >= entry.until) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** `expiresAt`: the token's own expiry (ms since the epoch). */
  remember(key: string, value: T, expiresAt: number) {
    const { ttlMs, maxEntries = 10_000 } = this.options;
    const until = Math.min(this.now + ttlMs, expiresAt);
    if (ttlMs <= 0 || until <= this.now) return;
    this.entries.delete(key);
    while (this.entries.size >= maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until });
  }

  get size() {
    return this.entries.size;
  }

  clear() {
    this.entries.clear();
  }
}
