/**
 * The pages under OpenID Connect and a context path (issue 18): the sign-in
 * page offers only the single sign-on button, which leads through the
 * provider's login page back to the page one came from, signed in; a person
 * the service refuses comes back to the page with the error's message.
 */
import { expect } from 'chai';
import { freePort, SERVICE_CLIENT_SECRET, startOidcProvider, type TestProvider } from '../helpers/oidc-provider.ts';
import { rememberSecret } from '../helpers/secrets.ts';
import { startService, uniqueName, type TestService } from '../helpers/service.ts';
import { account, ADMIN_LOGIN, bearer, createDatabaseWith, oidcEnv, tokenOf } from '../plugins/auth-oidc/helpers.ts';
import { closePages, open } from './web.ts';

describe('user interface: signing in with OpenID Connect below a context path', function () {
  this.timeout(120_000);
  let provider: TestProvider;
  let t: TestService;
  let db: string;
  const alice = account('alice');
  const admin = account(ADMIN_LOGIN, {}, 'sub-admin');
  const mallory = account('mallory');

  before(async () => {
    const port = await freePort();
    const options = { accounts: [admin, alice, mallory], redirectUris: [`http://127.0.0.1:${port}/mms/web/auth`] };
    provider = await startOidcProvider(options);
    for (const a of provider.accounts) rememberSecret(a.password, 'provider password');
    t = await startService({ ...oidcEnv(provider, { SERVICE_OIDC_CLIENT_SECRET: SERVICE_CLIENT_SECRET }), PORT: String(port), SERVICE_CONTEXT_PATH: '/mms' });
    const token = await tokenOf(provider, ADMIN_LOGIN);
    db = await createDatabaseWith(t, token, uniqueName());
    const r = await t.request(`/rest/${db}/users`, bearer(token, {}, { method: 'POST', json: { _type: 'User', loginId: 'alice', accessLevel: 'EDITOR' } }));
    expect(r.status, await r.clone().text()).to.equal(201);
    const scheme = await t.request(`/rest/${db}/schemes`, bearer(token, {}, { method: 'POST', json: { _type: 'Scheme', label: 'Orders' } }));
    expect(scheme.status).to.equal(201);
  });
  beforeEach(closePages);
  after(async () => {
    await closePages();
    await t?.close();
    await provider?.close();
  });

  async function throughProvider(who: { username: string; password: string }, path: string) {
    const { page } = await open();
    await page.goto(`${t.url}${path}`);
    expect(await page.locator('#signin-password').count()).to.equal(0);
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await page.getByLabel('User name').fill(who.username);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    return page;
  }

  it('leads through the provider back to the page, signed in', async () => {
    const page = await throughProvider(alice, `/web/${db}?at=${encodeURIComponent('2030-01-01T00:00:00.000Z')}`);
    await page.getByRole('banner').getByText('Signed in as alice').waitFor();
    const url = new URL(page.url());
    expect(url.pathname).to.equal(`/mms/web/${db}`);
    expect(url.searchParams.get('at')).to.equal('2030-01-01T00:00:00.000Z');
    await page.getByRole('navigation', { name: 'Contents of the database' }).getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('heading', { level: 1, name: /Orders/ }).waitFor();
    expect(new URL(page.url()).pathname).to.match(new RegExp(`^/mms/web/${db}/schemes/[0-9a-f-]{36}$`));
  });

  it('shows the message of the error a refused person comes back with', async () => {
    const page = await throughProvider(mallory, `/web/${db}`);
    await page.getByRole('alert').waitFor();
    expect(new URL(page.url()).searchParams.get('signInError')).to.be.a('string');
    expect(await page.getByRole('alert').textContent()).to.match(/no access|not accepted|failed/);
    expect(await page.getByRole('link', { name: 'Sign in with single sign-on' }).count()).to.equal(1);
  });
});
