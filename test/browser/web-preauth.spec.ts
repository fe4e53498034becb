/**
 * The pages behind a single sign-on proxy (issue 18): no sign-in dialog, the
 * proxy's headers sign every request in (here the browser context sends
 * them, as the proxy would add them); without them the page says so.
 */
import { expect } from 'chai';
import { createDatabaseAs, PREAUTH_ENV, proxied, USER_HEADER } from '../plugins/auth-preauth/helpers.ts';
import { startService, type TestService } from '../helpers/service.ts';
import { closePages, open } from './web.ts';

describe('user interface: behind a pre-authenticating proxy', function () {
  this.timeout(120_000);
  let t: TestService;
  let db: string;

  before(async () => {
    t = await startService({ ...PREAUTH_ENV });
    db = await createDatabaseAs(t, 'admin');
    const r = await t.request(`/rest/${db}/schemes`, proxied('admin', {}, { method: 'POST', json: { _type: 'Scheme', label: 'Orders' } }));
    expect(r.status).to.equal(201);
  });
  beforeEach(closePages);
  after(async () => {
    await closePages();
    await t?.close();
  });

  it('shows the pages without a sign-in dialog and lets the person edit', async () => {
    const { page } = await open({ context: { extraHTTPHeaders: { [USER_HEADER]: 'admin' } } });
    await page.goto(`${t.url}/web/${db}`);
    await page.getByRole('banner').getByText('Signed in as admin').waitFor();
    expect(await page.locator('#signin-password').count()).to.equal(0);
    await page.getByRole('navigation', { name: 'Contents of the database' }).getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('form', { name: /Edit Scheme/ }).getByLabel(/^Title/).fill('Via proxy');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const stored = await (await t.request(`/rest/${db}/schemes/Orders`, proxied('admin'))).json();
    expect(stored.title).to.equal('Via proxy');
    expect(await page.getByRole('button', { name: 'Log out' }).count()).to.equal(0);
  });

  it('says so when the proxy did not sign the person in', async () => {
    const { page } = await open();
    await page.goto(`${t.url}/web/${db}`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.contain('single sign-on');
    expect(await page.locator('#signin-password').count()).to.equal(0);
  });
});
