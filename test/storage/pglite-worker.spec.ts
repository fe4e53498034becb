/**
 * The embedded database runs in a thread of its own: a long statement leaves
 * the event loop free and can be interrupted; what was committed survives the
 * interrupt and a crash of the thread; `memory://` is a temporary folder that
 * close() removes. These tests open PGlite directly, whatever storage the
 * rest of the suite runs on.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import copyStreams from 'pg-copy-streams';
import type { Worker } from 'node:worker_threads';
import { EMBEDDED_HOST, openStorage, type Storage, type StorageLog } from '../../runtime/storage/connection.ts';
import { RECYCLE_BYTES, type PgliteHost } from '../../runtime/storage/pglite/host.ts';
import { emptyDatabaseTemplate, pgliteArtifacts } from '../../runtime/storage/pglite/files.ts';

/** Runs for minutes in PGlite (about 2.5 million rows a second on this machine). */
const LONG = 'select count(*) from generate_series(1, 1e9)';

interface Outcome { ok: boolean; code?: string; message?: string }

function outcome(promise: Promise<unknown>): Promise<Outcome> {
  return promise.then(
    () => ({ ok: true }),
    (err: { code?: string; message?: string }) => ({ ok: false, code: err.code, message: err.message }),
  );
}

/** Interrupts until the statement has ended: an interrupt before it reached the database stops nothing. */
async function interruptUntilSettled(storage: Storage, statement: Promise<Outcome>): Promise<Outcome> {
  let settled: Outcome | undefined;
  void statement.then((o) => (settled = o));
  const deadline = Date.now() + 30_000;
  while (!settled && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (!settled) await storage.interrupt!();
  }
  return statement;
}

function recordingLog(): StorageLog & { lines: { level: string; msg: string; obj: object }[] } {
  const lines: { level: string; msg: string; obj: object }[] = [];
  return {
    lines,
    info: (obj, msg) => lines.push({ level: 'info', msg, obj }),
    warn: (obj, msg) => lines.push({ level: 'warn', msg, obj }),
    error: (obj, msg) => lines.push({ level: 'error', msg, obj }),
  };
}

function hostOf(storage: Storage): PgliteHost {
  return (storage as unknown as Record<symbol, PgliteHost>)[EMBEDDED_HOST];
}

/** Waits until a statement is with the database thread. */
async function executing(storage: Storage): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!hostOf(storage).executing()) {
    if (Date.now() > deadline) throw new Error('no statement reached the database');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function ids(storage: Storage): Promise<number[]> {
  const rows: { id: number }[] = await storage.knex('t').select('id').orderBy('id');
  return rows.map((r) => r.id);
}

describe('embedded database in a thread of its own', function () {
  this.timeout(120_000);
  let storage: Storage;
  let log: ReturnType<typeof recordingLog>;

  before(function () {
    // One run is enough: the PostgreSQL run would test the same embedded database again.
    if (process.env.SERVICE_TEST_DATABASE_URL) this.skip();
  });

  beforeEach(async () => {
    log = recordingLog();
    storage = await openStorage({ dataDir: 'memory://', log });
    await storage.knex.raw('create table t (id int primary key, note text)');
  });

  afterEach(async () => {
    await storage.close();
  });

  it('keeps the event loop running while a long statement runs', async () => {
    const long = outcome(storage.knex.raw(LONG));
    await executing(storage);
    const gaps: number[] = [];
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
    }, 20);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(hostOf(storage).executing()).to.equal(true);
    clearInterval(timer);
    const result = await interruptUntilSettled(storage, long);
    expect(result.ok).to.equal(false);
    // Blocked, the timer would not have fired at all during the statement.
    expect(gaps.length).to.be.greaterThan(20);
    expect(Math.max(...gaps)).to.be.lessThan(1000);
  });

  it('keeps what was committed when a statement is interrupted, and goes on writing', async () => {
    await storage.knex('t').insert([1, 2, 3].map((id) => ({ id, note: `row ${id}` })));
    await storage.knex.transaction(async (trx) => {
      await trx('t').insert({ id: 4, note: 'committed in a transaction' });
    });
    const long = outcome(storage.knex.raw(LONG));
    const result = await interruptUntilSettled(storage, long);
    expect(result).to.include({ ok: false, code: '57014' });
    expect(result.message).to.match(/cancel/i);
    expect(await ids(storage)).to.deep.equal([1, 2, 3, 4]);
    await storage.knex('t').insert({ id: 5, note: 'after the interrupt' });
    expect(await ids(storage)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(log.lines.some((l) => l.level === 'warn' && /interrupt/.test(l.msg))).to.equal(true);
  });

  it('ends a statement interrupted while its rows stream out, though the last part broke off inside a message', async () => {
    // Rows of 2 kB come out in parts cut where PGlite flushes, not where messages end.
    const streaming = outcome(storage.knex.raw(`select generate_series(1, 100000000) as g, repeat('x', 2000) as pad`));
    await executing(storage);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await storage.interrupt!();
    const result = await Promise.race([streaming, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000))]);
    expect(result).to.not.equal('hung');
    expect(result).to.include({ ok: false });
    // The connection after it works.
    expect((await storage.knex.raw('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
  });

  it('runs the statements queued behind the interrupted one on the new thread', async () => {
    await storage.knex('t').insert({ id: 1 });
    const long = outcome(storage.knex.raw(LONG));
    // The pool has one connection: these wait for the long statement.
    const insert = outcome(storage.knex('t').insert({ id: 2 }));
    const count = storage.knex('t').count<{ n: number }[]>('* as n');
    const result = await interruptUntilSettled(storage, long);
    expect(result.code).to.equal('57014');
    expect(await insert).to.deep.equal({ ok: true });
    expect((await count)[0].n).to.equal(2);
    expect(await ids(storage)).to.deep.equal([1, 2]);
  });

  it('rolls back the whole transaction whose statement was interrupted', async () => {
    await storage.knex('t').insert({ id: 1 });
    const trx = outcome(storage.knex.transaction(async (t) => {
      await t('t').insert({ id: 2 });
      await t.raw(LONG);
    }));
    const result = await interruptUntilSettled(storage, trx);
    expect(result).to.include({ ok: false, code: '57014' });
    expect(await ids(storage)).to.deep.equal([1]);
  });

  it('refuses further statements of an interrupted transaction until it is rolled back', async () => {
    const connection = await storage.knex.client.acquireConnection();
    try {
      await connection.query('begin');
      await connection.query('insert into t (id) values (1)');
      const long = outcome(connection.query(LONG));
      expect((await interruptUntilSettled(storage, long)).code).to.equal('57014');
      const next = await outcome(connection.query('insert into t (id) values (2)'));
      expect(next.code).to.equal('25P02');
      const withParameters = await outcome(connection.query('select $1::int', [1]));
      expect(withParameters.code).to.equal('25P02');
      const commit = await connection.query('commit');
      expect(commit.command).to.equal('ROLLBACK');
      expect((await connection.query('select count(*)::int as n from t')).rows[0].n).to.equal(0);
    } finally {
      await storage.knex.client.releaseConnection(connection);
    }
  });

  it('keeps named prepared statements usable after an interrupt', async () => {
    const connection = await storage.knex.client.acquireConnection();
    try {
      const named = { name: 'count_below', text: 'select count(*)::int as n from t where id < $1' };
      await connection.query('insert into t (id) values (1), (2), (3)');
      expect((await connection.query({ ...named, values: [3] })).rows[0].n).to.equal(2);
      expect((await interruptUntilSettled(storage, outcome(connection.query(LONG)))).code).to.equal('57014');
      expect((await connection.query({ ...named, values: [4] })).rows[0].n).to.equal(3);
    } finally {
      await storage.knex.client.releaseConnection(connection);
    }
  });

  it('does nothing harmful when interrupted while idle, or twice at once', async () => {
    await storage.knex('t').insert({ id: 1 });
    await storage.interrupt!();
    expect(await ids(storage)).to.deep.equal([1]);

    const long = outcome(storage.knex.raw(LONG));
    await executing(storage);
    let result: Outcome | undefined;
    void long.then((o) => (result = o));
    while (!result) {
      await Promise.all([storage.interrupt!(), storage.interrupt!()]);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(result.code).to.equal('57014');
    await storage.knex('t').insert({ id: 2 });
    expect(await ids(storage)).to.deep.equal([1, 2]);
  });

  it('reopens the database when its thread dies on its own, failing the statement that ran', async () => {
    await storage.knex('t').insert({ id: 1 });
    const long = outcome(storage.knex.raw(LONG));
    await executing(storage);
    const thread = hostOf(storage).currentThread() as Worker;
    await thread.terminate();
    const result = await long;
    expect(result.ok).to.equal(false);
    expect(result.code).to.equal('57P02');
    await storage.knex('t').insert({ id: 2 });
    expect(await ids(storage)).to.deep.equal([1, 2]);
    expect(hostOf(storage).currentThread()).to.not.equal(thread);
    expect(log.lines.some((l) => l.level === 'error' && /stopped unexpectedly/.test(l.msg))).to.equal(true);
  });

  it('gives back the memory a statement grew it to, by reopening the database once no transaction is open', async () => {
    const host = hostOf(storage);
    const connection = await storage.knex.client.acquireConnection();
    try {
      const thread = host.currentThread();
      await connection.query('begin');
      await connection.query('insert into t (id) values (1)');
      // A value of 700 MB: PGlite's memory grows past RECYCLE_BYTES and would stay there.
      expect((await connection.query(`select length(repeat('x', 700000000)) as n`)).rows[0].n).to.equal(700_000_000);
      expect(host.lastMemoryBytes).to.be.above(RECYCLE_BYTES);
      // Not inside the transaction, which a new thread would not have.
      await connection.query('insert into t (id) values (2)');
      expect(host.currentThread()).to.equal(thread);
      expect(host.recycled).to.equal(0);
      await connection.query('commit');
      expect((await connection.query('select id from t order by id')).rows.map((r: { id: number }) => r.id)).to.deep.equal([1, 2]);
      expect(host.recycled).to.equal(1);
      expect(host.currentThread()).to.not.equal(thread);
      expect(host.lastMemoryBytes).to.be.below(RECYCLE_BYTES / 2);
      expect(log.lines.some((l) => l.level === 'info' && /grew large/.test(l.msg))).to.equal(true);
    } finally {
      await storage.knex.client.releaseConnection(connection);
    }
  });

  it('streams COPY TO STDOUT and takes COPY FROM STDIN (pg-copy-streams)', async () => {
    const connection = await storage.knex.client.acquireConnection();
    try {
      const rows = Array.from({ length: 20_000 }, (_, i) => `${i}\tnote ${i}\n`);
      const from = connection.query(copyStreams.from('copy t (id, note) from stdin'));
      await pipeline(Readable.from(rows), from);
      expect(from.rowCount).to.equal(20_000);

      const to = connection.query(copyStreams.to('copy (select id, note from t order by id) to stdout with (format csv)'));
      const chunks: Buffer[] = [];
      for await (const chunk of to) chunks.push(chunk as Buffer);
      const lines = Buffer.concat(chunks).toString('utf8').trimEnd().split('\n');
      expect(lines).to.have.length(20_000);
      expect(lines[19_999]).to.equal('19999,note 19999');
      expect(chunks.length).to.be.greaterThan(1);

      const failing = connection.query(copyStreams.to('copy (select 1 / 0) to stdout'));
      const failure = await outcome((async () => { for await (const _ of failing) void _; })());
      expect(failure.code).to.equal('22012');
      expect((await connection.query('select count(*)::int as n from t')).rows[0].n).to.equal(20_000);
    } finally {
      await storage.knex.client.releaseConnection(connection);
    }
  });
});

describe('what makes an embedded database start fast', () => {
  // Both fall back silently (each thread compiles PGlite, each memory:// database runs initdb): a new PGlite
  // whose files moved would only be slower, so this is where it shows.
  it('compiles PGlite once per process, from the files of the installed package', async () => {
    const artifacts = await pgliteArtifacts();
    expect(artifacts.pgliteWasmModule).to.be.instanceOf(WebAssembly.Module);
    expect(artifacts.initdbWasmModule).to.be.instanceOf(WebAssembly.Module);
  });

  it('makes the empty database once per process, to copy for every memory:// database', async () => {
    expect(await emptyDatabaseTemplate()).to.not.equal(null);
  });
});

describe('closing the embedded database', function () {
  this.timeout(120_000);
  let scratch: string;
  let previousTmpdir: string | undefined;

  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'pglite-worker-spec-'));
    previousTmpdir = process.env.TMPDIR;
  });

  afterEach(async () => {
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
    await rm(scratch, { recursive: true, force: true });
  });

  it('backs memory:// by a temporary folder that close() removes', async () => {
    process.env.TMPDIR = scratch;
    const storage = await openStorage({ dataDir: 'memory://', log: recordingLog() });
    const folders = (await readdir(scratch)).filter((name) => name.startsWith('mms-pglite-') && !name.includes('template'));
    expect(folders).to.have.length(1);
    expect(await readdir(join(scratch, folders[0]))).to.include('PG_VERSION');
    await storage.knex.raw('select 1');
    await storage.close();
    expect((await readdir(scratch)).filter((name) => folders.includes(name))).to.deep.equal([]);
  });

  it('ends a running statement when closed, promptly', async () => {
    process.env.TMPDIR = scratch;
    const storage = await openStorage({ dataDir: 'memory://', log: recordingLog() });
    await storage.knex.raw('select 1');
    const long = outcome(storage.knex.raw(LONG));
    await executing(storage);
    const started = Date.now();
    await storage.close();
    expect(Date.now() - started).to.be.lessThan(10_000);
    const result = await long;
    expect(result).to.include({ ok: false, code: '57P01' });
    expect(await readdir(scratch)).to.deep.equal([]);
  });

  it('keeps a data folder on disk across close and open, and across an interrupt', async () => {
    const dataDir = join(scratch, 'data');
    let storage = await openStorage({ dataDir, log: recordingLog() });
    await storage.knex.raw('create table kept (id int)');
    await storage.knex('kept').insert([{ id: 1 }, { id: 2 }]);
    const long = outcome(storage.knex.raw(LONG));
    expect((await interruptUntilSettled(storage, long)).code).to.equal('57014');
    await storage.knex('kept').insert({ id: 3 });
    await storage.close();
    storage = await openStorage({ dataDir, log: recordingLog() });
    try {
      const rows: { id: number }[] = await storage.knex('kept').select('id').orderBy('id');
      expect(rows.map((r) => r.id)).to.deep.equal([1, 2, 3]);
    } finally {
      await storage.close();
    }
  });
});
