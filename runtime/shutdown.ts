/**
 * How `npm start` writes its log and stops: the process exits within
 * SERVICE_SHUTDOWN_TIMEOUT plus EXIT_MARGIN_MS after SIGTERM, whatever
 * becomes of its log's reader.
 *
 * Why this is not pino.destination() and flushSync(): sonic-boom (4.2.1)
 * retries a failed synchronous write every 100 ms for ever, EPIPE included
 * (only EAGAIN can be told to give up), and pino flushes synchronously again
 * when the process exits. With standard output a pipe whose reader went away
 * (a log collector restarted), or one that nobody reads, the service closed
 * its listener on SIGTERM and then never exited.
 *
 * So nothing here writes synchronously. The log is sonic-boom of our own
 * (pino's registers that exit-time flush), asynchronous and buffered, with
 * a bound on what it buffers while nobody reads. On a signal the service
 * closes, then the last lines are flushed asynchronously in the time left:
 * exit code 0 when the service closed and its log took the lines or has no
 * reader any more (the lines are lost either way), 1 when closing failed or
 * outlived the deadline. A log write still pending at the deadline makes the
 * process kill itself: process.exit() would wait for ever on a write stuck
 * in libuv's thread pool, whose threads it joins.
 */
import sonicBoom, { type SonicBoom } from 'sonic-boom';
import type { Logger } from 'pino';

/** Room after SERVICE_SHUTDOWN_TIMEOUT for the storage and plugins to close and the last lines to be written. */
export const EXIT_MARGIN_MS = 3000;
/** At the deadline, the time the last line ("exiting") gets to be written. */
const FINAL_FLUSH_MS = 500;
/** What the log buffers while its reader does not read; lines beyond it are dropped. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export type LogState = 'written' | 'lost' | 'pending';

/** Standard output, asynchronous: a synchronous write per request line costs the request path several percent. */
export function openLogDestination(fd: number = process.stdout.fd): SonicBoom {
  // A CommonJS module: its class is a property of the default export.
  const destination = new sonicBoom.SonicBoom({ fd, sync: false, minLength: 4096, maxLength: MAX_BUFFERED_BYTES, periodicFlush: 1000 });
  // A log nobody can read any more must not take the service down; flushWithin() tells what became of the lines.
  destination.on('error', () => undefined);
  return destination;
}

/**
 * Writes what the log buffers, asynchronously: 'written', 'lost' (the write
 * failed, e.g. EPIPE, and nothing is pending), or 'pending' after `ms`.
 * A flush writes one buffered part and 'drain' comes with up to minLength
 * bytes left, so it flushes until a flush finds nothing left to write.
 */
export function flushWithin(destination: SonicBoom, ms: number): Promise<LogState> {
  return new Promise((resolve) => {
    let lastWrite = -1;
    const wrote = (n: number) => (lastWrite = n);
    const drained = () => (lastWrite === 0 ? done('written') : flush());
    const failed = () => done('lost');
    const timer = setTimeout(() => done('pending'), Math.max(0, ms));
    function done(state: LogState) {
      clearTimeout(timer);
      destination.off('write', wrote).off('drain', drained).off('error', failed);
      resolve(state);
    }
    function flush() {
      lastWrite = -1;
      destination.flush();
    }
    destination.on('write', wrote).on('drain', drained).on('error', failed);
    flush();
  });
}

export interface Stoppable {
  log: Logger;
  close(): Promise<void>;
}

/** Stops the service on SIGTERM and SIGINT and ends the process (see the top of this file). */
export function stopOnSignals(service: Stoppable, destination: SonicBoom, shutdownTimeoutMs: number) {
  let stopping = false;
  let forced = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const deadline = Date.now() + shutdownTimeoutMs + EXIT_MARGIN_MS;
    const overdue = setTimeout(() => {
      forced = true;
      service.log.error('the service did not close within SERVICE_SHUTDOWN_TIMEOUT; exiting');
      exitAfterLog(destination, 1);
    }, deadline - Date.now());
    service.log.info({ signal }, 'shutting down');
    const code = await closed(service);
    if (forced) return;
    clearTimeout(overdue);
    exit(code, await flushWithin(destination, deadline - Date.now()));
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** The exit code closing earns: 0, or 1 when it failed. */
async function closed(service: Stoppable): Promise<number> {
  try {
    await service.close();
    service.log.info('stopped');
    return 0;
  } catch (err) {
    service.log.error({ err: String(err) }, 'closing the service failed');
    return 1;
  }
}

/** Exits once the log took its lines, or could not, within FINAL_FLUSH_MS (e.g. after a failed start). */
export function exitAfterLog(destination: SonicBoom, code: number) {
  void flushWithin(destination, FINAL_FLUSH_MS).then((state) => exit(code, state));
}

function exit(code: number, log: LogState) {
  if (log === 'pending') process.kill(process.pid, 'SIGKILL');
  else process.exit(code);
}
