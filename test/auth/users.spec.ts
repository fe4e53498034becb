import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createTenant, createUser, expectNoSecretInLog, inTenant, secret, storedCredential, type Credentials } from './fixtures.ts';

/** Every property name anywhere in a JSON value. */
function propertyNames(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(propertyNames);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...propertyNames(v)]);
  return [];
}

describe('users as REST objects', () => {
  let t: TestService;
  let db: string;
  let second: Record<string, unknown>;
  const bob = { loginId: 'bob', password: secret('bobs-Passwort-ÄÖÜ-1') };
  const signedIn: Credentials[] = [bob];

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    second = await createTenant(t, db, 'Second');
  });
  after(() => t.close());

  it('creates a user in the login tenant, chosen with service-tenant, and the user can sign in there', async () => {
    const inDefault = await createUser(t, db, { ...bob, accessLevel: 'EDITOR' });
    const carol = { loginId: 'carol', password: secret('carols-Passwort-2') };
    signedIn.push(carol);
    const inSecond = await createUser(t, db, { ...carol, tenant: 'Second' });
    expect(inDefault).to.include({ _type: 'User', loginId: 'bob', label: 'bob', accessLevel: 'EDITOR' });
    expect(inDefault.tenant).to.not.equal(second.id);
    expect(inSecond.tenant).to.equal(second.id);
    const r = await t.request(`/rest/${db}/tenants`, { auth: carol });
    expect(r.status).to.equal(200);
    expect((await r.json())._embedded.tenants.map((x: { label: string }) => x.label)).to.deep.equal(['Second']);
  });

  it('never returns the password: not on create, read, list, change, nor as of an earlier version', async () => {
    const dave = { loginId: 'dave', password: secret('daves-Passwort-3') };
    const created = await createUser(t, db, dave);
    const self = `/rest/${db}/users/${created.id}`;
    const bodies: unknown[] = [created];
    const before = Date.now();
    for (const [method, json] of [['PATCH', { password: secret('daves-Passwort-4') }], ['PUT', { _type: 'User', loginId: 'dave', password: secret('daves-Passwort-5') }]] as const) {
      const r = await t.request(self, { method, json });
      expect(r.status, method).to.equal(200);
      bodies.push(await r.json());
    }
    for (const path of [self, `/rest/${db}/users`, `${self}?version=${before}`, `${self}?version=${Date.now()}`, `/rest/${db}/users?version=${Date.now()}`]) {
      const r = await t.request(path);
      expect(r.status, path).to.equal(200);
      bodies.push(await r.json());
    }
    for (const body of bodies) {
      expect(propertyNames(body)).to.not.include('password');
      expect(JSON.stringify(body)).to.not.match(/Passwort|argon2/);
    }
  });

  it('keeps the password out of the history rows', async () => {
    const r = await t.service.storage.knex.raw(`select row::text as row from "db_${db}".history where type = 'User'`);
    expect(r.rows.length).to.be.greaterThan(0);
    for (const { row } of r.rows) expect(row).to.not.match(/password|Passwort|argon2/);
  });

  it('filters users by loginId', async () => {
    await createUser(t, db, { loginId: 'erin', password: secret('erins-Passwort-6') });
    const r = await t.request(`/rest/${db}/users?loginId=erin`);
    expect(r.status).to.equal(200);
    const list = await r.json();
    expect(list.total).to.equal(1);
    expect(list._embedded.users.map((u: { loginId: string }) => u.loginId)).to.deep.equal(['erin']);
    expect((await t.request(`/rest/${db}/users?password=x`)).status).to.equal(400);
    expect((await t.request(`/rest/${db}/users?nonsense=x`)).status).to.equal(400);
  });

  for (const method of ['PATCH', 'PUT'] as const) {
    it(`takes a password change by ${method} into effect at once, though the old password was just remembered`, async () => {
      const loginId = `change${method.toLowerCase()}`;
      const old = { loginId, password: secret(`old-Passwort-${method}`) };
      const changed = { loginId, password: secret(`new-Passwort-${method}`) };
      signedIn.push(old, changed);
      const user = await createUser(t, db, old);
      expect((await t.request(`/rest/${db}/tenants`, { auth: old })).status).to.equal(200);
      expect((await t.request(`/rest/${db}/tenants`, { auth: old })).status).to.equal(200);
      const json = method === 'PATCH' ? { password: changed.password } : { _type: 'User', loginId, password: changed.password };
      const r = await t.request(`/rest/${db}/users/${user.id}`, { method, json });
      expect(r.status).to.equal(200);
      expect((await t.request(`/rest/${db}/tenants`, { auth: old })).status).to.equal(401);
      expect((await t.request(`/rest/${db}/tenants`, { auth: changed })).status).to.equal(200);
    });
  }

  it('keeps the password when a user is written back without one (it is never read, so never replaced)', async () => {
    const frank = { loginId: 'frank', password: secret('franks-Passwort-7') };
    const user = await createUser(t, db, frank);
    const read = await (await t.request(`/rest/${db}/users/${user.id}`)).json();
    const r = await t.request(`/rest/${db}/users/${user.id}`, { method: 'PUT', json: { ...read, givenName: 'Frank' } });
    expect(r.status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants`, { auth: frank })).status).to.equal(200);
  });

  it('refuses a password shorter than 8 characters or not a string, with a violation on password and nothing stored', async () => {
    for (const password of ['kurz', 12345678, true]) {
      const r = await t.request(`/rest/${db}/users`, { method: 'POST', json: { _type: 'User', loginId: 'grace', password } });
      expect(r.status, String(password)).to.equal(400);
      expect((await r.json()).violations.map((v: { path: string }) => v.path)).to.deep.equal(['password']);
    }
    const list = await (await t.request(`/rest/${db}/users`)).json();
    expect(list._embedded.users.map((u: { loginId: string }) => u.loginId)).to.not.include('grace');
  });

  it('ends the sign-in of a deleted user at once and removes its credential', async () => {
    const heidi = { loginId: 'heidi', password: secret('heidis-Passwort-8') };
    const user = await createUser(t, db, heidi);
    expect((await t.request(`/rest/${db}/tenants`, { auth: heidi })).status).to.equal(200);
    expect((await t.request(`/rest/${db}/users/${user.id}`, { method: 'DELETE' })).status).to.equal(204);
    expect((await t.request(`/rest/${db}/tenants`, { auth: heidi })).status).to.equal(401);
    expect(await storedCredential(t, db, user.id as string)).to.equal(undefined);
  });

  it('lets no user without a password sign in, whatever password is sent', async () => {
    await createUser(t, db, { loginId: 'ivan' });
    for (const password of ['', 'ivan', 'null', 'undefined']) {
      expect((await t.request(`/rest/${db}/tenants`, { auth: { loginId: 'ivan', password } })).status).to.equal(401);
    }
  });

  it('assigns neither of two users that share a login ID in one tenant', async () => {
    const twin = { loginId: 'twin', password: secret('twins-Passwort-9') };
    await createUser(t, db, twin);
    // The business key is the label, so a label of its own lets a second user carry the login ID.
    const second = await t.request(`/rest/${db}/users`, { method: 'POST', json: { _type: 'User', ...twin, label: 'twin (2)' } });
    const signIn = await t.request(`/rest/${db}/tenants`, { auth: twin });
    if (second.status === 201) expect(signIn.status).to.equal(401);
    else expect([second.status, signIn.status]).to.deep.equal([409, 200]);
  });

  it('creates users in the tenant of the login, not in one named in the payload', async () => {
    const r = await t.request(`/rest/${db}/users`, { method: 'POST', headers: inTenant('Second'), json: { _type: 'User', loginId: 'judy', tenant: '00000000-0000-0000-0000-000000000000' } });
    expect(r.status).to.equal(201);
    expect((await r.json()).tenant).to.equal(second.id);
  });

  it('writes no password to the log', () => {
    expectNoSecretInLog(signedIn);
  });
});
