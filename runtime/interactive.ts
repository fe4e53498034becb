/**
 * Requests someone is waiting for go first. Bulk work of this instance
 * (query exports and jobs, which can keep a core busy for minutes) asks
 * `pause()` before each part it hands on: while interactive requests are in
 * flight it waits until none is or a short while has passed. The waiting
 * also holds the database back, since an unread COPY blocks its backend,
 * which frees the CPU for the requests' own statements. With no
 * interactive request in flight, bulk work runs at full speed.
 */
export class InteractiveGate {
  private active = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly maxPauseMs = 10) {}

  /** A request started; call the function returned when it is answered (or turned into bulk work). */
  enter(): () => void {
    this.active++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.active--;
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

  private release() {
    const waiting = this.waiters;
    this.waiters = [];
    for (const done of waiting) done();
  }
}
