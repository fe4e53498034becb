/**
 * A database written by the version before the second edition of the
 * metamodel (issue 19: "A database created before this change keeps
 * working"). test/fixtures/previous-version/e089848.sql is that version's
 * whole database (control schema and the database `legacy`), made by
 * make.ts beside it through that version's REST interface. Each backend
 * loads it into a fresh database (a PostgreSQL database of its own, or a
 * PGlite data directory) and starts today's service on it, which migrates it
 * on start; then everything written then must read back, through REST and
 * the query views, under today's names, and take writes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { startService, type TestService } from '../helpers/service.ts';
import { rememberSecret } from '../helpers/secrets.ts';
import { ADMIN, ANNOTATIONS, DB, EDITOR, ids, PREVIOUS_COMMIT, PROFILE, TENANT_ADMIN } from '../fixtures/previous-version/model.ts';

const fixtures = new URL('../fixtures/previous-version/', import.meta.url);
const dump = readFileSync(new URL(`${PREVIOUS_COMMIT}.sql`, fixtures), 'utf8');
const accessKey = rememberSecret(JSON.parse(readFileSync(new URL(`${PREVIOUS_COMMIT}.json`, fixtures), 'utf8')).accessKey, 'access key');
for (const c of [ADMIN, EDITOR, TENANT_ADMIN]) rememberSecret(c.password, 'password');

/** Loads the dump into a database of its own; returns the service's storage settings and how to remove it. */
async function loadDump(): Promise<{ env: Record<string, string>; remove(): Promise<void> }> {
  const serverUrl = process.env.SERVICE_TEST_DATABASE_URL;
  if (serverUrl) {
    const name = `prev_${randomBytes(4).toString('hex')}`;
    const adminClient = async (sql: string) => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try { await c.query(sql); } finally { await c.end(); }
    };
    await adminClient(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try { await client.query(dump); } finally { await client.end(); }
    return { env: { SERVICE_DATABASE_URL: url.toString() }, remove: () => adminClient(`drop database if exists ${name} with (force)`) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'previous-version-'));
  const lite = new PGlite(dir, { extensions: { pg_trgm } });
  await lite.exec(dump);
  await lite.close();
  return { env: { SERVICE_DATA_DIR: dir }, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

describe(`a database written by the previous version (${PREVIOUS_COMMIT})`, function () {
  this.timeout(120_000);
  let t: TestService;
  let removeDatabase: (() => Promise<void>) | undefined;
  const rest = `/rest/${DB}`;

  /** As the previous version's system administrator, whose password was set then (no SERVICE_ADMIN_PASSWORD now). */
  const get = async (path: string, o: { auth?: { loginId: string; password: string }; headers?: Record<string, string> } = {}) => {
    const r = await t.request(path, { auth: o.auth ?? ADMIN, headers: o.headers });
    expect(r.status, `${path}: ${r.status}`).to.equal(200);
    return r.json();
  };
  const send = (method: string, path: string, json: unknown, auth = ADMIN) => t.request(path, { method, json, auth });
  // As an administrator of the default tenant: a system administrator would see the other tenant too.
  const query = async (sql: string, auth = TENANT_ADMIN) => {
    const r = await t.request(`/api/${DB}/queries/download?format=JSON`, { method: 'PUT', json: { sql }, auth, headers: { 'accept-language': 'en' } });
    expect(r.status, await r.clone().text()).to.equal(200);
    return r.json() as Promise<Record<string, unknown>[]>;
  };

  before(async () => {
    const loaded = await loadDump();
    removeDatabase = loaded.remove;
    t = await startService({ ...loaded.env, SERVICE_ADMIN_USER: ADMIN.loginId, SERVICE_ADMIN_PASSWORD: undefined });
  });

  after(async () => {
    await t?.close();
    await removeDatabase?.();
  });

  it('is migrated on start: every core migration applied, the generated indexes made', async () => {
    const r = await t.service.storage.knex.raw(`select array_agg(version order by version) as versions from db_${DB}.schema_migrations`);
    expect(r.rows[0].versions).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    // The indexes today's metamodel asks for (generated/indexes.gen.sql) were made with the views.
    const indexes = await t.service.storage.knex.raw(`select indexname from pg_indexes where schemaname = 'db_${DB}' and indexname like '%\\_ref\\_%' order by 1`);
    const generated = [...t.service.generated.indexesSql.matchAll(/create index if not exists "(\w+)"/g)].map((m) => m[1]).sort();
    expect(generated).to.have.length(2);
    expect(indexes.rows.map((x: { indexname: string }) => x.indexname)).to.deep.equal(generated);
  });

  it('reads every object back by technical key and by business-key path, as written then', async () => {
    const scheme = await get(`${rest}/schemes/${ids.scheme}`);
    expect(scheme).to.include({ _type: 'Scheme', label: 'Sales', description: 'Sales data.', status: 'ACCEPTED', _version: 2 });
    expect(scheme.customProperties).to.deep.equal({ steward: 'Alice' });
    const name = await get(`${rest}/schemes/Sales/collections/Orders/classifiers/Customer/attributes/Name`);
    expect(name).to.include({ id: ids.customerName, _type: 'BusinessAttribute', dataType: 'STRING', required: 'MANDATORY', hasDomain: ids.customer });
    expect(await get(`${rest}/classifiers/${ids.order}`)).to.include({ label: 'Order', specializes: ids.customer });
    expect(await get(`${rest}/classifiers/${ids.customer}`)).to.include({ description: 'Someone who buys.', modifiedBy: EDITOR.loginId, _version: 2 });
    const literals = await get(`${rest}/enumerations/${ids.enumeration}/literals`);
    expect(literals._embedded.literals.map((l: { label: string; code: string }) => `${l.label}=${l.code}`)).to.deep.equal(['DE=de', 'FR=fr']);
    expect(await get(`${rest}/schemes/Sales/processings/Load%20orders`)).to.include({ id: ids.processing, _type: 'Processing' });
    const organization = await get(`${rest}/organizations/ACME`);
    expect(Object.keys(organization._links)).to.include.members(['organizations', 'persons', 'groups']);
    expect(await get(`${rest}/persons/${ids.person}`)).to.include({ label: 'Alice Smith', givenName: 'Alice', email: 'alice@example.org', agentOf: ids.organization });
    expect(await get(`${rest}/organizations/${ids.organization}/groups/Stewards`)).to.include({ id: ids.group });
    const attributions = await get(`${rest}/classifiers/${ids.customer}/attributedTo`);
    expect(attributions._embedded.attributedTo.map((a: Record<string, unknown>) => [a.id, a.attributedTo, a.role])).to.deep.equal([[ids.attribution, ids.person, 'Owner']]);
    expect((await t.request(`${rest}/classifiers/${ids.removed}`, { auth: ADMIN })).status).to.equal(404);
  });

  it('shows the derivation under today\'s names: derivedFrom/derivedTo on the derivation, lists and links on both attributes', async () => {
    const source = await get(`${rest}/attributes/${ids.customerName}`);
    const target = await get(`${rest}/attributes/${ids.orderCustomer}`);
    expect(source._links).to.have.property('derivedTo').and.not.to.have.property('derivedFrom');
    expect(target._links).to.have.property('derivedFrom').and.not.to.have.property('derivedTo');
    const derivedTo = (await get(`${rest}/attributes/${ids.customerName}/derivedTo`))._embedded.derivedTo;
    const derivedFrom = (await get(`${rest}/attributes/${ids.orderCustomer}/derivedFrom`))._embedded.derivedFrom;
    for (const list of [derivedTo, derivedFrom]) {
      expect(list).to.have.length(1);
      expect(list[0]).to.include({ id: ids.derivation, derivedFrom: ids.customerName, derivedTo: ids.orderCustomer });
      expect(list[0]).not.to.have.property('derivationFor');
    }
    // As of its creation, from history: the rename reached the versions kept too.
    const derivation = await get(`${rest}/derivations/${ids.derivation}`);
    const then = await get(`${rest}/derivations/${ids.derivation}?version=${derivation.dateCreated}`);
    expect(then).to.include({ derivedFrom: ids.customerName, derivedTo: ids.orderCustomer }).and.not.to.have.property('derivationFor');
  });

  it('answers the query views, derivations under today\'s columns', async () => {
    expect(await query(`select label, status, _type from scheme_view order by label`)).to.deep.equal([{ label: 'Sales', status: 'ACCEPTED', _type: 'Scheme' }]);
    expect(await query(`select label from attribute_view order by label`)).to.deep.equal([{ label: 'Customer name' }, { label: 'Id' }, { label: 'Name' }]);
    expect(await query(`select id, derived_from, derived_to from derivation_view`))
      .to.deep.equal([{ id: ids.derivation, derived_from: ids.customerName, derived_to: ids.orderCustomer }]);
    expect(await query(`select resource_id, name, value from customproperties_view`)).to.deep.equal([{ resource_id: ids.scheme, name: 'steward', value: 'Alice' }]);
    expect(await query(`select label, agent_of from person_view`)).to.deep.equal([{ label: 'Alice Smith', agent_of: ids.organization }]);
    expect(await query(`select login_id, access_level, is_person from user_view order by login_id`)).to.deep.equal([
      { login_id: EDITOR.loginId, access_level: 'EDITOR', is_person: ids.person },
      { login_id: TENANT_ADMIN.loginId, access_level: 'ADMINISTRATOR', is_person: null },
    ]);
  });

  it('keeps the history: versions, who changed what, the removal', async () => {
    const scheme = await get(`${rest}/schemes/${ids.scheme}/history`);
    const versions = scheme._embedded.history;
    expect(versions.map((v: { version: number; operation: string }) => `${v.version} ${v.operation}`)).to.deep.equal(['2 update', '1 create']);
    expect(versions[0].changes).to.include.members(['status']);
    const customer = (await get(`${rest}/classifiers/${ids.customer}/history`));
    const changes = (customer._embedded.history)[0];
    expect(changes).to.include({ changedBy: EDITOR.loginId });
    const removed = await get(`${rest}/classifiers/${ids.removed}/history`);
    expect((removed._embedded.history).map((v: { operation: string }) => v.operation)).to.deep.equal(['delete', 'create']);
    expect(await query(`select label, version from scheme_version_view`)).to.deep.equal([{ label: 'Sales', version: 2 }]);
  });

  it('signs in with the passwords and the access key of then, in their tenants', async () => {
    expect((await get(`${rest}/schemes/${ids.scheme}`, { auth: EDITOR })).label).to.equal('Sales');
    const byKey = await t.request(`${rest}/schemes/${ids.scheme}`, { auth: null, headers: { 'service-access-key': accessKey } });
    expect(byKey.status).to.equal(200);
    const users = await get(`${rest}/users`, { auth: TENANT_ADMIN });
    expect(users._embedded.users.map((u: { loginId: string }) => u.loginId).sort()).to.deep.equal([EDITOR.loginId, TENANT_ADMIN.loginId]);
    expect(await get(`${rest}/schemes/Sales`, { headers: { 'service-tenant': 'Other' } })).to.include({ id: ids.otherScheme });
  });

  it('serves the profiles uploaded then, byte for byte', async () => {
    for (const [name, text] of [['annotations', ANNOTATIONS], ['profile', PROFILE]]) {
      const r = await t.request(`/api/${DB}/profiles/${name}/download`, { auth: ADMIN });
      expect(r.status).to.equal(200);
      expect(await r.text()).to.equal(text);
    }
  });

  it('takes writes: new objects, a derivation between assets of other types, a declared status and its label, custom properties checked', async () => {
    let r = await send('POST', `${rest}/classifiers/${ids.customer}/attributes`, { _type: 'BusinessAttribute', label: 'Email', dataType: 'STRING' }, EDITOR);
    expect(r.status, await r.clone().text()).to.equal(201);
    r = await send('POST', `${rest}/classifiers/${ids.order}/derivedTo`, { _type: 'Derivation', derivedTo: ids.enumeration, qualifier: 'lookup' }, EDITOR);
    expect(r.status, await r.clone().text()).to.equal(201);
    const enumeration = await get(`${rest}/enumerations/${ids.enumeration}`);
    expect(enumeration._links).to.have.property('derivedFrom');
    r = await send('PATCH', `${rest}/schemes/${ids.scheme}`, { customProperties: { steward: 'Bob' } });
    expect(r.status).to.equal(200);
    r = await send('PATCH', `${rest}/schemes/${ids.scheme}`, { customProperties: { stewart: 'Bob' } });
    expect(r.status).to.equal(400);
    // The profile of then declares REVIEWDCC (decisions §7.2): allowed now, labelled in the views.
    r = await send('PATCH', `${rest}/classifiers/${ids.order}`, { status: 'REVIEWDCC' }, TENANT_ADMIN);
    expect(r.status, await r.clone().text()).to.equal(200);
    expect(await query(`select label, status, status_label from classifier_view where status = 'REVIEWDCC'`))
      .to.deep.equal([{ label: 'Order', status: 'REVIEWDCC', status_label: 'Under DCC review' }]);
    r = await send('DELETE', `${rest}/attributes/${ids.orderCustomer}`, undefined);
    expect(r.status).to.equal(204);
    expect((await get(`${rest}/attributes/${ids.customerName}`))._links).not.to.have.property('derivedTo');
  });
});
