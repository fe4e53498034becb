/** The pages' HTML shell and assets below the context path, with their security headers. */
import { expect } from 'chai';
import { ADMIN, createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { signIn, withSession } from './helpers.ts';
import { PREAUTH_ENV, proxied } from '../auth-preauth/helpers.ts';
import { CONTENT_SECURITY_POLICY } from '../../../plugins/web/shell.ts';

function expectSecurityHeaders(r: Response) {
  const csp = r.headers.get('content-security-policy');
  expect(csp).to.equal(CONTENT_SECURITY_POLICY);
  // No inline script: script-src names only the service itself.
  const scriptSrc = csp!.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src'));
  expect(scriptSrc).to.equal("script-src 'self'");
  expect(csp).to.include("frame-ancestors 'none'");
  expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
  expect(r.headers.get('referrer-policy')).to.equal('same-origin');
}

describe('the pages\' shell and assets', () => {
  let t: TestService;

  before(async () => {
    t = await startService({ SERVICE_CONTEXT_PATH: '/meta/ui', SERVICE_LOGOUT_URL: 'https://sso.example/logout?back=${POST_LOGOUT_REDIRECT_URL}' });
  });
  after(() => t?.close());

  it('serves the shell below the context path, for the pages\' addresses', async () => {
    for (const path of ['/web', '/web/', '/web/db_1', '/web/db_1/tenants/3f1c0e9e-8a35-4a0c-9a3c-1f7d2f6d1a11', '/web/admin']) {
      const r = await t.request(path, { auth: null });
      expect(r.status, path).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^text\/html/);
      expect(r.headers.get('cache-control')).to.equal('no-store');
      expectSecurityHeaders(r);
      const html = await r.text();
      expect(html).to.match(/^<!doctype html><html lang="en">/);
      expect(html).to.match(/<script type="module" src="\/meta\/ui\/web\/assets\/app-[0-9A-F]+\.js"><\/script>/);
      expect(html).to.match(/<link rel="stylesheet" href="\/meta\/ui\/web\/assets\/app-[0-9A-F]+\.css">/);
      const config = JSON.parse(/<script type="application\/json" id="service-config">(.*?)<\/script>/.exec(html)![1]);
      expect(config).to.deep.equal({ contextPath: '/meta/ui', signIn: 'password', languages: ['en', 'de'], defaultLanguage: 'en' });
      // No inline script other than the JSON data, no inline style.
      expect(html.match(/<script/g)!.length).to.equal(2);
      expect(html).not.to.match(/style=|<style/);
    }
    expect((await fetch(t.url.replace('/meta/ui', '') + '/web')).status).to.equal(404);
  });

  it('serves the assets, compressed as asked, cached for good; an unknown one is 404', async () => {
    const html = await (await t.request('/web/', { auth: null })).text();
    const script = /src="\/meta\/ui(\/web\/assets\/[^"]+)"/.exec(html)![1];
    const plain = await t.request(script, { auth: null, headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).to.equal(200);
    expect(plain.headers.get('content-type')).to.match(/^text\/javascript/);
    expect(plain.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expectSecurityHeaders(plain);
    const body = Buffer.from(await plain.arrayBuffer());
    for (const encoding of ['br', 'gzip']) {
      const r = await fetch(`${t.url}${script}`, { headers: { 'accept-encoding': encoding } });
      expect(r.headers.get('content-encoding')).to.equal(encoding);
      // fetch decodes what it is sent: the same bytes.
      expect(Buffer.from(await r.arrayBuffer()).equals(body)).to.equal(true);
    }
    const unknown = await t.request('/web/assets/app-0000.js', { auth: null });
    expect(unknown.status).to.equal(404);
    expectSecurityHeaders(unknown);
  });

  it('hands a page the session its cookie holds for the page\'s scope, and none for another scope or without the cookie', async () => {
    const db = await createDatabase(t);
    const other = await createDatabase(t);
    const s = await signIn(t, { database: db, ...ADMIN });
    const configOf = async (path: string, cookie?: string) => {
      const html = await (await t.request(path, { auth: null, headers: cookie ? { cookie } : {} })).text();
      return JSON.parse(/<script type="application\/json" id="service-config">(.*?)<\/script>/.exec(html)![1]);
    };
    const here = await configOf(`/web/${db}/schemes/3f1c0e9e-8a35-4a0c-9a3c-1f7d2f6d1a11`, s.cookie);
    expect(here.session).to.include({ database: db, csrfToken: s.csrfToken, loginId: ADMIN.loginId, systemAdmin: true });
    expect(await configOf(`/web/${other}`, s.cookie)).not.to.have.property('session');
    expect(await configOf('/web/admin', s.cookie)).not.to.have.property('session');
    expect(await configOf(`/web/${db}`)).not.to.have.property('session');
    expect(await configOf(`/web/${db}`, `${s.cookie}x`)).not.to.have.property('session');
    // Signed out: the shell no longer has it.
    expect((await t.request(`/web/session?database=${db}`, withSession(s, { method: 'DELETE' }))).status).to.equal(200);
    expect(await configOf(`/web/${db}`, s.cookie)).not.to.have.property('session');
    const admin = await signIn(t, { ...ADMIN });
    expect((await configOf('/web/admin', admin.cookie)).session).to.include({ database: null, csrfToken: admin.csrfToken });
    expect((await configOf('/web/', admin.cookie)).session).to.include({ database: null });
    // A reload of /web/admin asks again with the cookie alone: the service-wide session answers.
    const again = await t.request('/web/session', { auth: null, headers: { cookie: admin.cookie } });
    expect(again.status).to.equal(200);
    expect(await again.json()).to.include({ csrfToken: admin.csrfToken, systemAdmin: true });
  });

  it('sets the cookie on the context path and tells where Logout leads, at sign-in and at sign-out', async () => {
    const db = await createDatabase(t);
    const s = await signIn(t, { database: db, ...ADMIN });
    expect(s.setCookie).to.match(/; path=\/meta\/ui\/(;|$)/i);
    const page = `${t.url}/web/${db}`;
    expect(s.body.logoutUrl).to.equal(`https://sso.example/logout?back=${encodeURIComponent(page)}`);
    const out = await t.request(`/web/session?database=${db}`, withSession(s, { method: 'DELETE' }));
    expect(out.status).to.equal(200);
    expect(await out.json()).to.deep.equal({ logoutUrl: `https://sso.example/logout?back=${encodeURIComponent(page)}` });
  });
});

describe('the pages under pre-authentication', () => {
  let t: TestService;

  before(async () => {
    t = await startService({ ...PREAUTH_ENV });
  });
  after(() => t?.close());

  it('tells the pages there is no sign-in dialog, and GET /web/session signs in by the proxy\'s headers, without a token', async () => {
    const html = await (await t.request('/web/', { auth: null })).text();
    expect(html).to.include('"signIn":"preauth"');
    const r = await t.request('/web/session', proxied('admin'));
    expect(r.status).to.equal(200);
    const body = await r.json();
    expect(body).to.include({ loginId: 'admin', systemAdmin: true });
    expect(body).not.to.have.property('csrfToken');
    expect((await t.request('/web/session', { auth: null })).status).to.equal(401);
    expect((await t.request('/web/session', proxied('admin', {}, { method: 'POST', json: { loginId: 'admin', password: 'x' } }))).status).to.equal(403);
  });
});
