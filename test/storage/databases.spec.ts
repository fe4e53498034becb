/** Starting again over existing databases: views are recreated only when the generated ones changed. */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { createDatabase, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('databases at start', function () {
  this.timeout(120_000);
  let work: string;
  let env: Record<string, string>;
  let t: TestService | undefined;
  before(() => {
    work = mkdtempSync(join(ROOT, '.tmp', 'databases-'));
    // A restart must find the same storage: a folder, not memory.
    env = storageEnv().SERVICE_DATABASE_URL ? storageEnv() : { SERVICE_DATA_DIR: join(work, 'data') };
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  const viewOid = async (svc: TestService, db: string) =>
    (await svc.service.storage.knex.raw(`select to_regclass(?)::oid as oid`, [`"${schemaOf(db)}".scheme_view`])).rows[0].oid;

  it('keeps the views of a database across a restart unless the generated views changed', async () => {
    t = await startService(env);
    const db = await createDatabase(t);
    const first = await viewOid(t, db);
    expect(first).to.be.a('number');
    await t.close();

    t = await startService(env);
    expect(await viewOid(t, db), 'unchanged views are left alone').to.equal(first);
    await t.service.storage.knex.raw(`update service.databases set views_hash = 'older' where name = ?`, [db]);
    await t.close();

    t = await startService(env);
    const recreated = await viewOid(t, db);
    expect(recreated, 'changed views are recreated').to.be.a('number').and.not.equal(first);
    const r = await t.request(`/rest/${db}/schemes`);
    expect(r.status).to.equal(200);
  });
});
