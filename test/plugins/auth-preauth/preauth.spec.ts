/** Single sign-on by pre-authentication (method 2), from the caller's side, on a real port. */
import { expect } from 'chai';
import { ADMIN, logLines, startService, uniqueName, type TestService } from '../../helpers/service.ts';
import { expectNoSecretInLog, secret } from '../../auth/fixtures.ts';
import {
  createDatabaseAs, createTenantAs, createUserAs, PREAUTH_ENV, proxied, rawRequest, sessionOf, USER_HEADER, utf8Bytes,
} from './helpers.ts';

const TENANT_HEADER = 'X-Remote-Tenant';

describe('pre-authentication: sign-in by the proxy\'s header', () => {
  let t: TestService;
  let db: string;
  const tenantIds: Record<string, string> = {};

  before(async () => {
    t = await startService({ ...PREAUTH_ENV, SERVICE_REMOTE_USER_TENANT_NAME: TENANT_HEADER });
    db = await createDatabaseAs(t, ADMIN.loginId);
    // "Alpha" sorts before "Default": no check can pass by taking the first tenant in label order.
    for (const label of ['Alpha', 'Second']) tenantIds[label] = (await createTenantAs(t, db, ADMIN.loginId, label)).id as string;
    tenantIds.Default = (await sessionOf(t, db, ADMIN.loginId)).tenant;
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'editor', accessLevel: 'EDITOR', tenant: 'Second' });
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'reader', accessLevel: 'READ_ONLY', tenant: 'Default' });
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'both', accessLevel: 'EDITOR', tenant: 'Default' });
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'both', accessLevel: 'READ_ONLY', tenant: 'Alpha' });
  });
  after(() => t?.close());

  const scheme = (label: string) => ({ method: 'POST', json: { _type: 'Scheme', label } });

  it('signs an existing user in by the login-ID header alone, in the user\'s tenant, with the user\'s access level', async () => {
    const session = await sessionOf(t, db, 'editor');
    expect(session).to.deep.equal({
      loginId: 'editor', tenant: tenantIds.Second, tenantLabel: 'Second', accessLevel: 'EDITOR', systemAdmin: false, method: 'pre-authentication',
    });
    const created = await t.request(`/rest/${db}/schemes`, proxied('editor', {}, scheme('Written by the editor')));
    expect(created.status).to.equal(201);
    expect((await created.json()).tenant).to.equal(tenantIds.Second);
  });

  it('enforces the access level: a READ_ONLY user reads but cannot write', async () => {
    expect((await t.request(`/rest/${db}/schemes`, proxied('reader'))).status).to.equal(200);
    const r = await t.request(`/rest/${db}/schemes`, proxied('reader', {}, scheme('Not by a reader')));
    expect(r.status).to.equal(403);
    const list = await (await t.request(`/rest/${db}/schemes`, proxied('reader'))).json();
    expect(JSON.stringify(list)).to.not.contain('Not by a reader');
  });

  it('answers 401 without the header, or with a blank one, and offers no password challenge', async () => {
    for (const headers of <Record<string, string>[]>[{}, { [USER_HEADER]: '' }, { [USER_HEADER]: '   ' }]) {
      const r = await t.request(`/rest/${db}/schemes`, proxied(undefined, headers));
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate') ?? '').to.not.match(/basic/i);
      expect((await r.json()).statusCode).to.equal(401);
    }
    expect((await t.request(`/api/${db}/session`, proxied(undefined))).status).to.equal(401);
  });

  it('reads the login ID only from the configured header, not from another a client might send', async () => {
    for (const header of ['Remote-User', 'X-Forwarded-User', 'X-Remote-User-Id']) {
      expect((await t.request(`/rest/${db}/schemes`, proxied(undefined, { [header]: ADMIN.loginId }))).status, header).to.equal(401);
    }
  });

  it('refuses a caller without a user in the login tenant: no guest login (403)', async () => {
    // The tenant has no access rules; what rules do for such callers: access-rules.spec.ts.
    expect((await t.request(`/rest/${db}/schemes`, proxied('stranger'))).status).to.equal(403);
    expect((await t.request(`/api/${db}/session`, proxied('stranger'))).status).to.equal(403);
  });

  it('makes a login ID of SERVICE_ADMIN_USER a system administrator with access to every tenant', async () => {
    const session = await sessionOf(t, db, ADMIN.loginId);
    expect(session).to.include({ loginId: ADMIN.loginId, tenantLabel: 'Default', systemAdmin: true, accessLevel: 'ADMINISTRATOR' });
    const tenants = await (await t.request(`/rest/${db}/tenants`, proxied(ADMIN.loginId))).json();
    expect(tenants._embedded.tenants.map((x: { label: string }) => x.label).sort()).to.deep.equal(['Alpha', 'Default', 'Second']);
    for (const label of ['Alpha', 'Second']) expect((await sessionOf(t, db, ADMIN.loginId, { 'service-tenant': label })).tenantLabel).to.equal(label);
    const databases = await t.request('/api/admin/databases', proxied(ADMIN.loginId));
    expect(databases.status).to.equal(200);
    expect((await databases.json()).map((d: { name: string }) => d.name)).to.include(db);
  });

  it('keeps everyone else out of the service-wide administration', async () => {
    expect((await t.request('/api/admin/databases', proxied('editor'))).status).to.equal(403);
    expect((await t.request('/api/admin/databases', proxied('editor', {}, { method: 'POST', json: { name: 'db_by_editor' } }))).status).to.equal(403);
    expect((await t.request('/api/admin/databases', proxied(undefined))).status).to.equal(401);
  });

  it('a user does not learn whether another database exists', async () => {
    expect((await t.request('/rest/db_not_there/schemes', proxied('editor'))).status).to.equal(403);
    expect((await t.request('/rest/db_not_there/schemes', proxied(ADMIN.loginId))).status).to.equal(404);
  });

  it('rejects service-tenant naming a tenant where the login ID has no user, or no tenant at all (403)', async () => {
    expect((await t.request(`/rest/${db}/schemes`, proxied('editor', { 'service-tenant': 'Second' }))).status).to.equal(200);
    expect((await t.request(`/rest/${db}/schemes`, proxied('editor', { 'service-tenant': 'Default' }))).status).to.equal(403);
    expect((await t.request(`/rest/${db}/schemes`, proxied('editor', { 'service-tenant': 'No such tenant' }))).status).to.equal(403);
    const r = await t.request(`/rest/${db}/schemes`, proxied('editor', { 'service-tenant': 'Default' }, scheme('Forced into Default')));
    expect(r.status).to.equal(403);
  });

  it('lets the tenant-name header override the default tenant, but not a tenant named in service-tenant', async () => {
    // Rule 4 with the default tenant moved to Alpha: 'both' has a user in Default and in Alpha.
    expect((await sessionOf(t, db, 'both')).tenantLabel).to.equal('Default');
    const overridden = await sessionOf(t, db, 'both', { [TENANT_HEADER]: 'Alpha' });
    expect(overridden).to.include({ tenantLabel: 'Alpha', accessLevel: 'READ_ONLY' });
    // Rule 2: the system administrator logs into the (overridden) default tenant.
    expect((await sessionOf(t, db, ADMIN.loginId, { [TENANT_HEADER]: 'Second' })).tenantLabel).to.equal('Second');
    expect((await sessionOf(t, db, 'both', { [TENANT_HEADER]: 'Alpha', 'service-tenant': 'Default' })).tenantLabel).to.equal('Default');
    // A tenant name that names no tenant leaves the default tenant as it is.
    expect((await sessionOf(t, db, 'both', { [TENANT_HEADER]: 'No such tenant' })).tenantLabel).to.equal('Default');
    // The override moves only the default tenant: a user elsewhere is still found there (rule 5).
    expect((await sessionOf(t, db, 'editor', { [TENANT_HEADER]: 'Alpha' })).tenantLabel).to.equal('Second');
  });

  describe('header values', () => {
    before(async () => {
      await createUserAs(t, db, ADMIN.loginId, { loginId: 'jürgen', accessLevel: 'EDITOR' });
      await createUserAs(t, db, ADMIN.loginId, { loginId: 'voilà', accessLevel: 'READ_ONLY' });
      await createUserAs(t, db, ADMIN.loginId, { loginId: 'l'.repeat(256), accessLevel: 'READ_ONLY' });
      await createUserAs(t, db, ADMIN.loginId, { loginId: 'l'.repeat(257), accessLevel: 'READ_ONLY' });
    });

    const status = async (headers: [string, string][]) => (await rawRequest(t.url, `/api/${db}/session`, headers)).status;

    it('reads a login ID sent as UTF-8 bytes as UTF-8, and one that is not UTF-8 as Latin-1', async () => {
      const utf8 = await rawRequest(t.url, `/api/${db}/session`, [[USER_HEADER, utf8Bytes('jürgen')]]);
      expect(utf8.status).to.equal(200);
      expect(JSON.parse(utf8.body).loginId).to.equal('jürgen');
      // 0xFC alone is not UTF-8: read as Latin-1 it is the same name.
      const latin1 = await rawRequest(t.url, `/api/${db}/session`, [[USER_HEADER, 'j\u00fcrgen']]);
      expect(latin1.status).to.equal(200);
      expect(JSON.parse(latin1.body).loginId).to.equal('jürgen');
      // "à" ends in the byte 0xA0, a no-break space when read as Latin-1: it must survive trimming.
      const trailing = await rawRequest(t.url, `/api/${db}/session`, [[USER_HEADER, utf8Bytes('voilà')]]);
      expect(trailing.status).to.equal(200);
      expect(JSON.parse(trailing.body).loginId).to.equal('voilà');
    });

    it('takes the value without surrounding whitespace', async () => {
      const r = await rawRequest(t.url, `/api/${db}/session`, [[USER_HEADER, ' \t editor \t ']]);
      expect(r.status).to.equal(200);
      expect(JSON.parse(r.body).loginId).to.equal('editor');
    });

    it('accepts a login ID of 256 characters and refuses one of 257 (401), even though its user exists', async () => {
      expect(await status([[USER_HEADER, 'l'.repeat(256)]])).to.equal(200);
      expect(await status([[USER_HEADER, 'l'.repeat(257)]])).to.equal(401);
    });

    it('refuses control characters in a login ID (401), C1 controls from Latin-1 bytes included', async () => {
      expect(await status([[USER_HEADER, 'edi\ttor']])).to.equal(401);
      expect(await status([[USER_HEADER, 'edi\u0085tor']])).to.equal(401);
      // Node's parser refuses other C0 characters before the service sees them; either way no one signs in.
      expect(await status([[USER_HEADER, 'edi\u0001tor']])).to.be.oneOf([400, 401]);
    });

    it('refuses the login-ID header sent twice, since which one the proxy set cannot be told (401)', async () => {
      expect(await status([[USER_HEADER, 'reader'], [USER_HEADER, ADMIN.loginId]])).to.equal(401);
      expect(await status([[USER_HEADER, 'reader'], [USER_HEADER, 'reader']])).to.equal(401);
      expect(await status([[USER_HEADER, 'reader']])).to.equal(200);
    });

    it('does not take a refused value into the log', () => {
      expect(logLines.find((l) => l.includes('l'.repeat(257)))).to.equal(undefined);
      expect(logLines.some((l) => l.includes('pre-authentication header refused'))).to.equal(true);
    });
  });
});

describe('pre-authentication: no login ID and password on programming interfaces', () => {
  const bob = { loginId: 'bob', password: secret('bobs-Passwort-7') };
  const dataDir = `memory-preauth-${process.pid}-${Date.now()}`;
  let db: string;
  let directory: string;

  before(async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    directory = mkdtempSync(join(tmpdir(), dataDir));
    // First with passwords: the administrator's and bob's are stored and work.
    const withPasswords = await startService({ SERVICE_DATA_DIR: directory });
    try {
      const r = await withPasswords.request('/api/admin/databases', { method: 'POST', json: { name: uniqueName() } });
      expect(r.status).to.equal(201);
      db = (await r.json()).name;
      expect((await withPasswords.request(`/rest/${db}/users`, { method: 'POST', json: { _type: 'User', ...bob, accessLevel: 'EDITOR' } })).status).to.equal(201);
      expect((await withPasswords.request(`/rest/${db}/schemes`, { auth: bob })).status).to.equal(200);
      expect((await withPasswords.request('/api/admin/databases')).status).to.equal(200);
    } finally {
      await withPasswords.close();
    }
  });
  after(async () => {
    const { rmSync } = await import('node:fs');
    rmSync(directory, { recursive: true, force: true });
  });

  it('refuses a correct Basic header of the system administrator and of a user once pre-authentication is on (401)', async () => {
    const t = await startService({ ...PREAUTH_ENV, SERVICE_DATA_DIR: directory });
    try {
      for (const path of ['/api/admin/databases', `/rest/${db}/schemes`, `/api/${db}/session`]) {
        const r = await t.request(path);
        expect(r.status, path).to.equal(401);
        expect(r.headers.get('www-authenticate') ?? '', path).to.not.match(/basic/i);
      }
      expect((await t.request(`/rest/${db}/schemes`, { auth: bob })).status).to.equal(401);
      // Nor does a Basic header next to the proxy's header change who signs in.
      const session = await t.request(`/api/${db}/session`, { auth: ADMIN, headers: { [USER_HEADER]: 'bob' } });
      expect(session.status).to.equal(200);
      expect(await session.json()).to.include({ loginId: 'bob', systemAdmin: false, accessLevel: 'EDITOR' });
    } finally {
      await t.close();
    }
  });

  it('refuses to set a password, which would never be used', async () => {
    const t = await startService({ ...PREAUTH_ENV, SERVICE_DATA_DIR: directory });
    try {
      const r = await t.request(`/rest/${db}/users`, proxied(ADMIN.loginId, {}, { method: 'POST', json: { _type: 'User', loginId: 'carol', password: secret('carols-Passwort-1') } }));
      expect(r.status).to.equal(400);
      expect((await t.request(`/api/${db}/session`, proxied('carol'))).status).to.equal(403);
      expectNoSecretInLog([bob]);
    } finally {
      await t.close();
    }
  });
});
