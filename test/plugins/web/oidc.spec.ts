/**
 * Sign-in to the pages with OpenID Connect, end to end over HTTP: the
 * service sends the browser to the test provider, the provider's own login
 * page signs the person in, the service exchanges the code (PKCE, state,
 * nonce), verifies the ID token as a bearer token, opens the session and
 * sends the browser back. Plain HTTP requests with a cookie jar play the
 * browser.
 */
import { expect } from 'chai';
import { freePort, SERVICE_CLIENT_SECRET, startOidcProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startService, uniqueName, type TestService } from '../../helpers/service.ts';
import { rememberSecret } from '../../helpers/secrets.ts';
import { account, ADMIN_LOGIN, createDatabaseWith, createUserWith, oidcEnv, tokenOf } from '../auth-oidc/helpers.ts';
import { withSession } from './helpers.ts';

/** A browser's cookies, per host, without the finer rules (enough for two test servers on 127.0.0.1 ports). */
class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  private cookiesOf(url: URL) {
    if (!this.jar.has(url.host)) this.jar.set(url.host, new Map());
    return this.jar.get(url.host)!;
  }

  cookie(url: string, name: string): string | undefined {
    return this.cookiesOf(new URL(url)).get(name);
  }

  /** One request, no redirects followed; cookies kept. */
  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookies = [...this.cookiesOf(target)].map(([k, v]) => `${k}=${v}`).join('; ');
    const headers = new Headers(init.headers);
    if (cookies) headers.set('cookie', cookies);
    const r = await fetch(target, { ...init, headers, redirect: 'manual' });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(c) || value === '') this.cookiesOf(target).delete(name);
      else this.cookiesOf(target).set(name, value);
    }
    return r;
  }

  /** Follows redirects while they stay off `stopAt` (a URL prefix), returning the answer there or the last one. */
  async follow(url: string, stopAt: string): Promise<{ url: string; response: Response }> {
    let at = url;
    for (let i = 0; i < 10; i++) {
      if (i > 0 && at.startsWith(stopAt)) return { url: at, response: new Response(null, { status: 204 }) };
      const r = await this.request(at);
      const location = r.headers.get('location');
      if (r.status < 300 || r.status >= 400 || !location) return { url: at, response: r };
      at = new URL(location, at).href;
    }
    throw new Error('too many redirects');
  }
}

describe('sign-in to the pages with OpenID Connect (code flow)', () => {
  let provider: TestProvider;
  let t: TestService;
  let db: string;
  let port: number;
  const alice = account('alice', { groups: ['staff'] });
  const admin = account(ADMIN_LOGIN, {}, 'sub-admin');
  const mallory = account('mallory');
  const carol = account('carol');
  let carolId: string;

  before(async () => {
    port = await freePort();
    provider = await startOidcProvider({ accounts: [admin, alice, mallory, carol], redirectUris: [`http://127.0.0.1:${port}/mms/web/auth`] });
    for (const a of provider.accounts) rememberSecret(a.password, 'provider password');
    t = await startService({ ...oidcEnv(provider, { SERVICE_OIDC_CLIENT_SECRET: SERVICE_CLIENT_SECRET }), PORT: String(port), SERVICE_CONTEXT_PATH: '/mms' });
    const adminToken = await tokenOf(provider, ADMIN_LOGIN);
    db = await createDatabaseWith(t, adminToken, uniqueName());
    await createUserWith(t, db, adminToken, { loginId: 'alice', accessLevel: 'EDITOR' });
    carolId = (await createUserWith(t, db, adminToken, { loginId: 'carol', accessLevel: 'EDITOR' })).id as string;
  });
  after(async () => {
    await t?.close();
    await provider?.close();
  });

  /** The service's /web/login, the provider's login form filled in, back to the service's /web/auth. */
  async function signInAt(browser: Browser, who: { username: string; password: string }, returnPath = `/mms/web/${db}/schemes`) {
    const start = await browser.request(`${t.url}/web/login?database=${db}&return=${encodeURIComponent(returnPath)}`);
    expect(start.status).to.equal(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).to.equal(provider.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authorize.searchParams.get('state')).to.be.a('string');
    expect(authorize.searchParams.get('nonce')).to.be.a('string');
    expect(authorize.searchParams.get('redirect_uri')).to.equal(`${t.url}/web/auth`);
    // To the provider's login page.
    const page = await browser.follow(authorize.href, t.url);
    expect(page.response.status).to.equal(200);
    const html = await page.response.text();
    const action = /action="([^"]+)"/.exec(html)![1];
    const posted = await browser.request(new URL(action, page.url).href, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: who.username, password: who.password }).toString(),
    });
    expect(posted.status, await posted.clone().text()).to.be.within(300, 399);
    // The provider's redirects lead back to the service's /web/auth.
    const back = await browser.follow(new URL(posted.headers.get('location')!, action.startsWith('http') ? action : page.url).href, `${t.url}/web/auth`);
    expect(back.url.startsWith(`${t.url}/web/auth?`), back.url).to.equal(true);
    return back.url;
  }

  it('signs a person in through the provider\'s login page and opens a session', async () => {
    const browser = new Browser();
    const callback = await signInAt(browser, alice);
    const done = await browser.request(callback);
    expect(done.status).to.equal(302);
    expect(done.headers.get('location')).to.equal(`/mms/web/${db}/schemes`);
    const cookie = browser.cookie(t.url, `mds-db-${db}`);
    expect(cookie).to.be.a('string');
    rememberSecret(cookie!, 'session cookie');
    const session = await browser.request(`${t.url}/web/session?database=${db}`);
    expect(session.status).to.equal(200);
    const body = await session.json();
    expect(body).to.include({ loginId: 'alice', accessLevel: 'EDITOR', method: 'oidc' });
    const s = { cookie: `mds-db-${db}=${cookie}`, csrfToken: body.csrfToken as string };
    expect((await t.request(`/rest/${db}/tenants`, withSession(s))).status).to.equal(200);
    expect((await t.request(`/rest/${db}/tenants`, withSession(s, {}, null))).status).to.equal(401);
  });

  it('refuses the same answer of the provider twice (state replay)', async () => {
    const browser = new Browser();
    const callback = await signInAt(browser, alice);
    expect((await browser.request(callback)).status).to.equal(302);
    const again = await new Browser().request(callback);
    expect(again.status).to.equal(302);
    expect(again.headers.get('location')).to.match(/\/mms\/web\/\?signInError=CREDENTIALS_REFUSED$/);
    expect(again.headers.getSetCookie().some((c) => c.startsWith('mds-db-'))).to.equal(false);
  });

  it('refuses a return address that is not a path below the pages (open redirect)', async () => {
    for (const target of ['https://evil.example/', '//evil.example/mms/web/', '/\\evil.example', '/mms/api/admin/databases', 'https://127.0.0.1/mms/web/x', '/mms/web/../../evil']) {
      const r = await t.request(`/web/login?database=${db}&return=${encodeURIComponent(target)}`, { auth: null, redirect: 'manual' });
      expect(r.status, target).to.equal(400);
    }
  });

  it('sends a person the service does not let in back to the page with the error', async () => {
    const browser = new Browser();
    const callback = await signInAt(browser, mallory);
    const done = await browser.request(callback);
    expect(done.status).to.equal(302);
    expect(done.headers.get('location')).to.equal(`/mms/web/${db}?signInError=FORBIDDEN`);
    expect(browser.cookie(t.url, `mds-db-${db}`)).to.equal(undefined);
  });

  it('refuses the provider\'s answer in a browser other than the one that began the sign-in (login CSRF), and lets the right one finish', async () => {
    const mine = new Browser();
    const callback = await signInAt(mine, alice);
    const victim = new Browser();
    const slipped = await victim.request(callback);
    expect(slipped.status).to.equal(302);
    expect(slipped.headers.get('location')).to.match(/\/mms\/web\/\?signInError=CREDENTIALS_REFUSED$/);
    expect(slipped.headers.getSetCookie().some((c) => c.startsWith('mds-db-'))).to.equal(false);
    const start = await new Browser().request(`${t.url}/web/login?database=${db}`);
    const binding = start.headers.getSetCookie().find((c) => c.startsWith('mds-sign-in='))!;
    expect(binding).to.match(/; path=\/mms\/web\/auth/i).and.match(/; samesite=lax/i).and.match(/; httponly/i);
    // The one that began it still can.
    const done = await mine.request(callback);
    expect(done.status).to.equal(302);
    expect(done.headers.get('location')).to.not.match(/signInError/);
  });

  it('refuses an answer with a forged state', async () => {
    const r = await t.request(`/web/auth?code=abc&state=${uniqueName('forged')}`, { auth: null, redirect: 'manual' });
    expect(r.status).to.equal(302);
    expect(r.headers.get('location')).to.match(/signInError=CREDENTIALS_REFUSED/);
  });

  it('assigns the session\'s identity again on every request: a removed user is refused at once', async () => {
    const browser = new Browser();
    expect((await browser.request(await signInAt(browser, carol))).status).to.equal(302);
    const cookie = browser.cookie(t.url, `mds-db-${db}`)!;
    rememberSecret(cookie, 'session cookie');
    const { csrfToken } = await (await browser.request(`${t.url}/web/session?database=${db}`)).json();
    const s = { cookie: `mds-db-${db}=${cookie}`, csrfToken };
    expect((await t.request(`/rest/${db}/schemes`, withSession(s))).status).to.equal(200);
    const adminToken = await tokenOf(provider, ADMIN_LOGIN);
    expect((await t.request(`/rest/${db}/users/${carolId}`, { auth: null, method: 'DELETE', headers: { authorization: `Bearer ${adminToken}` } })).status).to.be.oneOf([200, 204]);
    expect((await t.request(`/rest/${db}/schemes`, withSession(s))).status).to.equal(403);
  });

  it('takes no password sign-in while OpenID Connect is on', async () => {
    const r = await t.request('/web/session', { method: 'POST', auth: null, json: { database: db, loginId: 'alice', password: alice.password } });
    expect(r.status).to.equal(403);
  });
});
