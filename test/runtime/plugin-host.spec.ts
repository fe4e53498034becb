/** The extension points the plugin host offers: /api/<db> routes, REST extensions, plugin tables, view hooks, custom-property checks. */
import { expect } from 'chai';
import { createError } from '../../runtime/errors.ts';
import type { PluginManifest } from '../../runtime/plugins.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createUser } from '../auth/fixtures.ts';

const viewsSeen: string[] = [];

const probe: PluginManifest = {
  name: 'test-probe', host: '^1',
  migrations: {
    database: [
      `create table $S.probe_notes (id serial primary key, note text not null)`,
      `alter table $S.probe_notes add column author text`,
    ],
    control: [`create table if not exists $S.probe_control (id integer primary key)`],
  },
  register(host) {
    host.api.get('/probe/:word', (ctx) => {
      ctx.body = { word: ctx.params.word, db: ctx.state.db.name, loginId: ctx.state.principal.loginId };
    });
    host.api.post('/probe', async (ctx) => {
      await host.jsonBody(ctx, 'READ_ONLY');
      ctx.body = { echo: ctx.request.body };
    });
    host.addRestExtension(({ ctx, segments, principal }) => {
      if (segments[0] !== 'probes') return false;
      if (segments[1] === 'fail') throw createError('FORBIDDEN');
      ctx.body = { segments, method: ctx.method, body: ctx.request.body ?? null, loginId: principal.loginId };
      return true;
    });
    host.afterViews(async (_q, db) => {
      viewsSeen.push(db);
    });
    host.setCustomPropertiesCheck(async ({ type, state }) => {
      const custom = state.customProperties as Record<string, unknown> | undefined;
      if (!custom) return [];
      return Object.keys(custom).filter((name) => name !== 'allowed').map((name) => ({ path: `customProperties.${name}`, key: 'unknownProperty', params: { type: type.name } }));
    });
  },
};

describe('plugin host', () => {
  let t: TestService;
  let db: string;
  before(async () => {
    // The probe's custom-properties check stands in for the profiles plugin's.
    t = await startService({}, { plugins: [probe], without: ['profiles'] });
    db = await createDatabase(t);
  });
  after(async () => t?.close());

  it('routes /api/<db>/… to plugin routes after authentication, with the principal and database on the request', async () => {
    const r = await t.request(`/api/${db}/probe/hello`);
    expect(r.status).to.equal(200);
    expect(await r.json()).to.deep.equal({ word: 'hello', db, loginId: 'admin' });
    expect((await t.request(`/api/${db}/probe/hello`, { auth: null })).status).to.equal(401);
  });

  it('answers 404 in the error format for an /api/<db> path no plugin serves, and for an unknown database only after authentication', async () => {
    const r = await t.request(`/api/${db}/nothing/here`);
    expect(r.status).to.equal(404);
    expect((await r.json()).statusCode).to.equal(404);
    expect((await t.request(`/api/no_such_db/probe/x`, { auth: null })).status).to.equal(401);
    expect((await t.request(`/api/no_such_db/probe/x`)).status).to.equal(404);
  });

  it('parses JSON bodies for plugin routes that ask for it, with the REST interface\'s errors', async () => {
    const ok = await t.request(`/api/${db}/probe`, { method: 'POST', json: { a: 1 } });
    expect(await ok.json()).to.deep.equal({ echo: { a: 1 } });
    const wrongType = await t.request(`/api/${db}/probe`, { method: 'POST', body: 'a', headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).to.equal(415);
    const broken = await t.request(`/api/${db}/probe`, { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
    expect(broken.status).to.equal(400);
  });

  it('hands REST paths to an extension before the generic handlers, with the body parsed, and lets it refuse', async () => {
    const r = await t.request(`/rest/${db}/probes/a%20b`, { method: 'PUT', json: { x: 1 } });
    expect(r.status).to.equal(200);
    expect(await r.json()).to.deep.equal({ segments: ['probes', 'a b'], method: 'PUT', body: { x: 1 }, loginId: 'admin' });
    expect((await t.request(`/rest/${db}/probes/fail`)).status).to.equal(403);
    // Paths the extension does not claim still reach the generic handlers.
    expect((await t.request(`/rest/${db}/schemes`)).status).to.equal(200);
  });

  it('creates plugin tables in new databases, counts each plugin\'s migrations apart, and runs the views hook', async () => {
    const knex = t.service.storage.knex;
    const columns = await knex.raw(`select column_name from information_schema.columns where table_schema = ? and table_name = 'probe_notes' order by column_name`, [schemaOf(db)]);
    expect(columns.rows.map((c: { column_name: string }) => c.column_name)).to.deep.equal(['author', 'id', 'note']);
    const applied = await knex.raw(`select plugin, version from "${schemaOf(db)}".plugin_migrations where plugin = 'test-probe' order by version`);
    expect(applied.rows).to.deep.equal([{ plugin: 'test-probe', version: 1 }, { plugin: 'test-probe', version: 2 }]);
    const control = await knex.raw(`select 1 from information_schema.tables where table_schema = 'service' and table_name = 'probe_control'`);
    expect(control.rows).to.have.length(1);
    expect(viewsSeen).to.include(db);
  });

  it('asks the custom-properties check on every REST write and refuses what it reports, writing nothing', async () => {
    const ok = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Custom', customProperties: { allowed: 'yes' } } });
    expect(ok.status).to.equal(201);
    expect((await ok.json()).customProperties).to.deep.equal({ allowed: 'yes' });
    const bad = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Typo', customProperties: { alowed: 'yes' } } });
    expect(bad.status).to.equal(400);
    expect((await bad.json()).violations.map((v: { path: string }) => v.path)).to.deep.equal(['customProperties.alowed']);
    expect((await t.request(`/rest/${db}/schemes/Typo`)).status).to.equal(404);
  });

  it('refuses a second custom-properties check at start', async () => {
    const second: PluginManifest = { name: 'test-probe-2', host: '^1', register: (host) => host.setCustomPropertiesCheck(async () => []) };
    let error: unknown;
    try {
      const other = await startService({}, { plugins: [probe, second], without: ['profiles'] });
      await other.close();
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.match(/custom-properties check/);
  });

  it('runs plugin migrations on existing databases at start', async function () {
    // An in-memory embedded database does not outlive its service: this needs PostgreSQL.
    if (!process.env.SERVICE_TEST_DATABASE_URL) this.skip();
    const later: PluginManifest = { name: 'test-later', host: '^1', migrations: { database: [`create table $S.later_notes (id integer)`] }, register: () => undefined };
    const first = await startService();
    const name = await createDatabase(first);
    await first.close();
    const second = await startService({}, { plugins: [later] });
    try {
      const r = await second.service.storage.knex.raw(`select 1 from information_schema.tables where table_schema = ? and table_name = 'later_notes'`, [schemaOf(name)]);
      expect(r.rows).to.have.length(1);
    } finally {
      await second.close();
    }
  });

  it('lets an editor use a plugin route only as far as the plugin allows (authentication is the host\'s, authorization the plugin\'s)', async () => {
    await createUser(t, db, { loginId: 'probe-editor', password: 'editor-secret-1', accessLevel: 'EDITOR' });
    const r = await t.request(`/api/${db}/probe/x`, { auth: { loginId: 'probe-editor', password: 'editor-secret-1' } });
    expect(r.status).to.equal(200);
    expect((await r.json()).loginId).to.equal('probe-editor');
  });
});
