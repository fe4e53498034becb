/**
 * Slows down guessing of credentials. A LoginThrottle counts failures per
 * key: after too many in a window the key is locked, longer with every
 * repeated lock (up to 15 minutes). A SignInThrottle keeps two of them, so
 * that an attacker's failures lock the attacker and not the person whose
 * login ID it tries:
 *
 * - per client address and login ID: five failures lock that pair, so the
 *   real user signing in from another address is not locked out;
 * - per client address over all login IDs: a budget that stops one address
 *   from trying a few passwords for each of many login IDs (spraying).
 *
 * A success clears only its own pair: one valid account must not buy an
 * address a fresh budget. IPv6 addresses count by their /64 prefix, which
 * one subscriber usually holds whole. Kept in memory per service instance,
 * bounded in size.
 */
import type { Context } from 'koa';
import { isIPv6 } from 'node:net';

export type LoginThrottleOptions = {
  maxFailures?: number;
  windowMs?: number;
  lockMs?: number;
  maxLoginIds?: number;
  now?: () => number;
};

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const MAX_LOCK_MS = 15 * 60_000;
/** Every sign-in asks: one answer object for all that pass. */
const ALLOWED: ThrottleDecision = Object.freeze({ allowed: true });
const WINDOW_MS = 15 * 60_000;

/** Five failures of one login ID from one address within 15 minutes: locked for 30 s, doubling while it goes on. */
export const PAIR_LIMITS: LoginThrottleOptions = { maxFailures: 5, windowMs: WINDOW_MS, lockMs: 30_000, maxLoginIds: 100_000 };
/** A hundred failures from one address within 15 minutes, whatever the login IDs or keys: locked for 60 s, doubling. */
export const ADDRESS_LIMITS: LoginThrottleOptions = { maxFailures: 100, windowMs: WINDOW_MS, lockMs: 60_000, maxLoginIds: 20_000 };

type LoginState = {
  failureTimes: number[]; // the latest failures, at most maxFailures of them
  locks: number; // locks in a row, each starting within windowMs of the previous one's end
  lockedUntil: number;
};

export class LoginThrottle {
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly lockMs: number;
  private readonly maxLoginIds: number;
  private readonly now: () => number;
  // Map keeps insertion order; fail() re-inserts, so the first key is the least recently failed.
  private readonly states = new Map<string, LoginState>();

  constructor({ maxFailures = 5, windowMs = 60_000, lockMs = 30_000, maxLoginIds = 100_000, now = Date.now }: LoginThrottleOptions = {}) {
    this.maxFailures = maxFailures;
    this.windowMs = windowMs;
    this.lockMs = lockMs;
    this.maxLoginIds = maxLoginIds;
    this.now = now;
  }

  check(loginId: string): ThrottleDecision {
    const state = this.states.get(loginId);
    if (!state) return ALLOWED;
    const now = this.now();
    if (state.lockedUntil > now) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((state.lockedUntil - now) / 1000)) };
    }
    if (this.isStale(state, now)) this.states.delete(loginId);
    return ALLOWED;
  }

  fail(loginId: string): void {
    const now = this.now();
    const state = this.states.get(loginId) ?? { failureTimes: [], locks: 0, lockedUntil: 0 };
    // A password must not be tried while locked, so a failure reported then adds nothing.
    if (state.lockedUntil > now) return;
    state.failureTimes = [...state.failureTimes, now].slice(-this.maxFailures);
    if (this.reachedLimit(state, now)) this.lock(state, now);
    this.states.delete(loginId);
    this.states.set(loginId, state);
    this.evictOverflow();
  }

  succeed(loginId: string): void {
    this.states.delete(loginId);
  }

  private reachedLimit(state: LoginState, now: number): boolean {
    return state.failureTimes.length >= this.maxFailures && now - state.failureTimes[0] <= this.windowMs;
  }

  private lock(state: LoginState, now: number): void {
    const repeated = state.locks > 0 && now - state.lockedUntil <= this.windowMs;
    state.locks = repeated ? state.locks + 1 : 1;
    state.lockedUntil = now + Math.min(this.lockMs * 2 ** (state.locks - 1), MAX_LOCK_MS);
    state.failureTimes = [];
  }

  /** Nothing left to remember: no lock, no recent failure, no lock to double. */
  private isStale(state: LoginState, now: number): boolean {
    const lastFailure = state.failureTimes.at(-1) ?? -Infinity;
    return now - lastFailure > this.windowMs && now - state.lockedUntil > this.windowMs;
  }

  private evictOverflow(): void {
    for (const oldest of this.states.keys()) {
      if (this.states.size <= this.maxLoginIds) return;
      this.states.delete(oldest);
    }
  }
}

/** Where one attempt comes from and whom it names; `loginKey` absent for credentials without a login ID (access keys). */
export interface Attempt {
  address: string;
  loginKey?: string;
}

export class SignInThrottle {
  private readonly pairs: LoginThrottle;
  private readonly addresses: LoginThrottle;

  constructor(options: { pair?: LoginThrottleOptions; address?: LoginThrottleOptions; now?: () => number } = {}) {
    this.pairs = new LoginThrottle({ ...PAIR_LIMITS, ...options.pair, now: options.now });
    this.addresses = new LoginThrottle({ ...ADDRESS_LIMITS, ...options.address, now: options.now });
  }

  /** Refused when the pair or the address is locked; the longer wait is the one to tell. */
  check(attempt: Attempt): ThrottleDecision {
    const address = this.addresses.check(attempt.address);
    const pair = attempt.loginKey === undefined ? ALLOWED : this.pairs.check(pairKey(attempt));
    if (address.allowed) return pair;
    if (pair.allowed) return address;
    return { allowed: false, retryAfterSeconds: Math.max(address.retryAfterSeconds, pair.retryAfterSeconds) };
  }

  fail(attempt: Attempt): void {
    this.addresses.fail(attempt.address);
    if (attempt.loginKey !== undefined) this.pairs.fail(pairKey(attempt));
  }

  succeed(attempt: Attempt): void {
    if (attempt.loginKey !== undefined) this.pairs.succeed(pairKey(attempt));
  }
}

function pairKey({ address, loginKey }: Attempt): string {
  return `${address}\u0000${loginKey}`;
}

/**
 * The address an attempt is counted against: Koa's `ctx.ip` (the forwarded
 * address when SERVICE_TRUST_PROXY is on), an IPv4 address in IPv6 form as
 * IPv4, and an IPv6 address as its /64 prefix.
 */
export function clientAddress(ctx: Pick<Context, 'ip'>): string {
  const ip = (ctx.ip ?? '').trim();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1];
  const bare = ip.split('%')[0];
  return isIPv6(bare) ? `${ipv6Groups(bare).slice(0, 4).join(':')}::/64` : ip;
}

/** The eight groups of an IPv6 address, `::` expanded, leading zeros dropped; a trailing IPv4 part counts as two groups. */
function ipv6Groups(ip: string): string[] {
  const groups = (part: string) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['v4', 'v4'] : [g])) : []);
  const [head, tail] = ip.toLowerCase().split('::');
  const [h, t] = [groups(head), groups(tail ?? '')];
  const all = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return all.map((g) => g.replace(/^0+(?=.)/, ''));
}
