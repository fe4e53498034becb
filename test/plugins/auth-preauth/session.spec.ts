/** GET /api/<db>/session and the Logout address (SERVICE_LOGOUT_URL), for pre-authentication and for passwords. */
import { expect } from 'chai';
import { databaseUiUrl, logoutUrl } from '../../../runtime/logout-url.ts';
import { ADMIN, createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { createUser, expectNoSecretInLog, secret } from '../../auth/fixtures.ts';
import { createDatabaseAs, createUserAs, PREAUTH_ENV, proxied, sessionOf } from './helpers.ts';

const LOGOUT = 'https://sso.example/realms/x/logout?client_id=metadata&post_logout_redirect_uri=${POST_LOGOUT_REDIRECT_URL}';

describe('the logout address', () => {
  const redirect = 'https://meta.example:8443/mms/web/db_1';

  it('puts the URL of the database percent-encoded into a query or fragment', () => {
    expect(logoutUrl(LOGOUT, redirect)).to.equal(`https://sso.example/realms/x/logout?client_id=metadata&post_logout_redirect_uri=${encodeURIComponent(redirect)}`);
    expect(logoutUrl('/oauth2/sign_out?rd=${POST_LOGOUT_REDIRECT_URL}', redirect)).to.equal('/oauth2/sign_out?rd=https%3A%2F%2Fmeta.example%3A8443%2Fmms%2Fweb%2Fdb_1');
    expect(logoutUrl('https://sso.example/logout#next=${POST_LOGOUT_REDIRECT_URL}', redirect)).to.equal(`https://sso.example/logout#next=${encodeURIComponent(redirect)}`);
  });

  it('puts it as it is where it is the address or its path, and replaces every occurrence', () => {
    expect(logoutUrl('${POST_LOGOUT_REDIRECT_URL}', redirect)).to.equal(redirect);
    expect(logoutUrl('https://sso.example/logout/${POST_LOGOUT_REDIRECT_URL}?again=${POST_LOGOUT_REDIRECT_URL}', redirect))
      .to.equal(`https://sso.example/logout/${redirect}?again=${encodeURIComponent(redirect)}`);
  });

  it('leaves an address without the placeholder, and other placeholders, unchanged', () => {
    expect(logoutUrl('https://sso.example/logout', redirect)).to.equal('https://sso.example/logout');
    expect(logoutUrl('https://sso.example/logout?x=${OTHER}', redirect)).to.equal('https://sso.example/logout?x=${OTHER}');
  });

  it('names the database\'s page of the user interface', () => {
    expect(databaseUiUrl('http://h:1/mms', 'db_1')).to.equal('http://h:1/mms/web/db_1');
  });
});

describe('GET /api/<db>/session with pre-authentication and a logout address', () => {
  let t: TestService;
  let db: string;

  before(async () => {
    t = await startService({ ...PREAUTH_ENV, SERVICE_LOGOUT_URL: LOGOUT, SERVICE_CONTEXT_PATH: '/mms' });
    db = await createDatabaseAs(t, ADMIN.loginId);
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'reader' });
  });
  after(() => t?.close());

  it('answers who is signed in, by which method, and the logout address leading back to this database', async () => {
    const r = await t.request(`/api/${db}/session`, proxied('reader'));
    expect(r.status).to.equal(200);
    expect(r.headers.get('cache-control')).to.equal('no-store');
    const session = await r.json();
    expect(Object.keys(session).sort()).to.deep.equal(['accessLevel', 'loginId', 'logoutUrl', 'method', 'systemAdmin', 'tenant', 'tenantLabel']);
    expect(session).to.include({ loginId: 'reader', tenantLabel: 'Default', accessLevel: 'READ_ONLY', systemAdmin: false, method: 'pre-authentication' });
    expect(t.url).to.match(/\/mms$/);
    expect(session.logoutUrl).to.equal(`https://sso.example/realms/x/logout?client_id=metadata&post_logout_redirect_uri=${encodeURIComponent(`${t.url}/web/${db}`)}`);
  });

  it('names the database of the request, and takes no forwarded host from a proxy it does not trust', async () => {
    const other = await createDatabaseAs(t, ADMIN.loginId);
    const session = await sessionOf(t, other, ADMIN.loginId, { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' });
    expect(session.logoutUrl).to.contain(encodeURIComponent(`${t.url}/web/${other}`));
    expect(session.logoutUrl).to.not.contain('evil.example');
  });

  it('is authenticated like every other interface of the database', async () => {
    expect((await t.request(`/api/${db}/session`, proxied(undefined))).status).to.equal(401);
    expect((await t.request(`/api/${db}/session`, proxied('stranger'))).status).to.equal(403);
    expect((await t.request(`/api/${db}/session`, proxied('reader', {}, { method: 'POST' }))).status).to.be.oneOf([404, 405]);
  });
});

describe('GET /api/<db>/session with passwords', () => {
  let t: TestService;
  let db: string;
  const carol = { loginId: 'carol', password: secret('carols-Passwort-3') };

  before(async () => {
    t = await startService({ SERVICE_TRUST_PROXY: 'true' });
    db = await createDatabase(t);
    await createUser(t, db, { ...carol, accessLevel: 'EDITOR' });
  });
  after(() => t?.close());

  it('answers without a logout address when none is configured, and never a password', async () => {
    const r = await t.request(`/api/${db}/session`, { auth: carol });
    expect(r.status).to.equal(200);
    const text = await r.text();
    expect(text).to.not.contain(carol.password);
    const session = JSON.parse(text);
    expect(session).to.not.have.property('logoutUrl');
    expect(session).to.include({ loginId: 'carol', accessLevel: 'EDITOR', systemAdmin: false, method: 'basic' });
    expect((await t.request(`/api/${db}/session`, { auth: { ...carol, password: 'wrong-Passwort-3' } })).status).to.equal(401);
    expectNoSecretInLog([carol]);
  });

  it('takes the logout address for this method too, with the forwarded host of a trusted proxy', async () => {
    const withLogout = await startService({ SERVICE_TRUST_PROXY: 'true', SERVICE_LOGOUT_URL: '/oauth2/sign_out?rd=${POST_LOGOUT_REDIRECT_URL}' });
    try {
      const other = await createDatabase(withLogout);
      const r = await withLogout.request(`/api/${other}/session`, { headers: { 'X-Forwarded-Host': 'meta.example', 'X-Forwarded-Proto': 'https' } });
      expect(r.status).to.equal(200);
      const session = await r.json();
      expect(session).to.include({ loginId: ADMIN.loginId, systemAdmin: true, method: 'basic' });
      expect(session.logoutUrl).to.equal(`/oauth2/sign_out?rd=${encodeURIComponent(`https://meta.example/web/${other}`)}`);
    } finally {
      await withLogout.close();
    }
  });
});
