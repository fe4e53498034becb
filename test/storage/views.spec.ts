import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import knexLib, { type Knex } from 'knex';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { resolveMetamodel } from '../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../runtime/metamodel/standard.ts';
import { viewsEmitter } from '../../generator/emitters/views.ts';
import { migrateDatabase, PluginMigrations, schemaOf } from '../../runtime/storage/migrations.ts';
import { manifest as authBasic } from '../../plugins/auth-basic/index.ts';
import '../../runtime/storage/connection.ts'; // the service's type parsers (bigint as number)
import { applyViews, readViewsSql } from '../../runtime/storage/views.ts';

const model = resolveMetamodel(readStandardMetamodel());
const viewsSql = viewsEmitter.emit(model)[0].content;

interface Backend {
  name: string;
  open(): Promise<{ knex: Knex; close(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'PostgreSQL',
    async open() {
      const knex = knexLib({ client: 'pg', connection: process.env.SERVICE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' });
      return { knex, close: () => knex.destroy() };
    },
  },
  {
    name: 'PGlite',
    async open() {
      // The service's threads load pg_trgm (search's index, runtime/storage/pglite/worker.mjs); the migrations need it.
      const pglite = new PGlite({ extensions: { pg_trgm } });
      await pglite.waitReady;
      const cfg = createPgConfig(pglite);
      const knex = knexLib({ client: 'pg', connection: () => cfg as Knex.StaticConnectionConfig, pool: { min: 1, max: 1 } });
      return { knex, close: async () => { await knex.destroy(); await pglite.close(); } };
    },
  },
];

const tenantA = randomUUID();
const tenantB = randomUUID();
const ms = (iso: string) => Date.parse(iso);
const t1 = '2024-01-01T00:00:00.000Z';
const t2 = '2024-02-01T00:00:00.000Z';
const t3 = '2024-03-01T00:00:00.000Z';

interface Fixture {
  id: string; tenant: string; type: string; list: string; label: string;
  parentId?: string; status?: string; props?: Record<string, unknown>; custom?: Record<string, unknown>;
}

const organization: Fixture = { id: randomUUID(), tenant: tenantA, type: 'Organization', list: 'organizations', label: 'Sales' };
const schemeA: Fixture = { id: randomUUID(), tenant: tenantA, type: 'Scheme', list: 'schemes', label: 'Orders', custom: { steward: 'Alice' } };
const schemeB: Fixture = { id: randomUUID(), tenant: tenantB, type: 'Scheme', list: 'schemes', label: 'Invoices', status: 'ACCEPTED' };
const classifier: Fixture = { id: randomUUID(), tenant: tenantA, type: 'Classifier', list: 'classifiers', label: 'Customer', parentId: schemeA.id };
const attribute: Fixture = {
  id: randomUUID(), tenant: tenantA, type: 'BusinessAttribute', list: 'attributes', label: 'Name', parentId: classifier.id,
  props: { hasDomain: classifier.id, identifying: true, minCardinality: 1, required: 'MANDATORY' },
};
const person: Fixture = {
  id: randomUUID(), tenant: tenantA, type: 'Person', list: 'persons', label: 'Ann Lee', parentId: organization.id,
  props: { givenName: 'Ann', familyName: 'Lee', agentOf: organization.id },
};
const user: Fixture = { id: randomUUID(), tenant: tenantA, type: 'User', list: 'users', label: 'ann', props: { loginId: 'ann', accessLevel: 'EDITOR' } };
const current = [organization, schemeA, schemeB, classifier, attribute, person, user];
/** A scheme that existed from t1 and was deleted at t3. */
const deleted: Fixture = { id: randomUUID(), tenant: tenantA, type: 'Scheme', list: 'schemes', label: 'Gone' };

/** The object as the REST interface renders it, as history keeps it. */
function restRow(f: Fixture, version: number, label = f.label) {
  return {
    _type: f.type, id: f.id, _version: version, tenant: f.tenant, label, status: f.status ?? 'WORKING',
    parentId: f.parentId ?? null, modelId: null, createdBy: 'ann', dateCreated: ms(t1), modifiedBy: 'ann', dateModified: ms(t1),
    ...f.props, ...(f.custom ? { customProperties: f.custom } : {}),
  };
}

async function insertObject(knex: Knex, schema: string, f: Fixture) {
  await knex.withSchema(schema).table('objects').insert({
    id: f.id, tenant: f.tenant, type: f.type, parent_id: f.parentId ?? null, list: f.list, label: f.label,
    status: f.status ?? 'WORKING', version: 1, created_by: 'ann', date_created: '2024-01-02T03:04:05.678Z',
    modified_by: 'ann', date_modified: t2, props: JSON.stringify(f.props ?? {}), custom: JSON.stringify(f.custom ?? {}),
  });
}

async function insertHistory(knex: Knex, schema: string, f: Fixture, version: number, operation: string,
  validFrom: string, validTo: string | null, label = f.label) {
  await knex.withSchema(schema).table('history').insert({
    id: f.id, version, tenant: f.tenant, type: f.type, parent_id: f.parentId ?? null, list: f.list, operation,
    valid_from: validFrom, valid_to: validTo, changed_by: 'ann', row: JSON.stringify(restRow(f, version, label)),
  });
}

async function insertFixtures(knex: Knex, schema: string) {
  for (const f of current) await insertObject(knex, schema, f);
  await knex.withSchema(schema).table('credentials').insert({ user_id: user.id, hash: 'secret-hash' });
  await insertHistory(knex, schema, schemeA, 1, 'create', t1, t2, 'Orders (draft)');
  await insertHistory(knex, schema, schemeA, 2, 'update', t2, null);
  await insertHistory(knex, schema, deleted, 1, 'create', t1, t3);
  await insertHistory(knex, schema, deleted, 2, 'delete', t3, null);
}

for (const backend of backends) {
  describe(`SQL views of the query interface (${backend.name})`, () => {
    const db = `views_test_${randomBytes(6).toString('hex')}`;
    const schema = schemaOf(db);
    let knex: Knex;
    let close: () => Promise<void>;

    /** Runs a statement as the query interface would: settings local to one transaction. */
    async function query(sql: string, settings: Record<string, string> = {}) {
      return knex.transaction(async (trx) => {
        await trx.raw(`set local search_path to "${schema}"`);
        for (const [name, value] of Object.entries(settings)) await trx.raw('select set_config(?, ?, true)', [name, value]);
        return (await trx.raw(sql)).rows as Record<string, unknown>[];
      });
    }
    const labels = async (view: string, settings: Record<string, string>) =>
      (await query(`select label from ${view} order by label`, settings)).map((r) => r.label);

    before(async () => {
      ({ knex, close } = await backend.open());
      // The passwords' table is auth-basic's, made by its migrations as a running service makes it.
      const plugins = new PluginMigrations();
      plugins.database.set(authBasic.name, authBasic.migrations!.database!);
      await migrateDatabase(knex, db, plugins);
      await applyViews(knex, db, viewsSql);
      await insertFixtures(knex, schema);
    });

    after(async () => {
      await knex?.raw(`drop schema if exists "${schema}" cascade`);
      await close?.();
    });

    it('shows only the tenants named in service.tenants, none when unset', async () => {
      expect(await labels('scheme_view', { 'service.tenants': tenantA })).to.deep.equal(['Orders']);
      expect(await labels('scheme_view', { 'service.tenants': `${tenantA}, ${tenantB}` })).to.deep.equal(['Invoices', 'Orders']);
      expect(await labels('scheme_view', {})).to.deep.equal([]);
      expect(await labels('scheme_view', { 'service.tenants': '' })).to.deep.equal([]);
    });

    it('applies the tenant filter before the caller\'s conditions, so an error reveals no other tenant\'s row', async () => {
      const probe = `select label from scheme_view where 1 / (case when label = 'Invoices' then 0 else 1 end) = 1`;
      expect(await query(probe, { 'service.tenants': tenantA })).to.deep.equal([{ label: 'Orders' }]);
    });

    it('leaves the settings behind when the transaction ends', async () => {
      await query('select 1', { 'service.tenants': tenantA });
      expect(await labels('scheme_view', {})).to.deep.equal([]);
    });

    it('types the columns of attribute_view', async () => {
      const rows = await query(
        `select column_name, data_type from information_schema.columns
         where table_schema = current_schema() and table_name = 'attribute_view'`,
      );
      const types = Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
      expect(types).to.include({
        id: 'uuid', type: 'text', version: 'bigint', has_domain: 'uuid', parent_id: 'uuid', has_range: 'uuid',
        date_created: 'timestamp without time zone', identifying: 'boolean', min_cardinality: 'bigint',
        required: 'text', status_label: 'text',
      });
    });

    it('projects properties, the owner reference and creation time in UTC', async () => {
      const [row] = await query(
        `select has_domain, parent_id, identifying, min_cardinality, required, date_created::text as date_created
         from attribute_view`,
        { 'service.tenants': tenantA, timezone: 'Europe/Berlin' },
      );
      expect(row).to.deep.equal({
        has_domain: classifier.id, parent_id: classifier.id, identifying: true, min_cardinality: 1,
        required: 'MANDATORY', date_created: '2024-01-02 03:04:05.678',
      });
    });

    it('never shows a password or the credentials', async () => {
      const columns = await query(`select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'user_view'`);
      expect(columns.map((r) => r.column_name)).to.include('login_id').and.not.include('password');
      const usage = await query(`select view_name from information_schema.view_table_usage where view_schema = current_schema() and table_name = 'credentials'`);
      expect(usage).to.deep.equal([]);
      expect(viewsSql).not.to.match(/credentials|password/i);
    });

    it('labels the status in service.language, English by default', async () => {
      const statusLabel = async (settings: Record<string, string>) =>
        (await query(`select status_label from scheme_view`, { 'service.tenants': tenantA, ...settings }))[0].status_label;
      expect(await statusLabel({})).to.equal('Working');
      expect(await statusLabel({ 'service.language': 'en' })).to.equal('Working');
      expect(await statusLabel({ 'service.language': 'de' })).to.equal('In Bearbeitung');
    });

    it('reads the version valid at service.version, the current one without it', async () => {
      const between = String(ms('2024-01-15T00:00:00Z'));
      expect(await labels('scheme_version_view', { 'service.tenants': tenantA, 'service.version': between }))
        .to.deep.equal(['Gone', 'Orders (draft)']);
      expect(await labels('scheme_version_view', { 'service.tenants': tenantA })).to.deep.equal(['Orders']);
      expect(await labels('scheme_version_view', { 'service.tenants': tenantA, 'service.version': String(ms(t3)) }))
        .to.deep.equal(['Orders']);
      expect(await labels('scheme_version_view', { 'service.version': between })).to.deep.equal([]);
    });

    it('renders epoch milliseconds of history rows as UTC timestamps', async () => {
      const [row] = await query(`select date_created::text as date_created, version from scheme_version_view`, { 'service.tenants': tenantA });
      expect(row).to.deep.equal({ date_created: '2024-01-01 00:00:00', version: 2 });
    });

    it('shows every concrete subtype in the view of an abstract type', async () => {
      const rows = await query(`select type, label from asset_view order by label`, { 'service.tenants': tenantA });
      expect(rows.map((r) => r.type)).to.include.members(['Scheme', 'Person', 'Organization', 'BusinessAttribute']);
      expect(rows.map((r) => r.type)).not.to.include('User');
    });

    it('shows custom properties one row per key', async () => {
      expect(await query(`select resource_id, name, value from customproperties_view`, { 'service.tenants': tenantA }))
        .to.deep.equal([{ resource_id: schemeA.id, name: 'steward', value: 'Alice' }]);
      expect(await query(`select name from customproperties_view`, { 'service.tenants': tenantB })).to.deep.equal([]);
      expect(await query(`select resource_id, value from customproperties_version_view`, { 'service.tenants': tenantA }))
        .to.deep.equal([{ resource_id: schemeA.id, value: 'Alice' }]);
    });

    it('applies again over existing views, from the generated file', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'views-'));
      try {
        // A question mark must reach the database as written, not as a knex binding.
        writeFileSync(join(dir, 'views.gen.sql'), `${viewsSql}\ncomment on view scheme_view is 'Schemes?';\n`);
        await applyViews(knex, db, readViewsSql(dir));
      } finally {
        rmSync(dir, { recursive: true });
      }
      expect(await labels('scheme_view', { 'service.tenants': tenantA })).to.deep.equal(['Orders']);
      const [comment] = await query(`select obj_description('scheme_view'::regclass) as comment`);
      expect(comment.comment).to.equal('Schemes?');
    });

    it('refuses a database name that is not one', async () => {
      for (const name of ['Views', 'x"; drop schema public; --', '']) {
        let error: unknown;
        await applyViews(knex, name, viewsSql).catch((e) => { error = e; });
        expect(error, name).to.be.instanceOf(Error);
      }
    });
  });
}

describe('views emitter', () => {
  it('emits one file with the header first, the same every time', () => {
    const [file] = viewsEmitter.emit(model);
    expect(file.path).to.equal('views.gen.sql');
    expect(file.content.split('\n')[0]).to.equal('-- Generated by generator/emitters/views.ts from the meta database; do not edit.');
    expect(viewsEmitter.emit(model)[0].content).to.equal(file.content);
  });

  it('names a current and a version view per plural, as the product decisions list them', () => {
    const names = [...viewsSql.matchAll(/^create view (\w+)/gm)].map((m) => m[1]);
    for (const name of ['scheme', 'collection', 'classifier', 'attribute', 'enumeration', 'literal', 'organization', 'person',
      'group', 'asset', 'activity', 'processing', 'attribution', 'tenant', 'user', 'derivation', 'customproperties']) {
      expect(names).to.include.members([`${name}_view`, `${name}_version_view`]);
    }
    expect(names).to.deep.equal([...names].sort());
  });
});
