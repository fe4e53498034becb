import { expect } from 'chai';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { createTenant, createUser, expectNoSecretInLog, inTenant, secret } from '../auth/fixtures.ts';
import { upload } from '../plugins/profiles/fixtures.ts';

type Json = Record<string, any>;

describe('REST interface: deleting a tenant', () => {
  let t: TestService;
  let db: string;
  const boss = { loginId: 'boss', password: secret('bosses-Passwort-1') };
  const annotations = Buffer.from('Scheme:\n  customProperties:\n    costCenter:\n      baseType: STRING\n');

  const rowsOf = async (table: string, tenant: string) =>
    Number((await t.service.storage.knex.raw(`select count(*)::int as n from "${schemaOf(db)}".${table} where tenant = ?`, [tenant])).rows[0].n);
  const remove = (key: string, auth: { loginId: string; password: string } = ADMIN) => t.request(`/rest/${db}/tenants/${encodeURIComponent(key)}`, { method: 'DELETE', auth });

  /** A tenant with an administrator who has a password, an access key, the tenant's access rules, a profile and a query job. */
  async function furnished(label: string): Promise<{ tenant: Json; user: Json; key: string }> {
    const tenant = await createTenant(t, db, label);
    const user = await createUser(t, db, { ...boss, accessLevel: 'ADMINISTRATOR', tenant: label });
    const { key } = await (await t.request(`/rest/${db}/users/${user.id}/accessKeys`, { method: 'POST', headers: inTenant(label), json: {} })).json();
    expect((await t.request(`/rest/${db}/tenants/${label}/accessRules`, { method: 'PUT', json: [{ action: 'DENY' }] })).status).to.equal(200);
    expect((await upload(t, db, 'annotations', annotations, { as: boss })).status).to.equal(200);
    expect((await t.request(`/api/${db}/queries/download?format=JSON`, { method: 'POST', auth: boss, json: { sql: 'select label from tenant_view' } })).status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants`, { auth: boss })).status).to.equal(200);
    return { tenant, user, key };
  }

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
  });
  after(() => t.close());

  it('deletes a tenant that holds only its users, with them, their passwords and keys, its rules, profiles and query jobs', async () => {
    const { tenant, user, key } = await furnished('Leaving');
    for (const table of ['access_keys', 'access_rules', 'profiles', 'query_jobs']) expect(await rowsOf(table, tenant.id), table).to.equal(1);
    expect((await remove('Leaving')).status).to.equal(204);
    expect((await t.request(`/rest/${db}/tenants/Leaving`)).status).to.equal(404);
    for (const table of ['access_keys', 'access_rules', 'profiles', 'query_jobs']) expect(await rowsOf(table, tenant.id), table).to.equal(0);
    const credentials = await t.service.storage.knex.raw(`select count(*)::int as n from "${schemaOf(db)}".credentials where user_id = ?`, [user.id]);
    expect(credentials.rows[0].n).to.equal(0);
    // The user signed in a moment ago: nothing this instance remembers lets it, or its key, in again.
    expect((await t.request(`/rest/${db}/tenants`, { auth: boss })).status).to.equal(401);
    expect((await t.request(`/rest/${db}/schemes`, { auth: null, headers: { 'service-access-key': key } })).status).to.equal(401);
    const history = await t.service.storage.knex.raw(`select type from "${schemaOf(db)}".history where id = any(?) and operation = 'delete' order by type`, [[tenant.id, user.id]]);
    expect(history.rows).to.deep.equal([{ type: 'Tenant' }, { type: 'User' }]);
  });

  it('deletes by technical key too, and a tenant of that label can be made again, empty', async () => {
    const { tenant } = await furnished('Again');
    expect((await remove(tenant.id)).status).to.equal(204);
    const made = await createTenant(t, db, 'Again');
    expect(made.id).to.not.equal(tenant.id);
    expect(await (await t.request(`/rest/${db}/tenants/Again/accessRules`)).json()).to.deep.equal([]);
    expect((await t.request(`/rest/${db}/users`, { headers: inTenant('Again') }).then((r) => r.json())).total).to.equal(0);
  });

  it('refuses (409) a tenant that still holds objects, saying so, and keeps everything', async () => {
    const { tenant } = await furnished('Busy');
    expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', headers: inTenant('Busy'), json: { _type: 'Scheme', label: 'Kept' } })).status).to.equal(201);
    const r = await remove('Busy');
    expect(r.status).to.equal(409);
    expect(await r.json()).to.include({ statusCode: 409, method: 'DELETE', message: 'The tenant Busy cannot be deleted: it still holds objects other than its users.' });
    const de = await t.request(`/rest/${db}/tenants/Busy`, { method: 'DELETE', headers: { 'accept-language': 'de' } });
    expect((await de.json()).message).to.equal('Der Mandant Busy kann nicht gelöscht werden: Er enthält noch andere Objekte als seine Benutzer.');
    expect((await t.request(`/rest/${db}/tenants/Busy`)).status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants`, { auth: boss, headers: inTenant('Busy') })).status).to.equal(200);
    for (const table of ['access_keys', 'access_rules', 'profiles', 'query_jobs']) expect(await rowsOf(table, tenant.id), table).to.equal(1);
  });

  it('waits for a write under way into the tenant, and then refuses (409): no object is left in a deleted tenant', async function () {
    // The embedded database has one connection: a transaction held open by the test would stop the service.
    if (!process.env.SERVICE_TEST_DATABASE_URL) this.skip();
    const tenant = await createTenant(t, db, 'Racing');
    const knex = t.service.storage.knex;
    const trx = await knex.transaction();
    try {
      await trx.raw(
        `insert into "${schemaOf(db)}".objects (id, tenant, type, list, label, version, date_created, date_modified)
         values (gen_random_uuid(), ?, 'Scheme', 'schemes', 'Landing', 1, now(), now())`,
        [tenant.id as string],
      );
      const deleting = remove('Racing');
      await new Promise((resolve) => setTimeout(resolve, 300));
      await trx.commit();
      expect((await deleting).status).to.equal(409);
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
    expect((await t.request(`/rest/${db}/tenants/Racing`)).status).to.equal(200);
  });

  it('refuses (409) the default tenant, however it is named', async () => {
    const defaultTenant = (await t.service.databases.get(db))!.defaultTenant;
    for (const key of ['Default', defaultTenant]) {
      const r = await remove(key);
      expect(r.status, key).to.equal(409);
      expect((await r.json()).message).to.equal('The tenant Default is the default tenant of the database and cannot be deleted.');
    }
    expect((await t.request(`/rest/${db}/tenants/Default`)).status).to.equal(200);
  });

  it('refuses (403) anyone but a system administrator, its own tenant\'s administrator included', async () => {
    await createTenant(t, db, 'Guarded');
    const admin = { loginId: 'guard', password: secret('guards-Passwort-1') };
    await createUser(t, db, { ...admin, accessLevel: 'ADMINISTRATOR', tenant: 'Guarded' });
    for (const key of ['Guarded', 'Default']) expect((await remove(key, admin)).status, key).to.equal(403);
    expect((await t.request(`/rest/${db}/tenants`, { auth: admin })).status).to.equal(200);
  });

  it('deletes tenants by the same rules through the list: DELETE or a PUT that leaves them out refuses for the default tenant (409), in one transaction', async () => {
    await createTenant(t, db, 'Listed');
    await createUser(t, db, { loginId: 'listed', password: secret('listeds-Passwort-1'), tenant: 'Listed' });
    let r = await t.request(`/rest/${db}/tenants`, { method: 'DELETE' });
    expect(r.status).to.equal(409);
    // The first tenant that refuses says why (Busy, from above, still holds a scheme).
    const refusal = /^The tenant (Default is the default tenant of the database and cannot be deleted|Busy cannot be deleted: it still holds objects other than its users)\.$/;
    expect((await r.json()).message).to.match(refusal);
    r = await t.request(`/rest/${db}/tenants`, { method: 'PUT', json: [] });
    expect(r.status).to.equal(409);
    expect((await r.json()).message).to.match(refusal);
    expect((await t.request(`/rest/${db}/tenants/Listed`)).status).to.equal(200);
    expect((await t.request(`/rest/${db}/users`, { headers: inTenant('Listed') }).then((x) => x.json())).total).to.equal(1);
    // A PUT that keeps the default tenant and those holding objects deletes an empty one, with its users.
    const kept = (await (await t.request(`/rest/${db}/tenants`)).json())._embedded.tenants
      .filter((x: Json) => x.label !== 'Listed').map((x: Json) => ({ _type: 'Tenant', id: x.id, label: x.label }));
    r = await t.request(`/rest/${db}/tenants`, { method: 'PUT', json: kept });
    expect(r.status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants/Listed`)).status).to.equal(404);
    expect((await t.request(`/rest/${db}/users?loginId=listed`).then((x) => x.json())).total).to.equal(0);
  });

  it('writes no password to the log', () => {
    expectNoSecretInLog([boss]);
  });
});
