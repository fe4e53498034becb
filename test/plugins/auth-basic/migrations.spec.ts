/**
 * auth-basic's tables (users' passwords in every database, system
 * administrators' in the control schema) left the core's first migrations
 * for the plugin's manifest. An installation made before keeps them: its
 * ledger counts the core's first migration, which made them, and none of
 * the plugin's; the plugin's migrations then find the tables there and
 * leave them, passwords and all.
 */
import { expect } from 'chai';
import { manifest } from '../../../plugins/auth-basic/index.ts';
import { CONTROL_SCHEMA, migrateControl, migrateDatabase, PluginMigrations, schemaOf } from '../../../runtime/storage/migrations.ts';
import { createUser } from '../../auth/fixtures.ts';
import { ADMIN, createDatabase, startService, type TestService } from '../../helpers/service.ts';

describe('auth-basic migrations', () => {
  let t: TestService;
  let db: string;
  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createUser(t, db, { loginId: 'kept', password: 'kept-secret-1', accessLevel: 'EDITOR' });
  });
  after(async () => t?.close());

  const ledger = async (schema: string) => (await t.service.storage.knex.raw(`select version from "${schema}".plugin_migrations where plugin = 'auth-basic' order by version`)).rows.map((r: { version: number }) => r.version);

  it('are the plugin\'s, counted apart from the core\'s', async () => {
    expect(await ledger(schemaOf(db))).to.deep.equal([1]);
    expect(await ledger(CONTROL_SCHEMA)).to.deep.equal([1]);
  });

  it('adopt the tables of an installation where the core made them, keeping every password', async () => {
    const knex = t.service.storage.knex;
    // As before the move: the tables are there, and no ledger entry of the plugin says so.
    await knex.raw(`delete from "${schemaOf(db)}".plugin_migrations where plugin = 'auth-basic'`);
    await knex.raw(`delete from "${CONTROL_SCHEMA}".plugin_migrations where plugin = 'auth-basic'`);
    const migrations = new PluginMigrations();
    migrations.database.set('auth-basic', manifest.migrations!.database!);
    migrations.control.set('auth-basic', manifest.migrations!.control!);
    await migrateControl(knex, migrations);
    await migrateDatabase(knex, db, migrations);
    expect(await ledger(schemaOf(db))).to.deep.equal([1]);
    expect(await ledger(CONTROL_SCHEMA)).to.deep.equal([1]);
    expect((await t.request(`/rest/${db}/schemes`, { auth: { loginId: 'kept', password: 'kept-secret-1' } })).status).to.equal(200);
    expect((await t.request(`/rest/${db}/schemes`, { auth: ADMIN })).status).to.equal(200);
  });

  it('are declared in the manifest: the core\'s own migrations make no password table', async () => {
    const knex = t.service.storage.knex;
    const bare = `bare_${Date.now().toString(36)}`;
    await migrateDatabase(knex, bare);
    try {
      const tables = await knex.raw(`select table_name from information_schema.tables where table_schema = ? order by table_name`, [schemaOf(bare)]);
      expect(tables.rows.map((r: { table_name: string }) => r.table_name)).to.include('objects').and.not.include('credentials');
    } finally {
      await knex.raw(`drop schema "${schemaOf(bare)}" cascade`);
    }
  });
});
