import { expect } from 'chai';
import { ADMIN, basic, createDatabase, startService, uniqueName, type TestService } from '../helpers/service.ts';
import { createUser, secret } from './fixtures.ts';

describe('administration of databases (/api/admin/databases)', () => {
  let t: TestService;
  let db: string;
  const dbAdmin = { loginId: 'dbadmin', password: secret('dbadmin-Passwort-1') };

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createUser(t, db, { ...dbAdmin, accessLevel: 'ADMINISTRATOR' });
  });
  after(() => t.close());

  it('creates a database for a system administrator: 201 with Location, then 409 for the same name', async () => {
    const name = uniqueName();
    let r = await t.request('/api/admin/databases', { method: 'POST', json: { name } });
    expect(r.status).to.equal(201);
    expect(await r.json()).to.deep.equal({ name });
    expect(r.headers.get('location')).to.equal(`${t.url}/api/admin/databases/${name}`);
    r = await t.request('/api/admin/databases', { method: 'POST', json: { name } });
    expect(r.status).to.equal(409);
    expect((await r.json()).statusCode).to.equal(409);
  });

  it('forgets remembered sign-ins of a dropped database, even when one of its name comes back at once', async () => {
    const name = await createDatabase(t);
    const old = { loginId: 'comeback', password: secret('comeback-Passwort-1') };
    await createUser(t, name, { ...old, accessLevel: 'EDITOR' });
    expect((await t.request(`/rest/${name}/schemes`, { auth: old })).status).to.equal(200);
    expect((await t.request(`/api/admin/databases/${name}`, { method: 'DELETE' })).status).to.equal(204);
    // No user is written afterwards, which would also make the sign-in be looked up again.
    await createDatabase(t, name);
    expect((await t.request(`/rest/${name}/schemes`, { auth: old })).status).to.equal(401);
  });

  it('gives a new database exactly one tenant, the default tenant labelled Default', async () => {
    const r = await t.request(`/rest/${db}/tenants`);
    const list = await r.json();
    expect(list._embedded.tenants.map((x: { label: string }) => x.label)).to.deep.equal(['Default']);
  });

  for (const name of ['Bad-Name', '1abc', 'a'.repeat(64), '', 'a b', 'café', '_abc', 'ABC']) {
    it(`refuses the name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}… (${name.length})` : name)} with 400 and a violation on name`, async () => {
      const r = await t.request('/api/admin/databases', { method: 'POST', json: { name } });
      expect(r.status).to.equal(400);
      expect((await r.json()).violations.map((v: { path: string }) => v.path)).to.deep.equal(['name']);
    });
  }

  it('refuses a payload without a string name with 400', async () => {
    for (const json of [{}, { name: 42 }, { name: null }, ['x']]) {
      const r = await t.request('/api/admin/databases', { method: 'POST', json });
      expect(r.status, JSON.stringify(json)).to.equal(400);
    }
  });

  it('accepts a name of 63 characters, the longest allowed', async () => {
    const name = `l${uniqueName().slice(3)}`.padEnd(63, '9');
    expect(name).to.have.length(63);
    await createDatabase(t, name);
    const r = await t.request(`/rest/${name}/schemes`);
    expect(r.status).to.equal(200);
  });

  // db_<name> is longer than PostgreSQL's 63-byte identifiers for names over 60 characters.
  it('keeps two databases apart whose names share their first 60 characters', async () => {
    const prefix = `p${uniqueName().slice(3)}`.padEnd(60, '0');
    await createDatabase(t, `${prefix}x`);
    let r = await t.request(`/rest/${prefix}x/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Kept' } });
    expect(r.status).to.equal(201);
    await createDatabase(t, `${prefix}y`);
    r = await t.request(`/rest/${prefix}x/schemes/Kept`);
    expect(r.status).to.equal(200);
  });

  it('lists the databases with GET', async () => {
    const r = await t.request('/api/admin/databases');
    expect(r.status).to.equal(200);
    const list = await r.json();
    const entry = list.find((d: { name: string }) => d.name === db);
    expect(entry).to.include({ name: db, createdBy: ADMIN.loginId });
    expect(entry.dateCreated).to.be.a('number');
    const names = list.map((d: { name: string }) => d.name);
    expect(names).to.deep.equal([...names].sort());
  });

  it('deletes a database: 204, then 404 on the REST interface and on a second DELETE', async () => {
    const name = await createDatabase(t);
    let r = await t.request(`/api/admin/databases/${name}`, { method: 'DELETE' });
    expect(r.status).to.equal(204);
    r = await t.request(`/rest/${name}/schemes`);
    expect(r.status).to.equal(404);
    r = await t.request(`/api/admin/databases/${name}`);
    expect(r.status).to.equal(404);
    r = await t.request(`/api/admin/databases/${name}`, { method: 'DELETE' });
    expect(r.status).to.equal(404);
  });

  it('answers 404, not 500, for a database name that does not decode', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await t.request('/api/admin/databases/%E0%A4%A', { method });
      expect(r.status, method).to.equal(404);
    }
  });

  it('answers 405 for a method it does not offer', async () => {
    const r = await t.request('/api/admin/databases', { method: 'PUT', json: { name: 'x' } });
    expect(r.status).to.equal(405);
  });

  it('answers 401 with a Basic challenge without credentials, for every call', async () => {
    for (const [method, path] of [['GET', '/api/admin/databases'], ['POST', '/api/admin/databases'], ['DELETE', `/api/admin/databases/${db}`]]) {
      const r = await t.request(path, { method, auth: null, json: method === 'POST' ? { name: uniqueName() } : undefined });
      expect(r.status, `${method} ${path}`).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.match(/^Basic realm="[^"]+"/);
    }
    const r = await t.request('/api/admin/databases');
    expect((await r.json()).map((d: { name: string }) => d.name)).to.include(db);
  });

  it('does not accept the credentials of a database ADMINISTRATOR: the same 401 as a wrong administrator password', async () => {
    // A database user has no credential service-wide. A 403 here, given without checking the
    // password, would tell an attacker which login IDs are system administrators.
    const asDbAdmin = await t.request('/api/admin/databases', { method: 'POST', auth: dbAdmin, json: { name: uniqueName() } });
    const wrongAdmin = await t.request('/api/admin/databases', { method: 'POST', auth: { loginId: ADMIN.loginId, password: 'not-the-password' }, json: { name: uniqueName() } });
    expect(asDbAdmin.status).to.equal(401);
    expect(wrongAdmin.status).to.equal(401);
    expect((await asDbAdmin.json()).message).to.equal((await wrongAdmin.json()).message);
    expect(asDbAdmin.headers.get('www-authenticate')).to.equal(wrongAdmin.headers.get('www-authenticate'));
    const r = await t.request(`/api/admin/databases/${db}`, { method: 'DELETE', headers: { authorization: basic(dbAdmin.loginId, dbAdmin.password) } });
    expect(r.status).to.equal(401);
    expect((await t.request(`/rest/${db}/schemes`)).status).to.equal(200);
  });
});
