/**
 * Reads uploaded profile files on a thread of their own, with a deadline.
 *
 * The yaml package parses synchronously, at about 1 MB a second, and some
 * files cost far more than their size: before the limits in document.ts, a
 * 650 kB file of 60,000 aliases held the event loop for 40 s, and a mapping
 * of 100,000 keys for 55 s (its duplicate-key check compares each key with
 * all before it). document.ts now refuses those early, but which other
 * corner of a parser and three checks grows faster than the file cannot be
 * proven; so the file is read off the event loop (`/health` and every other
 * request go on meanwhile), and a read that is not done within the deadline
 * is stopped and refused. A thread cannot use more CPU than the time it
 * runs, so no upload within the size limit costs more than the deadline.
 */
import { Worker } from 'node:worker_threads';
import type { ReadResult } from './document.ts';
import type { ProfileKind } from './schema.ts';

/** How long reading one file may take; a realistic annotation file (100 kB) takes 50 ms. */
export const READ_DEADLINE_MS = 1000;

const WORKER_URL = new URL('./reader-worker.mjs', import.meta.url);

/** The thread's heap: a 1 MiB file's syntax tree needs about 60 MB. */
const HEAP_MB = 256;

export class ProfileReader {
  private thread?: Promise<Worker>;
  /** One file at a time: the deadline counts the time of one read. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly generatedDir: string, private readonly deadlineMs = READ_DEADLINE_MS) {}

  read(kind: ProfileKind, bytes: Buffer): Promise<ReadResult> {
    const turn = this.queue.then(() => this.readNow(kind, bytes));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    if (thread) await (await thread.catch(() => undefined))?.terminate();
  }

  private async readNow(kind: ProfileKind, bytes: Buffer): Promise<ReadResult> {
    const worker = await this.started();
    return new Promise<ReadResult>((resolve, reject) => {
      const done = (outcome: () => void) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        outcome();
      };
      const tooComplex = () => {
        this.stop(worker);
        resolve({ ok: false, violations: [{ path: '', key: 'profileTooComplex', params: { seconds: this.deadlineMs / 1000 } }] });
      };
      const onMessage = (result: ReadResult) => done(() => resolve(result));
      // A file whose syntax tree outgrows the thread's heap is as much too complex as one that takes too long.
      const onError = (err: Error & { code?: string }) => done(() => (err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? tooComplex() : (this.stop(worker), reject(err))));
      const onExit = () => done(() => reject(new Error('the profile reader stopped')));
      const timer = setTimeout(() => done(tooComplex), this.deadlineMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      const copy = new Uint8Array(bytes);
      worker.postMessage({ kind, bytes: copy }, [copy.buffer]);
    });
  }

  /** The thread, started on the first upload and kept; its start does not count against the deadline. */
  private started(): Promise<Worker> {
    if (this.thread) return this.thread;
    const thread = new Promise<Worker>((resolve, reject) => {
      const worker = new Worker(WORKER_URL, { workerData: { generatedDir: this.generatedDir }, resourceLimits: { maxOldGenerationSizeMb: HEAP_MB }, execArgv: [] });
      worker.unref();
      worker.once('message', () => resolve(worker));
      // Kept for the thread's life: an error without a listener would end the service.
      worker.on('error', (err) => {
        if (this.thread === thread) this.thread = undefined;
        reject(err);
      });
    });
    this.thread = thread;
    return thread;
  }

  private stop(worker: Worker): void {
    this.thread = undefined;
    void worker.terminate();
  }
}
