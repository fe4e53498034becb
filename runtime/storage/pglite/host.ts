/**
 * Keeps the embedded database in a thread of its own (worker.mjs) and
 * carries the connections' protocol bytes to it and back, one batch at a
 * time (PGlite is a single backend).
 *
 * Why a thread: a long statement no longer blocks the service's event loop,
 * and it can be stopped. PGlite ignores statement_timeout and has no cancel,
 * so interrupt() terminates the thread and opens the database again from its
 * folder in a new one: what was committed is there (PostgreSQL recovers from
 * its WAL as after a crash), the statement that ran fails with 57014 and the
 * statements waiting behind it run on the new thread. A thread that dies on
 * its own is replaced the same way; the connections then close (57P02), as
 * PostgreSQL closes every connection when a backend crashes.
 *
 * PGlite's WebAssembly memory grows with the largest value, sort or hash a
 * statement needed and never shrinks: one query of the query interface that
 * built a gigabyte string (and failed with "out of memory") would keep the
 * service's memory there for good. A thread whose memory has grown past
 * `recycleBytes` is therefore closed cleanly and replaced as soon as no
 * statement runs and no connection is inside a transaction; statements sent
 * meanwhile wait for the new thread, and nobody loses anything.
 */
import { Worker } from 'node:worker_threads';
import { PgliteSocket, type ProtocolCarrier } from './socket.ts';
import { WORKER_URL, pgliteArtifacts, type DatabaseTemplate } from './files.ts';

/** The part of the service's logger (pino) the storage uses. */
export interface StorageLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PgliteHostOptions {
  dataDir: string;
  /** Files to start an empty folder from instead of running initdb (memory://). */
  template?: DatabaseTemplate | null;
  log: StorageLog;
  /** Reopen the database in a new thread, when idle, once its memory has grown past this (default RECYCLE_BYTES). */
  recycleBytes?: number;
  /** A lower scheduling priority for the database's thread (a nice value, 1 to 19; Linux only). */
  niceness?: number;
}

/** A fresh database uses some 150 MB; a statement that took several times that has left it behind. */
export const RECYCLE_BYTES = 768 * 2 ** 20;

interface Exchange {
  id: number;
  socket: PgliteSocket;
  bytes: Uint8Array;
  startup: boolean;
  /** Named statements prepared again on a new thread: the answer is not the client's. */
  replay: boolean;
}

interface Thread {
  worker: Worker;
  generation: number;
  ready: boolean;
  /** Terminated on purpose (interrupt, close): its exit is not a crash. */
  stopping: boolean;
  failure?: string;
  /** Its memory grew past recycleBytes: replace it when idle. */
  oversized?: number;
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'data' | 'done'; id: number; buffer: ArrayBuffer | null; length: number; inTransaction?: boolean; memoryBytes?: number }
  | { type: 'crashed'; message: string }
  | { type: 'closed' };

const CLOSE_TIMEOUT_MS = 10_000;

export class PgliteHost implements ProtocolCarrier {
  private thread: Thread | null = null;
  private starting: Promise<void> | null = null;
  private interrupting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private generation = 0;
  private nextId = 1;
  private queue: Exchange[] = [];
  private running: Exchange | null = null;
  private readonly sockets = new Set<PgliteSocket>();
  /** Times a thread was replaced because its memory had grown, and its memory after the last batch (diagnostics). */
  recycled = 0;
  lastMemoryBytes = 0;

  private constructor(private readonly options: PgliteHostOptions) {}

  /** Resolves once the database is open; rejects if it cannot be opened. */
  static async open(options: PgliteHostOptions): Promise<PgliteHost> {
    const host = new PgliteHost(options);
    await host.start();
    return host;
  }

  /** The thread the database runs in now (diagnostics; tests stop it behind the host's back). */
  currentThread(): Worker | null {
    return this.thread?.worker ?? null;
  }

  /** Whether a batch of statements is with the database thread right now. */
  executing(): boolean {
    return this.running !== null && !this.running.replay;
  }

  /** A new connection's stream (pg's `stream` option). */
  socket(): PgliteSocket {
    return new PgliteSocket(this);
  }

  attach(socket: PgliteSocket): void {
    this.sockets.add(socket);
  }

  detach(socket: PgliteSocket): void {
    this.sockets.delete(socket);
    this.queue = this.queue.filter((exchange) => exchange.socket !== socket);
  }

  send(socket: PgliteSocket, bytes: Uint8Array, startup: boolean): void {
    if (this.closing) {
      socket.terminate('57P01', 'terminating connection: the embedded database is closed');
      return;
    }
    this.queue.push({ id: 0, socket, bytes, startup, replay: false });
    this.pump();
  }

  /**
   * Stops whatever the database is executing by replacing its thread; resolves
   * once the database is usable again. Nothing running: nothing to do.
   */
  interrupt(): Promise<void> {
    if (this.closing) return Promise.resolve();
    if (this.interrupting) return this.interrupting;
    if (this.starting) return this.starting;
    const running = this.running;
    if (!running || !this.thread) return Promise.resolve();
    this.running = null;
    this.options.log.warn({ dataDir: this.options.dataDir }, 'interrupting the embedded database: reopening it');
    const old = this.thread;
    this.retire(old);
    this.interrupting = this.start(old.worker.terminate()).finally(() => {
      this.interrupting = null;
    });
    if (!running.replay) running.socket.cancelled();
    // A transaction of another connection was lost with the thread: that connection cannot go on.
    for (const socket of [...this.sockets]) {
      if (socket !== running.socket && socket.inTransaction) {
        socket.terminate('57P01', 'terminating connection: its transaction was lost when the embedded database was interrupted');
      }
    }
    return this.interrupting;
  }

  /** Shuts the database down: cleanly when idle, by terminating its thread when a statement runs. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.starting?.catch(() => undefined);
      const thread = this.thread;
      const busy = this.running !== null;
      this.running = null;
      this.queue = [];
      for (const socket of [...this.sockets]) socket.terminate('57P01', 'terminating connection: the embedded database is closing');
      if (!thread) return;
      this.retire(thread);
      if (!busy) await this.shutDown(thread);
      await thread.worker.terminate();
    })();
    return this.closing;
  }

  private retire(thread: Thread): void {
    thread.stopping = true;
    if (this.thread === thread) this.thread = null;
  }

  /** Starts a thread once `after` (the old thread's termination) is done; one start at a time. */
  private start(after?: Promise<unknown>): Promise<void> {
    this.starting ??= (async () => {
      await after;
      this.thread = await this.launch();
    })()
      .catch((err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        this.options.log.error({ err: reason, dataDir: this.options.dataDir }, 'the embedded database cannot be opened');
        for (const exchange of this.queue) exchange.socket.terminate('57P03', `the embedded database cannot be opened: ${reason}`);
        this.queue = [];
        throw err;
      })
      .finally(() => {
        this.starting = null;
        this.pump();
      });
    return this.starting;
  }

  private async launch(): Promise<Thread> {
    const workerData = {
      mode: 'serve', dataDir: this.options.dataDir, template: this.options.template ?? null, niceness: this.options.niceness ?? 0,
      ...(await pgliteArtifacts()),
    };
    // execArgv: [] keeps the service's loader (tsx) out of the thread; the worker is plain JavaScript.
    const worker = new Worker(WORKER_URL, { workerData, execArgv: [] });
    const thread: Thread = { worker, generation: ++this.generation, ready: false, stopping: false };
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          thread.ready = true;
          // Like an idle socket of the old in-process database: an idle thread does not keep the process alive.
          worker.unref();
          resolve();
        } else {
          this.received(thread, message);
        }
      });
      worker.on('error', (err: Error) => {
        thread.failure ??= err.stack ?? err.message;
      });
      worker.on('exit', (code) => {
        if (!thread.ready) reject(new Error(thread.failure ?? `the database thread exited with code ${code}`));
        else this.exited(thread, code);
      });
    });
    return thread;
  }

  private pump(): void {
    if (this.running || this.closing) return;
    const thread = this.thread;
    if (!thread) {
      // After a failed start, the next statement tries again.
      if (this.queue.length && !this.starting) this.start().catch(() => undefined);
      return;
    }
    if (thread.oversized !== undefined && this.idle()) {
      this.recycle(thread);
      return;
    }
    let exchange = this.queue.shift();
    if (!exchange) return;
    const { socket } = exchange;
    let reset = false;
    if (exchange.startup) {
      // A new connection gets a clean session unless another one shares it.
      reset = this.sockets.size === 1;
      socket.generation = thread.generation;
    } else if (socket.generation !== thread.generation) {
      socket.generation = thread.generation;
      const statements = socket.preparedStatements();
      if (statements) {
        this.queue.unshift(exchange);
        exchange = { id: 0, socket, bytes: statements, startup: false, replay: true };
      }
    }
    exchange.id = this.nextId++;
    this.running = exchange;
    thread.worker.ref();
    const message = { type: 'exec', id: exchange.id, bytes: exchange.bytes, reset, discard: exchange.replay };
    thread.worker.postMessage(message, [exchange.bytes.buffer as ArrayBuffer]);
  }

  /** No connection is inside a transaction, which a new thread would not have. */
  private idle(): boolean {
    for (const socket of this.sockets) if (socket.inTransaction) return false;
    return true;
  }

  /** Closes an oversized thread cleanly and opens the database in a new one; what is queued runs there. */
  private recycle(thread: Thread): void {
    this.recycled++;
    this.options.log.info({ dataDir: this.options.dataDir, memoryMb: Math.round(thread.oversized! / 2 ** 20) },
      'the embedded database grew large: reopening it to give the memory back');
    this.retire(thread);
    this.start(this.shutDown(thread).then(() => thread.worker.terminate())).catch(() => undefined);
  }

  private received(thread: Thread, message: WorkerMessage): void {
    if (message.type === 'crashed') {
      thread.failure = message.message;
      return;
    }
    if (thread !== this.thread || (message.type !== 'data' && message.type !== 'done')) return;
    const exchange = this.running;
    if (!exchange || exchange.id !== message.id) return;
    if (message.buffer && !exchange.replay) exchange.socket.received(Buffer.from(message.buffer, 0, message.length));
    if (message.type === 'done') {
      this.running = null;
      this.lastMemoryBytes = message.memoryBytes ?? 0;
      if (this.lastMemoryBytes > (this.options.recycleBytes ?? RECYCLE_BYTES)) thread.oversized = this.lastMemoryBytes;
      if (!exchange.replay) exchange.socket.completed(message.inTransaction === true);
      this.pump();
      if (!this.running) thread.worker.unref();
    }
  }

  private exited(thread: Thread, code: number): void {
    if (thread.stopping) return;
    this.retire(thread);
    const reason = thread.failure ?? `exit code ${code}`;
    this.options.log.error({ err: reason, dataDir: this.options.dataDir }, 'the embedded database stopped unexpectedly: reopening it');
    this.running = null;
    for (const socket of [...this.sockets]) {
      socket.terminate('57P02', 'terminating connection: the embedded database stopped unexpectedly and is being reopened');
    }
    if (!this.closing) this.start().catch(() => undefined);
  }

  private shutDown(thread: Thread): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, CLOSE_TIMEOUT_MS);
      function done(): void {
        clearTimeout(timer);
        thread.worker.off('message', onMessage);
        thread.worker.off('exit', done);
        resolve();
      }
      function onMessage(message: WorkerMessage): void {
        if (message.type === 'closed') done();
      }
      thread.worker.on('message', onMessage);
      thread.worker.once('exit', done);
      thread.worker.postMessage({ type: 'close' });
    });
  }
}
