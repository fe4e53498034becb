/**
 * Slows down password guessing against one login ID: after too many failures
 * in a short time the login ID is locked, longer with every repeated lock.
 * Kept in memory per service instance.
 */

export type LoginThrottleOptions = {
  maxFailures?: number;
  windowMs?: number;
  lockMs?: number;
  maxLoginIds?: number;
  now?: () => number;
};

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const MAX_LOCK_MS = 15 * 60_000;

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
    if (!state) return { allowed: true };
    const now = this.now();
    if (state.lockedUntil > now) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((state.lockedUntil - now) / 1000)) };
    }
    if (this.isStale(state, now)) this.states.delete(loginId);
    return { allowed: true };
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
