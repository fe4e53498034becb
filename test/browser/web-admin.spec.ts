/**
 * The service-wide pages (issue 18): /web/admin lists, creates and drops
 * databases for a system administrator; /web/meta shows the metamodel's
 * database with its notice.
 */
import { expect } from 'chai';
import { axe } from '../helpers/browser.ts';
import { createDatabase } from '../helpers/service.ts';
import { closePages, open, rest, signIn, startWeb, type Json, type Web } from './web.ts';

describe('user interface: administration and the metamodel', function () {
  this.timeout(120_000);
  let web: Web;

  before(async () => {
    web = await startWeb();
  });
  beforeEach(closePages);
  after(async () => {
    await closePages();
    await web?.close();
  });

  it('/web/admin creates a database (a bad name refused at the field), links to it and drops it after the name is typed', async () => {
    const { page } = await open();
    await signIn(page, web, '/web/admin');
    await page.getByRole('heading', { name: 'Databases' }).waitFor();
    const nameField = page.getByLabel('Name', { exact: true });
    await nameField.fill('Not A Name');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('#db-name-error').waitFor();
    expect(await nameField.getAttribute('aria-invalid')).to.equal('true');
    expect(await nameField.getAttribute('aria-describedby')).to.equal('db-name-error');
    expect(await page.locator('#db-name-error').textContent()).to.match(/lower-case/);
    await nameField.fill('web_made');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('link', { name: 'web_made' }).waitFor();
    const dbs = (await rest(web, 'GET', '/api/admin/databases', 200)) as unknown as Json[];
    expect(dbs.map((d) => d.name)).to.include('web_made');
    expect(await axe(page)).to.deep.equal([]);

    await page.getByRole('button', { name: 'Drop web_made' }).click();
    const dialog = page.getByRole('dialog');
    const confirm = dialog.getByRole('button', { name: 'Drop' });
    expect(await confirm.isDisabled()).to.equal(true);
    await dialog.getByLabel('Name of the database to drop').fill('web_mad');
    expect(await confirm.isDisabled()).to.equal(true);
    await dialog.getByLabel('Name of the database to drop').fill('web_made');
    await confirm.click();
    await page.getByText('The database web_made was dropped.').waitFor();
    await page.getByRole('link', { name: 'web_made' }).waitFor({ state: 'detached' });
    const after = (await rest(web, 'GET', '/api/admin/databases', 200)) as unknown as Json[];
    expect(after.map((d) => d.name)).not.to.include('web_made');
  });

  it('/web/admin links to a database\'s pages', async () => {
    const db = await createDatabase(web.t);
    const { page } = await open();
    await signIn(page, web, '/web/admin');
    await page.getByRole('link', { name: db }).click();
    await signIn(page, web, `/web/${db}`);
    await page.getByRole('main').getByText('Choose an object').waitFor();
    expect(new URL(page.url()).pathname).to.equal(`${new URL(web.base).pathname.replace(/\/$/, '')}/web/${db}`);
  });

  it('/web/meta shows the notice and a type\'s properties', async () => {
    await createDatabase(web.t, 'meta');
    try {
      const { page } = await open();
      await signIn(page, web, '/web/meta');
      expect(await page.getByRole('note').textContent()).to.contain('npm run generate');
      await page.getByRole('combobox', { name: 'Search' }).fill('Classifier');
      await page.getByRole('option', { name: /^Classifier\s*Classifier/ }).first().click();
      await page.getByRole('heading', { level: 1, name: /Classifier/ }).waitFor();
      const attributes = page.getByRole('region', { name: /Attributes/ });
      await attributes.getByRole('link', { name: 'pluralName', exact: true }).waitFor();
      expect(await page.getByRole('note').count()).to.equal(1);
    } finally {
      // On PostgreSQL the whole run shares one server database, where `meta` is one name: other specs create it too.
      const dropped = await web.t.request('/api/admin/databases/meta', { method: 'DELETE' });
      expect(dropped.status).to.equal(204);
    }
  });
});
