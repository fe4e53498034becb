/**
 * The pages' sessions over HTTP, on a real port: sign-in by password, the
 * cookie's attributes, the cookie only together with the anti-forgery
 * token and only in its own scope, sign-out, expiry, and what the core
 * decides again on every request.
 */
import { expect } from 'chai';
import { ADMIN, createDatabase, startService, uniqueName, type TestService } from '../../helpers/service.ts';
import { createTenant, createUser, secret } from '../../auth/fixtures.ts';
import { postSession, sessionCookieOf, signIn, withSession } from './helpers.ts';

describe('the pages\' sessions (password sign-in)', () => {
  let t: TestService;
  let db: string;
  let other: string;
  let editorId: string;
  const editor = { loginId: 'web-editor', password: secret('web-editor-pass-1') };
  const reader = { loginId: 'web-reader', password: secret('web-reader-pass-1') };

  before(async () => {
    t = await startService({ SERVICE_TRUST_PROXY: 'true' });
    db = await createDatabase(t);
    other = await createDatabase(t);
    editorId = (await createUser(t, db, { ...editor, accessLevel: 'EDITOR' })).id as string;
    await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
    await createUser(t, other, { ...editor, accessLevel: 'EDITOR' });
  });
  after(() => t?.close());

  it('opens a session: the body of /api/<db>/session and a token, an HttpOnly SameSite=Strict cookie on the context path', async () => {
    const s = await signIn(t, { database: db, ...editor });
    expect(s.body).to.include({ loginId: editor.loginId, accessLevel: 'EDITOR', systemAdmin: false, method: 'basic', tenantLabel: 'Default' });
    expect(s.csrfToken).to.be.a('string').with.length.above(20);
    const attributes = s.setCookie.split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).to.include.members(['httponly', 'samesite=strict', 'path=/']);
    expect(attributes).not.to.include('secure');
    // The value is random and long; no expiry of its own: the server's settings end it.
    expect(s.cookie.split('=')[1].length).to.be.at.least(40);
    const stored = await t.service.storage.knex.raw('select * from service.web_sessions');
    expect(JSON.stringify(stored.rows)).not.to.include(s.cookie.split('=')[1]);
    expect(JSON.stringify(stored.rows)).not.to.include(s.csrfToken);
  });

  it('sets Secure behind a trusted proxy that says https', async () => {
    const s = await signIn(t, { database: db, ...editor }, { 'x-forwarded-proto': 'https' });
    expect(s.setCookie.toLowerCase()).to.match(/;\s*secure/);
  });

  it('answers a wrong password and an unknown user with the same 401, without a challenge and without a cookie', async () => {
    const wrong = await postSession(t, { database: db, loginId: editor.loginId, password: 'not-the-password' });
    const unknown = await postSession(t, { database: db, loginId: 'nobody-here', password: 'not-the-password' });
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    const [a, b] = [await wrong.json(), await unknown.json()];
    expect(a.message).to.equal(b.message);
    expect(a.code ?? a.status).to.deep.equal(b.code ?? b.status);
    expect(wrong.headers.get('www-authenticate')).to.equal(null);
    expect(sessionCookieOf(wrong)).to.equal(undefined);
  });

  it('throttles failed sign-ins like Basic sign-in: 429 with Retry-After', async () => {
    const loginId = uniqueName('guess');
    let last: Response | undefined;
    for (let i = 0; i < 7; i++) last = await postSession(t, { database: db, loginId, password: `wrong-${i}-password` });
    expect(last!.status).to.equal(429);
    expect(Number(last!.headers.get('retry-after'))).to.be.above(0);
  });

  it('refuses bodies that are not a sign-in (400) and forms (415)', async () => {
    expect((await postSession(t, { database: db, loginId: editor.loginId })).status).to.equal(400);
    expect((await postSession(t, { database: db, loginId: 1, password: 'x' })).status).to.equal(400);
    expect((await postSession(t, { database: 'Not A Name', loginId: 'a', password: 'b' })).status).to.equal(400);
    const form = await t.request('/web/session', {
      method: 'POST', auth: null, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `database=${db}&loginId=${editor.loginId}&password=${editor.password}`,
    });
    expect(form.status).to.equal(415);
  });

  it('accepts the cookie on /rest/<db> only with the matching X-CSRF-Token', async () => {
    const s = await signIn(t, { database: db, ...editor });
    expect((await t.request(`/rest/${db}/tenants`, withSession(s, {}, null))).status).to.equal(401);
    const wrong = await t.request(`/rest/${db}/tenants`, withSession(s, {}, 'wrong-token'));
    expect(wrong.status).to.equal(401);
    // A page's call gets no challenge, which would make the browser ask for a password itself.
    expect(wrong.headers.get('www-authenticate')).to.equal(null);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s, {}, null))).headers.get('www-authenticate')).to.match(/^Basic/);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s, {}, s.csrfToken.slice(1)))).status).to.equal(401);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
    const session = await t.request(`/api/${db}/session`, withSession(s));
    expect(session.status).to.equal(200);
    expect(await session.json()).to.include({ loginId: editor.loginId, accessLevel: 'EDITOR' });
  });

  it('refuses the cookie of database A on database B, and on the service-wide calls', async () => {
    const s = await signIn(t, { database: db, ...editor });
    // The same cookie value under B's name, and A's cookie sent to B.
    const value = s.cookie.split('=')[1];
    expect((await t.request(`/rest/${other}/tenants`, withSession({ cookie: `mds-db-${other}=${value}`, csrfToken: s.csrfToken }))).status).to.equal(401);
    expect((await t.request(`/rest/${other}/tenants`, withSession(s))).status).to.equal(401);
    expect((await t.request('/api/admin/databases', withSession({ cookie: `mds-admin=${value}`, csrfToken: s.csrfToken }))).status).to.equal(401);
  });

  it('refuses a cross-site form POST that carries only the cookie', async () => {
    const s = await signIn(t, { database: db, ...editor });
    const r = await t.request(`/rest/${db}/tenants`, {
      method: 'POST', auth: null,
      headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: '_type=Tenant&label=evil',
    });
    expect(r.status).to.equal(401);
  });

  it('lets a READ_ONLY user\'s session read but not write', async () => {
    const s = await signIn(t, { database: db, ...reader });
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
    const write = await t.request(`/rest/${db}/tenants`, withSession(s, { method: 'POST', json: { _type: 'Tenant', label: 'nope' } }));
    expect(write.status).to.equal(403);
  });

  it('GET /web/session tells the page who is signed in and the token again; without a session it is 401', async () => {
    const s = await signIn(t, { database: db, ...editor });
    const r = await t.request(`/web/session?database=${db}`, { auth: null, headers: { cookie: s.cookie } });
    expect(r.status).to.equal(200);
    expect(r.headers.get('cache-control')).to.equal('no-store');
    expect(await r.json()).to.include({ loginId: editor.loginId, csrfToken: s.csrfToken });
    expect((await t.request(`/web/session?database=${other}`, { auth: null, headers: { cookie: s.cookie } })).status).to.equal(401);
    const none = await t.request(`/web/session?database=${db}`, { auth: null });
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.equal(null);
  });

  it('signs out: DELETE ends the session and clears the cookie', async () => {
    const s = await signIn(t, { database: db, ...editor });
    expect((await t.request(`/web/session?database=${db}`, withSession(s, { method: 'DELETE' }, null))).status).to.equal(401);
    const r = await t.request(`/web/session?database=${db}`, withSession(s, { method: 'DELETE' }));
    expect(r.status).to.equal(200);
    expect(sessionCookieOf(r)).to.match(/expires=Thu, 01 Jan 1970/i);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(401);
    expect((await t.request(`/web/session?database=${db}`, { auth: null, headers: { cookie: s.cookie } })).status).to.equal(401);
  });

  it('stops a removed user\'s session at once', async () => {
    const gone = { loginId: uniqueName('gone'), password: secret('gone-user-pass-1') };
    const user = await createUser(t, db, { ...gone, accessLevel: 'EDITOR' });
    const s = await signIn(t, { database: db, ...gone });
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
    const self = (user._links as { self: { href: string } }).self.href;
    expect((await t.request(new URL(self).pathname.replace(/^.*?\/rest\//, '/rest/'), { method: 'DELETE' })).status).to.be.oneOf([200, 204]);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(401);
  });

  it('takes a changed access level at once', async () => {
    const changing = { loginId: uniqueName('level'), password: secret('level-user-pass-1') };
    const user = await createUser(t, db, { ...changing, accessLevel: 'EDITOR' });
    const s = await signIn(t, { database: db, ...changing });
    const path = new URL((user._links as { self: { href: string } }).self.href).pathname.replace(/^.*?\/rest\//, '/rest/');
    expect((await t.request(path, { method: 'PATCH', json: { accessLevel: 'READ_ONLY' } })).status).to.equal(200);
    const write = await t.request(`/rest/${db}/tenants`, withSession(s, { method: 'POST', json: { _type: 'Tenant', label: uniqueName('t') } }));
    expect(write.status).to.equal(403);
  });

  it('switches the login tenant (PATCH) as the login-tenant rules decide; a refused one keeps the session where it was', async () => {
    const label = uniqueName('second');
    await createTenant(t, db, label);
    await createUser(t, db, { loginId: editor.loginId, accessLevel: 'READ_ONLY', tenant: label });
    const s = await signIn(t, { database: db, ...editor });
    expect((await t.request(`/web/session?database=${db}`, withSession(s, { method: 'PATCH', json: { tenant: label } }, null))).status).to.equal(401);
    const switched = await t.request(`/web/session?database=${db}`, withSession(s, { method: 'PATCH', json: { tenant: label } }));
    expect(switched.status).to.equal(200);
    expect(await switched.json()).to.include({ tenantLabel: label, accessLevel: 'READ_ONLY', csrfToken: s.csrfToken });
    const there = await t.request(`/api/${db}/session`, withSession(s));
    expect(await there.json()).to.include({ tenantLabel: label });
    const refused = await t.request(`/web/session?database=${db}`, withSession(s, { method: 'PATCH', json: { tenant: 'No Such Tenant' } }));
    expect(refused.status).to.equal(403);
    expect(await (await t.request(`/api/${db}/session`, withSession(s))).json()).to.include({ tenantLabel: label });
    expect((await t.request(`/web/session?database=${db}`, withSession(s, { method: 'PATCH', json: { tenant: 3 } }))).status).to.equal(400);
  });

  it('signs in to a tenant named at sign-in, and refuses one the person has no access to (403)', async () => {
    const label = uniqueName('third');
    await createTenant(t, db, label);
    expect((await postSession(t, { database: db, ...editor, tenant: label })).status).to.equal(403);
    expect((await postSession(t, { database: db, ...editor, tenant: 'Default' })).status).to.equal(200);
  });

  it('never takes an access key as the password', async () => {
    const created = await t.request(`/rest/${db}/users/${editorId}/accessKeys`, { method: 'POST', json: { description: 'web key' } });
    expect(created.status).to.equal(201);
    const { key } = await created.json();
    const r = await postSession(t, { database: db, loginId: editor.loginId, password: key });
    expect(r.status).to.equal(401);
    const header = await postSession(t, { database: db, loginId: editor.loginId, password: 'wrong' }, { 'service-access-key': key });
    expect(header.status).to.equal(401);
  });

  it('opens a service-wide session for a system administrator only', async () => {
    const s = await signIn(t, { ...ADMIN });
    expect(s.body).to.include({ systemAdmin: true });
    expect((await t.request('/api/admin/databases', withSession(s))).status).to.equal(200);
    expect((await t.request('/api/admin/databases', withSession(s, {}, null))).status).to.equal(401);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(401);
    expect((await postSession(t, { ...editor })).status).to.equal(401);
  });
});

describe('the pages\' sessions on two instances of the service', function () {
  let t: TestService;
  let t2: TestService;
  let db: string;
  const user = { loginId: 'web-two', password: secret('web-two-pass-1') };

  before(async function () {
    // PGlite lives in one process: only PostgreSQL can be shared by two instances.
    if (!process.env.SERVICE_TEST_DATABASE_URL) this.skip();
    t = await startService();
    t2 = await startService();
    db = await createDatabase(t);
    await createUser(t, db, { ...user, accessLevel: 'EDITOR' });
  });
  after(async () => {
    await t?.close();
    await t2?.close();
  });

  it('a session opened on one works on the other, and signing out on one ends it on both', async () => {
    const s = await signIn(t, { database: db, ...user });
    expect((await t2.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
    expect((await t2.request(`/web/session?database=${db}`, withSession(s, { method: 'DELETE' }))).status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(401);
    expect((await t2.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(401);
  });
});

describe('the pages\' sessions expire', () => {
  let t: TestService;
  let db: string;
  const user = { loginId: 'web-expiring', password: secret('web-expiring-pass-1') };

  before(async () => {
    t = await startService({ SERVICE_SESSION_IDLE_TIMEOUT: '1500', SERVICE_SESSION_MAX_AGE: '4000' });
    db = await createDatabase(t);
    await createUser(t, db, { ...user, accessLevel: 'EDITOR' });
  });
  after(() => t?.close());

  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('after the idle timeout', async () => {
    const s = await signIn(t, { database: db, ...user });
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
    await pause(1800);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(401);
  });

  it('after the maximum age, however busy', async () => {
    const s = await signIn(t, { database: db, ...user });
    const started = Date.now();
    while (Date.now() - started < 3500) {
      expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
      await pause(500);
    }
    await pause(Math.max(0, 4100 - (Date.now() - started)));
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(401);
  });
});
