import { expect } from 'chai';
import { ADMIN, createDatabase, startService, uniqueName, type TestService } from '../helpers/service.ts';
import { createTenant, createUser, expectNoSecretInLog, inTenant, secret, storedCredential } from './fixtures.ts';

describe('access levels, checked on every call', () => {
  let t: TestService;
  let db: string;
  let scheme: Record<string, unknown>;
  let victim: Record<string, unknown>;
  const reader = { loginId: 'reader', password: secret('reader-Passwort-1') };
  const editor = { loginId: 'editor', password: secret('editor-Passwort-2') };
  const manager = { loginId: 'manager', password: secret('manager-Passwort-3') };
  const outsider = { loginId: 'outsider', password: secret('outsider-Passwort-4') };

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createTenant(t, db, 'Second');
    await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
    await createUser(t, db, { ...editor, accessLevel: 'EDITOR' });
    await createUser(t, db, { ...manager, accessLevel: 'ADMINISTRATOR' });
    victim = await createUser(t, db, { ...outsider, accessLevel: 'EDITOR', tenant: 'Second' });
    const r = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Shared' } });
    scheme = await r.json();
  });
  after(() => t.close());

  const schemePath = () => `/rest/${db}/schemes/${scheme.id}`;

  it('lets READ_ONLY read, and answers 403 to every write without changing anything', async () => {
    expect((await t.request(schemePath(), { auth: reader })).status).to.equal(200);
    expect((await t.request(`/rest/${db}/schemes`, { auth: reader })).status).to.equal(200);
    const writes: [string, string, unknown][] = [
      ['POST', `/rest/${db}/schemes`, { _type: 'Scheme', label: 'New' }],
      ['PUT', schemePath(), { _type: 'Scheme', label: 'Renamed' }],
      ['PATCH', schemePath(), { title: 'Changed' }],
      ['PUT', `/rest/${db}/schemes/Created`, { _type: 'Scheme' }],
      ['PATCH', `/rest/${db}/schemes`, [{ _type: 'Scheme', label: 'Listed' }]],
      ['DELETE', schemePath(), undefined],
      ['DELETE', `/rest/${db}/schemes`, undefined],
    ];
    for (const [method, path, json] of writes) {
      const r = await t.request(path, { method, auth: reader, json });
      expect(r.status, `${method} ${path}`).to.equal(403);
    }
    const list = await (await t.request(`/rest/${db}/schemes`)).json();
    expect(list._embedded.schemes.map((s: { label: string; _version: number }) => [s.label, s._version])).to.deep.equal([['Shared', 1]]);
  });

  it('lets EDITOR write metadata', async () => {
    let r = await t.request(`/rest/${db}/schemes`, { method: 'POST', auth: editor, json: { _type: 'Scheme', label: 'Edited' } });
    expect(r.status).to.equal(201);
    const created = await r.json();
    expect(created.createdBy).to.equal('editor');
    r = await t.request(`/rest/${db}/schemes/${created.id}`, { method: 'PATCH', auth: editor, json: { title: 'Changed' } });
    expect(r.status).to.equal(200);
    r = await t.request(`/rest/${db}/schemes/${created.id}`, { method: 'DELETE', auth: editor });
    expect(r.status).to.equal(204);
  });

  it('answers 403 to EDITOR on users: list, read, create, and raising its own access level', async () => {
    const own = (await (await t.request(`/rest/${db}/users`)).json())._embedded.users.find((u: { loginId: string }) => u.loginId === 'editor');
    const calls: [string, string, unknown][] = [
      ['GET', `/rest/${db}/users`, undefined],
      ['GET', `/rest/${db}/users/${own.id}`, undefined],
      ['POST', `/rest/${db}/users`, { _type: 'User', loginId: 'sneaky', accessLevel: 'ADMINISTRATOR', password: 'sneaky-Passwort' }],
      ['PATCH', `/rest/${db}/users/${own.id}`, { accessLevel: 'ADMINISTRATOR' }],
      ['PUT', `/rest/${db}/users/${own.id}`, { _type: 'User', loginId: 'editor', accessLevel: 'ADMINISTRATOR' }],
      ['DELETE', `/rest/${db}/users/${own.id}`, undefined],
    ];
    for (const [method, path, json] of calls) {
      const r = await t.request(path, { method, auth: editor, json });
      expect(r.status, `${method} ${path}`).to.equal(403);
    }
    const after = await (await t.request(`/rest/${db}/users/${own.id}`)).json();
    expect(after).to.include({ accessLevel: 'EDITOR', _version: 1 });
  });

  it('lets ADMINISTRATOR manage the users of its tenant: create, read, change, delete', async () => {
    const dora = { loginId: 'dora', password: secret('doras-Passwort-5') };
    let r = await t.request(`/rest/${db}/users`, { method: 'POST', auth: manager, json: { _type: 'User', ...dora, accessLevel: 'EDITOR' } });
    expect(r.status).to.equal(201);
    const user = await r.json();
    expect((await t.request(`/rest/${db}/users/${user.id}`, { auth: manager })).status).to.equal(200);
    const listed = (await (await t.request(`/rest/${db}/users`, { auth: manager })).json())._embedded.users.map((u: { loginId: string }) => u.loginId);
    expect(listed).to.include.members(['dora', 'manager', 'editor', 'reader']).and.not.include('outsider');
    r = await t.request(`/rest/${db}/users/${user.id}`, { method: 'PATCH', auth: manager, json: { accessLevel: 'READ_ONLY' } });
    expect(r.status).to.equal(200);
    expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', auth: dora, json: { _type: 'Scheme', label: 'Dora' } })).status).to.equal(403);
    r = await t.request(`/rest/${db}/users/${user.id}`, { method: 'DELETE', auth: manager });
    expect(r.status).to.equal(204);
  });

  it('shows ADMINISTRATOR no user of another tenant and lets it change none by UUID', async () => {
    const path = `/rest/${db}/users/${victim.id}`;
    expect((await t.request(path, { auth: manager })).status).to.equal(404);
    const takeover = { _type: 'User', loginId: 'outsider', accessLevel: 'ADMINISTRATOR', password: secret('taken-over-Passwort') };
    for (const method of ['PUT', 'PATCH']) {
      const r = await t.request(path, { method, auth: manager, json: takeover });
      expect(r.status, method).to.be.within(400, 499);
    }
    expect((await t.request(path, { method: 'DELETE', auth: manager })).status).to.equal(404);
    const unchanged = await (await t.request(path, { headers: inTenant('Second') })).json();
    expect(unchanged).to.include({ accessLevel: 'EDITOR', _version: 1 });
    expect((await t.request(`/rest/${db}/tenants`, { auth: outsider })).status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants`, { auth: { loginId: 'outsider', password: takeover.password } })).status).to.equal(401);
    expect(await storedCredential(t, db, victim.id as string)).to.not.equal(undefined);
  });

  it('lets only a system administrator create a tenant', async () => {
    for (const auth of [manager, editor, reader]) {
      const r = await t.request(`/rest/${db}/tenants`, { method: 'POST', auth, json: { _type: 'Tenant', label: `By ${auth.loginId}` } });
      expect(r.status, auth.loginId).to.equal(403);
    }
    const own = (await (await t.request(`/rest/${db}/tenants`, { auth: manager })).json())._embedded.tenants[0];
    expect((await t.request(`/rest/${db}/tenants/${own.id}`, { method: 'PATCH', auth: manager, json: { title: 'Mine' } })).status).to.equal(403);
    const r = await t.request(`/rest/${db}/tenants`, { method: 'POST', json: { _type: 'Tenant', label: 'Third' } });
    expect(r.status).to.equal(201);
  });

  it('gives a tenant ADMINISTRATOR no way to the system administrator: a user with its login ID does not sign in as it', async () => {
    const forged = { loginId: ADMIN.loginId, password: secret('forged-admin-Passwort') };
    const r = await t.request(`/rest/${db}/users`, { method: 'POST', auth: manager, json: { _type: 'User', ...forged, accessLevel: 'ADMINISTRATOR' } });
    expect(r.status).to.equal(201);
    expect((await t.request(`/rest/${db}/users`, { auth: forged })).status).to.equal(401);
    expect((await t.request(`/rest/${db}/users`, { auth: forged, headers: inTenant('Default') })).status).to.equal(401);
    expect((await t.request('/api/admin/databases', { method: 'POST', auth: forged, json: { name: uniqueName() } })).status).to.equal(401);
    // The real system administrator is unaffected.
    expect((await t.request(`/rest/${db}/users`)).status).to.equal(200);
  });

  it('applies a lowered access level at the next call, though the password check is remembered', async () => {
    const erin = { loginId: 'erin', password: secret('erins-Passwort-6') };
    const user = await createUser(t, db, { ...erin, accessLevel: 'EDITOR' });
    expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', auth: erin, json: { _type: 'Scheme', label: 'Erin 1' } })).status).to.equal(201);
    await t.request(`/rest/${db}/users/${user.id}`, { method: 'PATCH', json: { accessLevel: 'READ_ONLY' } });
    expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', auth: erin, json: { _type: 'Scheme', label: 'Erin 2' } })).status).to.equal(403);
  });

  it('writes no password to the log', () => {
    expectNoSecretInLog([reader, editor, manager, outsider]);
  });
});
