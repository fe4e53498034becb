/**
 * `npm start` exits within SERVICE_SHUTDOWN_TIMEOUT (plus EXIT_MARGIN_MS)
 * after SIGTERM whatever becomes of its log: standard output is a real pipe
 * (a FIFO) whose reader goes away, or that nobody reads.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { HEAP_FLAGS } from '../../runtime/heap.ts';
import { EXIT_MARGIN_MS } from '../../runtime/shutdown.ts';
import { exitWithin, freePort, startMain, type MainProcess } from '../helpers/main-process.ts';

const SHUTDOWN_TIMEOUT_MS = 1000;
/** How late the process may be gone on a busy machine. */
const SLACK_MS = 2000;

describe('shutdown when the log cannot be written', () => {
  let fifo: string;
  let reader: number | undefined;
  let main: MainProcess | undefined;

  /** The service, its standard output the write end of a FIFO whose read end this process holds. */
  async function startWithPipedLog(port: number) {
    fifo = join(tmpdir(), `service-log-${process.pid}-${port}`);
    execFileSync('mkfifo', [fifo]);
    reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    try {
      main = await startMain(HEAP_FLAGS, port, { stdout: writer, env: { SERVICE_SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT_MS) } });
    } finally {
      closeSync(writer);
    }
    return main;
  }

  /** SIGTERM; how the process ended and how long after the signal. */
  async function terminate(running: MainProcess) {
    const signalled = Date.now();
    running.child.kill('SIGTERM');
    const ended = await exitWithin(running, SHUTDOWN_TIMEOUT_MS + EXIT_MARGIN_MS + SLACK_MS);
    return { ended, afterMs: Date.now() - signalled };
  }

  afterEach(() => {
    if (main && main.child.exitCode === null && main.child.signalCode === null) main.child.kill('SIGKILL');
    main = undefined;
    if (reader !== undefined) closeSync(reader);
    reader = undefined;
    rmSync(fifo, { force: true });
  });

  it('exits 0 at once when the log\'s reader went away', async function () {
    this.timeout(180_000);
    const running = await startWithPipedLog(await freePort());
    closeSync(reader!);
    reader = undefined;
    const { ended, afterMs } = await terminate(running);
    expect(ended, `still running ${afterMs} ms after SIGTERM:\n${running.output()}`).to.not.equal(undefined);
    expect(ended).to.deep.equal({ code: 0, signal: null });
    // Nothing waited for the shutdown timeout: there were no requests in flight.
    expect(afterMs).to.be.below(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
  });

  it('is gone within the shutdown timeout when nobody reads the log, and says it had to force', async function () {
    this.timeout(180_000);
    const port = await freePort();
    const running = await startWithPipedLog(port);
    // Log lines of 8 kB (the path is logged) until well past the pipe's 64 kB and the log's 4 kB buffer.
    for (let i = 0; i < 30; i++) await (await fetch(`http://127.0.0.1:${port}/x${'a'.repeat(8000)}`)).arrayBuffer();
    // A log that cannot be written does not hold requests up.
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).to.equal(200);
    const { ended, afterMs } = await terminate(running);
    expect(ended, `still running ${afterMs} ms after SIGTERM:\n${running.output()}`).to.not.equal(undefined);
    // The service closed, but its last lines could not be written: the process killed itself rather than wait for them.
    expect(ended).to.deep.equal({ code: null, signal: 'SIGKILL' });
  });
});
