/**
 * Copies of the embedded database for long reads: each one shows the
 * database as of the moment it was asked for, whole transactions only, while
 * the database goes on writing; a statement on a copy holds nothing of the
 * database; copies are reused while nothing changes, replaced when stale,
 * closed when idle, and leave no folder behind.
 */
import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { openStorage, type Storage } from '../../runtime/storage/connection.ts';
import { SnapshotReaders, type SnapshotLease } from '../../runtime/storage/pglite/readers.ts';

const quiet = { info() {}, warn() {}, error() {} };
const LONG = `with recursive r(n) as (select 1 union all select n + 1 from r where n < 50000000) select count(*) from r`;

async function count(lease: SnapshotLease, sql = 'select count(*)::int as n from t'): Promise<number> {
  return (await lease.client.query(sql)).rows[0].n;
}

describe('Storage: copies of the embedded database for long reads', function () {
  this.timeout(120_000);
  let storage: Storage;
  let readers: SnapshotReaders;

  beforeEach(async function () {
    if (process.env.SERVICE_TEST_DATABASE_URL) this.skip();
    storage = await openStorage({ dataDir: 'memory://', log: quiet });
    await storage.knex.raw('create table t (grp int not null, k int not null)');
    readers = storage.openReaders!({ size: 2 });
  });
  afterEach(async () => {
    await readers?.close();
    await storage?.close();
  });

  it('shows every transaction committed before it was asked for, whole, while the database goes on writing', async () => {
    let stop = false;
    let committed = 0;
    // Each transaction writes two rows of one group: a copy that holds only one of them would show half a transaction.
    const writer = (async () => {
      for (let grp = 0; !stop; grp++) {
        await storage.knex.transaction(async (trx) => {
          await trx.raw('insert into t values (?, 1)', [grp]);
          await trx.raw('insert into t select ?, 2 from generate_series(1, 20)', [grp]);
        });
        committed = grp + 1;
      }
    })();
    try {
      for (let i = 0; i < 3; i++) {
        const before = committed;
        const lease = await readers.acquire();
        try {
          const groups = (await lease.client.query('select grp, count(*)::int as n from t group by grp')).rows;
          expect(groups.length, 'groups committed before the copy was asked for').to.be.at.least(before);
          for (const g of groups) expect(g.n, `group ${g.grp}`).to.equal(21);
        } finally {
          lease.release(false);
        }
      }
    } finally {
      stop = true;
      await writer;
    }
  });

  it('holds nothing of the database while a statement runs on a copy, and stops it on interrupt', async () => {
    const lease = await readers.acquire();
    const long = lease.client.query(LONG).then(() => 'done', (err) => err.code);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    for (let i = 0; i < 5; i++) await storage.knex.raw('insert into t values (?, 0)', [i]);
    expect(Date.now() - started, 'five writes while the copy is busy').to.be.below(1000);
    lease.interrupt();
    expect(await long).to.equal('57014');
    // The lease is usable again after the transaction that did not exist is rolled back.
    expect(await count(lease)).to.equal(0);
    lease.release(false);
  });

  it('reuses a copy while nothing changes and makes a new one once something has', async () => {
    const first = await readers.acquire();
    first.release(false);
    const second = await readers.acquire();
    second.release(false);
    expect(readers.made).to.equal(1);
    await storage.knex.raw('insert into t values (1, 1)');
    const third = await readers.acquire();
    expect(await count(third)).to.equal(1);
    third.release(false);
    expect(readers.made).to.equal(2);
  });

  it('makes at most `size` copies; one more waits until a copy is given back', async () => {
    const a = await readers.acquire();
    await storage.knex.raw('insert into t values (1, 1)');
    const b = await readers.acquire();
    let third: SnapshotLease | undefined;
    const waiting = readers.acquire().then((lease) => { third = lease; });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(third).to.equal(undefined);
    a.release(false);
    await waiting;
    expect(await count(third!)).to.equal(1);
    b.release(false);
    third!.release(false);
  });

  it('stops waiting for a copy when the caller leaves', async () => {
    const a = await readers.acquire();
    await storage.knex.raw('insert into t values (1, 1)');
    const b = await readers.acquire();
    const left = new AbortController();
    const waiting = readers.acquire(left.signal).then(() => 'got one', (err) => err.name);
    left.abort();
    expect(await waiting).to.equal('AbortError');
    a.release(false);
    b.release(false);
  });

  it('fails as an unavailable database (57P03) when no copy can be made, and stops the backup it started', async () => {
    const errors: string[] = [];
    const broken = new SnapshotReaders({ knex: storage.knex, dataDir: '/nonexistent/folder', size: 1, log: { ...quiet, error: (_o, msg) => errors.push(msg) } });
    const failed = await broken.acquire().then(() => undefined, (err) => err);
    expect(failed?.code).to.equal('57P03');
    expect(errors).to.include('the embedded database cannot be copied');
    await broken.close();
    // pg_backup_start again would fail had the backup been left running.
    const lease = await readers.acquire();
    expect(await count(lease)).to.equal(0);
    lease.release(false);
  });

  it('closes a copy left unused, and every copy with its folder on close', async () => {
    const idle = storage.openReaders!({ size: 1, idleMs: 100 });
    try {
      const lease = await idle.acquire();
      lease.release(false);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(idle.memoryBytes()).to.deep.equal([]);
    } finally {
      await idle.close();
    }
    const lease = await readers.acquire();
    const dir = (readers as unknown as { readers: Set<{ dir: string }> }).readers.values().next().value!.dir;
    expect(existsSync(dir)).to.equal(true);
    lease.release(false);
    await readers.close();
    expect(existsSync(dir)).to.equal(false);
  });
});
