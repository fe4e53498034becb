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
 */
/** An interactive request answered within this many milliseconds keeps bulk work capped. */
export const RECENT_MS = 100;

export class InteractiveGate {
  private active = 0;
  private waiters: (() => void)[] = [];
  /** When the last interactive request was answered; a request that became bulk work does not count. */
  private lastAnswered = -Infinity;
  /** When the bytes bulk work handed on so far are paid for at the capped rate (performance.now() time). */
  private paidUntil = 0;

  constructor(private readonly maxPauseMs = 10, private readonly now: () => number = () => performance.now()) {}

  /**
   * A request started; call the function returned when it is answered, or
   * with `bulk` true when it turned into bulk work (an export is not held
   * back for its own request).
   */
  enter(): (bulk?: boolean) => void {
    this.active++;
    let left = false;
    return (bulk = false) => {
      if (left) return;
      left = true;
      this.active--;
      if (!bulk) this.lastAnswered = this.now();
      if (this.active === 0) this.release();
    };
  }

  /** Interactive requests in flight. */
  get inFlight(): number {
    return this.active;
  }

  /** Undefined when nothing is in flight (no await needed); else resolves when nothing is or after maxPauseMs. */
  pause(): Promise<void> | undefined {
    if (this.active === 0) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
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
    return wait < 2 ? undefined : new Promise((resolve) => setTimeout(resolve, wait));
  }

  /**
   * What bulk work awaits after handing on a part of `bytes`: `pause()`,
   * then `throttle()`. Undefined, and nothing to await, when neither holds it.
   */
  giveWay(bytes: number, bytesPerSecond: number): Promise<void> | undefined {
    const paused = this.pause();
    if (!paused) return this.throttle(bytes, bytesPerSecond);
    return paused.then(() => this.throttle(bytes, bytesPerSecond));
  }

  private release() {
    const waiting = this.waiters;
    this.waiters = [];
    for (const done of waiting) done();
  }
}
