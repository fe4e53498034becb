/**
 * Requests someone is waiting for go first. Bulk work of this instance
 * (query exports and jobs, which can keep a core busy for minutes) asks
 * `pause()` before each part it hands on: while interactive requests are in
 * flight it waits until none is or a short while has passed. After handing
 * a part on it calls `throttle(bytes, rate)`: while interactive requests
 * are being served (one in flight, or one answered within RECENT_MS), all
 * bulk work of the instance together produces at most `rate` bytes a
 * second. Both hold the database back too, since an unread COPY blocks its
 * backend, which frees the CPU for the requests' own statements.
 *
 * Why both: the pause alone does not lower the CPU bulk work takes, only
 * moves it. The sockets between the database, the service and the client
 * buffer megabytes, and after each short pause the export catches up; on a
 * machine where the database, the service and the clients share two cores,
 * a GET's p99 still rose 4-6 times. Capping the rate lowers the CPU that
 * the export, its database backend and its client take per second
 * (bench/query.ts, GETs at 200/s, median of three runs of the p99 ratio to
 * rest: at 40 MB/s CSV 3.35, JSON 3.77, XML 2.92; at 10 MB/s, the query
 * plugin's default, CSV 2.06, JSON 0.86, XML 0.96; psql's own COPY 2.87-4.0).
 * With no interactive request, bulk work runs at full speed.
 *
 * The figures here were measured before the service ran with
 * --heap-growing-percent=100 (runtime/heap.ts), when V8's full collections
 * during exports also held GETs up; whether a higher rate now keeps the
 * p99 within 2 × has not been measured again.
 *
 * `browsing()` tells bulk work that is about to start whether people have
 * used this instance lately (a request in flight or answered within
 * BROWSING_MS, health probes aside). The query interface then runs its
 * statement without PostgreSQL's parallel workers: a parallel plan puts the
 * export's leader and two workers on the cores at once whenever the capped
 * export takes its next part, and on two cores a GET's p99 during a capped
 * CSV export was 2.1-10.2 times its p99 at rest (median 3.18 of five runs)
 * against 1.14-1.96 (median 1.39) without them. A report started while
 * nobody browses keeps the parallel plan and its full speed.
 */
/** An interactive request answered within this many milliseconds keeps bulk work capped. */
export const RECENT_MS = 100;
/** Bulk work that has run this many milliseconds without waiting lets the event loop serve I/O (see `giveWay()`). */
export const TURN_MS = 2;
/**
 * Bulk work that asks the gate at each of many small steps (`turn()`) or loops that take turns by themselves
 * (`turnsEvery()`) let the event loop serve I/O after this many milliseconds. Shorter than TURN_MS: a request waits
 * for the thread each time it is ready to go on (it arrived, the database answered, the client read the answer),
 * so with 2 ms a GET that takes 1 ms at rest took 7-10 ms while an upload read and prepared its records
 * (bench/transfer-upload.ts, PostgreSQL, 110,000 objects, GETs back to back); with 0.5 ms, 2.3-4 ms. The turns
 * cost the upload 5-10 % of its time with nobody waiting (11.3-11.7 s against 12.3-12.8 s).
 */
export const STEP_TURN_MS = 0.5;
/** While interactive requests are in flight, bulk work asking `turn()` runs at least this many milliseconds between pauses. */
export const PAUSED_SLICE_MS = 0.25;
/** A person's request answered within this many milliseconds counts as people browsing (see `browsing()`). */
export const BROWSING_MS = 10_000;

/** What bulk work waited for, since the gate was made (runtime/metrics.ts reads them). */
export interface GateFigures {
  /** Pauses for interactive requests in flight, and the milliseconds they took. */
  pauses: number;
  pausedMs: number;
  /** Waits for the rate cap, and the milliseconds they took. */
  rateWaits: number;
  rateWaitedMs: number;
}

export class InteractiveGate {
  readonly figures: GateFigures = { pauses: 0, pausedMs: 0, rateWaits: 0, rateWaitedMs: 0 };
  private active = 0;
  private waiters: (() => void)[] = [];
  /** When the last interactive request was answered; a request that became bulk work does not count. */
  private lastAnswered = -Infinity;
  /** Requests in flight that a person waits for (not health probes). */
  private people = 0;
  /** When the last of those was answered. */
  private lastPerson = -Infinity;
  /** When the bytes bulk work handed on so far are paid for at the capped rate (performance.now() time). */
  private paidUntil = 0;
  /** When bulk work last let the event loop take its turn (see `giveWay()`). */
  private lastTurn = -Infinity;
  /** When `turn()` last ended a pause, and how long it runs after that before it pauses again. */
  private pauseEnded = -Infinity;
  private pauseGap = 0;

  constructor(private readonly maxPauseMs = 10, private readonly now: () => number = () => performance.now()) {}

  /**
   * A request started; call the function returned when it is answered, or
   * with `bulk` true when it turned into bulk work (an export is not held
   * back for its own request). A `probe` (a load balancer's health check)
   * goes first like any other request but is not people browsing.
   */
  enter(probe = false): (bulk?: boolean) => void {
    this.active++;
    if (!probe) this.people++;
    let left = false;
    return (bulk = false) => {
      if (left) return;
      left = true;
      this.active--;
      if (!probe) this.people--;
      if (!bulk) {
        this.lastAnswered = this.now();
        if (!probe) this.lastPerson = this.lastAnswered;
      }
      if (this.active === 0) this.release();
    };
  }

  /**
   * Whether people use this instance: a request of theirs is in flight or
   * was answered within BROWSING_MS. Bulk work that starts now should not
   * take every core (see the top of this file).
   */
  browsing(): boolean {
    return this.people > 0 || this.now() - this.lastPerson <= BROWSING_MS;
  }

  /** Interactive requests in flight. */
  get inFlight(): number {
    return this.active;
  }

  /** Undefined when nothing is in flight (no await needed); else resolves when nothing is or after maxPauseMs. */
  pause(): Promise<void> | undefined {
    if (this.active === 0) return undefined;
    const started = this.now();
    this.figures.pauses++;
    return new Promise((resolve) => {
      const resume = () => {
        this.figures.pausedMs += this.now() - started;
        resolve();
      };
      const done = () => {
        clearTimeout(timer);
        resume();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resume();
      }, this.maxPauseMs);
      this.waiters.push(done);
    });
  }

  /**
   * Bulk work handed on `bytes`: while interactive requests are being served,
   * resolves once they are paid for at `bytesPerSecond` (shared by all bulk
   * work of the instance); otherwise, or with no rate (0), undefined at once.
   */
  throttle(bytes: number, bytesPerSecond: number): Promise<void> | undefined {
    if (!bytesPerSecond) return undefined;
    const now = this.now();
    if (this.active === 0 && now - this.lastAnswered > RECENT_MS) return undefined;
    this.paidUntil = Math.max(this.paidUntil, now) + (bytes / bytesPerSecond) * 1000;
    const wait = this.paidUntil - now;
    // Waits shorter than a timer's resolution add up in paidUntil and are taken together.
    if (wait < 2) return undefined;
    this.figures.rateWaits++;
    this.figures.rateWaitedMs += wait;
    return new Promise((resolve) => setTimeout(resolve, wait));
  }

  /**
   * What bulk work awaits after handing on a part of `bytes`: `pause()`,
   * then `throttle()`; when neither holds it but it has run TURN_MS since it
   * last waited, a turn of the event loop. Otherwise undefined, and nothing
   * to await.
   */
  giveWay(bytes: number, bytesPerSecond: number): Promise<void> | undefined {
    const paused = this.pause();
    if (paused) {
      this.lastTurn = this.now();
      return paused.then(() => this.throttle(bytes, bytesPerSecond));
    }
    const now = this.now();
    // Parts already read are handed on in microtasks, which run before any I/O: at full speed the event loop
    // would not see a new request until the export waits for the database. Give it a turn now and then.
    const waiting = this.throttle(bytes, bytesPerSecond)
      ?? (now - this.lastTurn >= TURN_MS ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined);
    if (waiting) this.lastTurn = now;
    return waiting;
  }

  /**
   * For work that asks the gate at each of many small steps (an upload's
   * records) and pauses only before each part of them. While interactive
   * requests are in flight, once it has run PAUSED_SLICE_MS since it last
   * waited: `pause()`, and then it runs again (after a pause that gave up
   * with a request still in flight, for as long as it paused, before the
   * next). Otherwise, once it has run STEP_TURN_MS: a turn of the event
   * loop. Else undefined, and nothing to await.
   *
   * Why the pause and not only a turn: a request waits for the database
   * (its session, its reads), and each answer waited for the bulk work's
   * next turn. Paused, the bulk work leaves the thread to the request until
   * it is answered (or `pause()` gives up), so a request waits for the
   * bulk work only when it arrives (bench/transfer-upload.ts, PostgreSQL:
   * the service's own time for a GET while an upload prepares its records,
   * from its arrival to its answer, 1.9-2.1 ms at the median before, 1.1-1.4 after).
   */
  turn(): Promise<void> | undefined {
    const now = this.now();
    const since = now - this.lastTurn;
    if (this.active > 0 && since >= PAUSED_SLICE_MS && now - this.pauseEnded >= this.pauseGap) {
      this.lastTurn = now;
      return this.pause()!.then(() => {
        this.lastTurn = this.pauseEnded = this.now();
        // Still in flight after the longest pause (a long answer, a slow client): the bulk work runs as long
        // again, taking turns, before it pauses for it again, instead of a fortieth of the time.
        this.pauseGap = this.active > 0 ? this.maxPauseMs : 0;
      });
    }
    if (since < STEP_TURN_MS) return undefined;
    this.lastTurn = now;
    return new Promise<void>((resolve) => setImmediate(resolve));
  }

  private release() {
    const waiting = this.waiters;
    this.waiters = [];
    for (const done of waiting) done();
  }
}

/**
 * What bulk work awaits now and then in its loops (the gate's `turn()`, or a
 * `turnsEvery()` clock): something to wait for, or undefined when it may go
 * on at once. A loop with nobody to give way to takes `noTurn`.
 */
export type Turn = () => Promise<void> | undefined;
export const noTurn: Turn = () => undefined;

/**
 * For work with no gate at hand (a format's reading of a file, a plugin's
 * loop over a write's payloads): a function to await now and then that
 * gives a turn of the event loop once `ms` have passed since the last one,
 * else undefined (nothing to await). Each such loop keeps its own clock,
 * where the gate's `turn()` keeps one for all bulk work of the instance.
 */
export function turnsEvery(ms = STEP_TURN_MS): Turn {
  let last = performance.now();
  return () => {
    if (performance.now() - last < ms) return undefined;
    return new Promise<void>((resolve) => setImmediate(() => {
      last = performance.now();
      resolve();
    }));
  };
}
