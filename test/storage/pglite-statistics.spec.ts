/**
 * The embedded database keeps its planner's statistics (PGlite runs no
 * autovacuum): a table that grew past autovacuum's threshold is analysed,
 * one that did not is left alone. These tests open PGlite directly, whatever
 * storage the rest of the suite runs on.
 */
import { expect } from 'chai';
import { openStorage, type Storage } from '../../runtime/storage/connection.ts';
import { analyzeStaleTables } from '../../runtime/storage/pglite/analyze.ts';

describe('embedded database: statistics', function () {
  let storage: Storage;
  const reltuples = async (table: string) =>
    Number((await storage.knex.raw(`select reltuples from pg_class where oid = ?::regclass`, [table])).rows[0].reltuples);

  before(async function () {
    // One run is enough: the PostgreSQL run would open the same embedded database.
    if (process.env.SERVICE_TEST_DATABASE_URL) this.skip();
    storage = await openStorage({ dataDir: 'memory://' });
  });
  after(() => storage?.close());

  it('analyses a table that grew, then leaves it alone until it changes again', async () => {
    await storage.knex.raw(`create schema s; create table s.big (id int primary key, label text); create table s.small (id int)`);
    await storage.knex.raw(`insert into s.big select i, 'label ' || i from generate_series(1, 20000) i; insert into s.small values (1)`);
    expect(await reltuples('s.big')).to.be.at.most(0);

    const first = await analyzeStaleTables(storage.knex);
    expect(first).to.include('s.big');
    expect(first).not.to.include('s.small');
    expect(await reltuples('s.big')).to.be.within(19_000, 21_000);
    expect(await analyzeStaleTables(storage.knex)).to.deep.equal([]);

    // A tenth more rows is not enough (autovacuum's threshold), doubling is.
    await storage.knex.raw(`insert into s.big select i, 'x' from generate_series(20001, 20500) i`);
    expect(await analyzeStaleTables(storage.knex)).to.deep.equal([]);
    await storage.knex.raw(`insert into s.big select i, 'label ' || i from generate_series(20501, 40000) i`);
    expect(await analyzeStaleTables(storage.knex)).to.deep.equal(['s.big']);
    expect(await reltuples('s.big')).to.be.within(38_000, 42_000);
  });

  it('leaves unlogged tables (bulk writes\' staging) alone, however they grow', async () => {
    await storage.knex.raw(`create unlogged table s.staged (id int primary key, label text)`);
    await storage.knex.raw(`insert into s.staged select i, 'label ' || i from generate_series(1, 20000) i`);
    expect(await analyzeStaleTables(storage.knex)).not.to.include('s.staged');
    expect(await reltuples('s.staged')).to.be.at.most(0);
  });
});
