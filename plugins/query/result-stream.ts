/**
 * The result of a run as a Readable: it pulls the next part from the
 * producer only when the reader wants more, so a slow reader slows the
 * database instead of filling memory, and destroying it stops the statement.
 */
import { Readable } from 'node:stream';

/** The result as a Readable that pulls from the producer only as fast as it is read. */
export class ResultStream extends Readable {
  private pulling = false;

  constructor(private readonly source: AsyncGenerator<Buffer>, private readonly pending: Buffer[], private finished: boolean, private readonly kill: () => void) {
    super();
  }

  override _read() {
    void this.pull();
  }

  private async pull() {
    if (this.pulling) return;
    this.pulling = true;
    try {
      while (!this.destroyed) {
        let chunk = this.pending.shift();
        if (chunk === undefined) {
          if (this.finished) {
            this.push(null);
            return;
          }
          const next = await this.source.next();
          if (next.done) {
            this.finished = true;
            this.push(null);
            return;
          }
          chunk = next.value;
        }
        if (!this.push(chunk)) return;
      }
    } catch (err) {
      this.finished = true;
      this.destroy(err as Error);
    } finally {
      this.pulling = false;
    }
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void) {
    if (this.finished) return callback(err);
    // Abandoned mid-way (the client went away, or an error): stop the statement, then let the producer clean up.
    this.finished = true;
    this.kill();
    this.source.return(undefined).then(() => callback(err), () => callback(err));
  }
}
