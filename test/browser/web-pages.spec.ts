/**
 * The pages of a database (issue 18) in a real browser over the real
 * service: the tree and the search lead to an object; forms create and
 * change objects, show the service's violations at their fields and never
 * overwrite another person's change; time travel reads old states without
 * editing; access levels, languages, a phone's width, the keyboard alone,
 * axe-core, hostile labels and descriptions, and custom properties from
 * uploaded annotations.
 */
import { expect } from 'chai';
import type { Page, Request } from 'playwright-core';
import { axe } from '../helpers/browser.ts';
import { createDatabase } from '../helpers/service.ts';
import { createTenant, createUser, secret } from '../auth/fixtures.ts';
import { upload } from '../plugins/profiles/fixtures.ts';
import { closePages, open, pageOf, rest, signIn, startWeb, type Json, type Web } from './web.ts';

const HOSTILE = '<script>window.__pwned = 1</script>';

describe('user interface: the pages of a database', function () {
  this.timeout(120_000);
  let web: Web;
  let db: string;
  let scheme: Json;
  let customer: Json;
  let name: Json;
  let hostile: Json;
  const reader = { loginId: 'web-reader', password: secret('web-reader-secret-1') };

  before(async () => {
    web = await startWeb();
    db = await createDatabase(web.t);
    scheme = await rest(web, 'POST', `/rest/${db}/schemes`, 201, { _type: 'Scheme', label: 'Orders', description: `All about **orders**. ${HOSTILE}` });
    customer = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers`, 201, { _type: 'Classifier', label: 'Customer', description: 'Who *buys*.' });
    name = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers/Customer/attributes`, 201, { _type: 'BusinessAttribute', label: 'customerName', description: 'The name.' });
    hostile = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers/Customer/attributes`, 201, { _type: 'BusinessAttribute', label: HOSTILE });
    await createUser(web.t, db, { ...reader, accessLevel: 'READ_ONLY' });
  });
  beforeEach(closePages);
  after(async () => {
    await closePages();
    await web?.close();
  });

  async function signedIn(options: Parameters<typeof open>[0] = {}, path = `/web/${db}`): Promise<Page> {
    const { page } = await open(options);
    await signIn(page, web, path);
    return page;
  }

  it('browses to an attribute through the tree, with breadcrumbs along the business-key path; every call carries the CSRF token and the language', async () => {
    const { page } = await open();
    const calls: Request[] = [];
    page.on('request', (r) => { if (/\/(rest|api)\//.test(r.url())) calls.push(r); });
    await signIn(page, web, `/web/${db}`);
    const tree = page.getByRole('navigation', { name: 'Contents of the database' });
    await tree.getByRole('button', { name: 'Open Orders' }).click();
    await tree.getByRole('button', { name: 'Open Classifiers (Orders)' }).click();
    await tree.getByRole('button', { name: 'Open Customer' }).click();
    await tree.getByRole('button', { name: 'Open Attributes (Customer)' }).click();
    await tree.getByRole('link', { name: 'customerName' }).click();
    await page.getByRole('heading', { level: 1, name: /customerName/ }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(pageOf(name));
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link');
    await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Customer', exact: true }).waitFor();
    expect(await crumbs.allTextContents()).to.deep.equal([db, 'Orders', 'Customer', 'customerName']);
    expect(calls.length).to.be.greaterThan(3);
    for (const r of calls) {
      const h = await r.allHeaders();
      expect(h['x-csrf-token'], r.url()).to.be.a('string').and.not.equal('');
      expect(h['accept-language'], r.url()).to.equal('en');
    }
  });

  it('finds an attribute by search and opens it with the arrow keys and Enter', async () => {
    const page = await signedIn();
    const box = page.getByRole('combobox', { name: 'Search' });
    await box.fill('customerNa');
    const option = page.getByRole('option', { name: /customerName/ });
    await option.waitFor();
    expect(await option.textContent()).to.contain('Business attribute').and.contain('Orders › Customer');
    await box.press('ArrowDown');
    await box.press('ArrowUp');
    await box.press('Enter');
    await page.getByRole('heading', { level: 1, name: /customerName/ }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(pageOf(name));
  });

  it('creates a classifier in a scheme and an attribute in it through the forms', async () => {
    const page = await signedIn({}, pageOf(scheme));
    const tree = page.getByRole('navigation', { name: 'Contents of the database' });
    await tree.getByRole('button', { name: 'Open Orders' }).click();
    await tree.getByRole('button', { name: 'Open Classifiers (Orders)' }).click();
    await tree.getByRole('link', { name: 'Customer', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Add Classifier' }).click();
    const form = page.getByRole('form', { name: 'New Classifier' });
    await form.getByLabel(/^Label( \(required\))?$/).fill('Invoice');
    await form.getByLabel(/^Description/).fill('A bill.');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: /Invoice/ }).waitFor();
    await tree.getByRole('link', { name: 'Invoice', exact: true }).waitFor();
    // A new classifier holds nothing yet: the tree offers nothing to open under it, where Customer has its attributes.
    expect(await tree.getByRole('button', { name: 'Open Invoice' }).count()).to.equal(0);
    expect(await tree.getByRole('button', { name: 'Open Customer' }).count()).to.equal(1);
    await page.getByRole('button', { name: 'Add Business attribute' }).click();
    const attrForm = page.getByRole('form', { name: 'New Business attribute' });
    await attrForm.getByLabel(/^Label( \(required\))?$/).fill('amount');
    await attrForm.getByLabel('Cardinality', { exact: true }).selectOption('ONE');
    await attrForm.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: /amount/ }).waitFor();
    const stored = await rest(web, 'GET', `/rest/${db}/schemes/Orders/classifiers/Invoice/attributes/amount`, 200);
    expect(stored).to.include({ label: 'amount', cardinality: 'ONE' });
    expect(new URL(page.url()).pathname).to.equal(pageOf(stored));
  });

  it('shows a violation of the service next to the field it names', async () => {
    const page = await signedIn({}, pageOf(customer));
    await page.getByRole('button', { name: 'Add Business attribute' }).click();
    const form = page.getByRole('form', { name: 'New Business attribute' });
    await form.getByRole('button', { name: 'Create' }).click();
    await form.getByRole('alert').waitFor();
    const label = form.getByLabel(/^Label( \(required\))?$/);
    expect(await label.getAttribute('aria-invalid')).to.equal('true');
    const described = (await label.getAttribute('aria-describedby'))!.split(' ');
    const errorId = described.find((id) => id.endsWith('-error'))!;
    expect(await page.locator(`#${errorId}`).textContent()).to.match(/mandatory/);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).to.equal('label');
  });

  it('a lost race (412) tells so and shows the newer version, never overwriting it', async () => {
    const page = await signedIn({}, pageOf(customer));
    await page.getByRole('button', { name: 'Edit' }).click();
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${customer.id}`, 200, { title: 'Theirs' });
    await page.getByRole('form', { name: /Edit Classifier/ }).getByLabel(/^Title/).fill('Mine');
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).to.contain('Someone else changed this object');
    await page.locator('[data-property="title"] dd', { hasText: 'Theirs' }).waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/classifiers/${customer.id}`, 200)).title).to.equal('Theirs');
  });

  it('time travel shows the old value with a banner, keeps ?at= while navigating, reads with version and allows no editing', async () => {
    const before = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers`, 201, { _type: 'Classifier', label: 'Supplier', description: 'Old text' });
    await new Promise((r) => setTimeout(r, 20));
    const at = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${before.id}`, 200, { description: 'New text' });
    const { page } = await open();
    const reads: string[] = [];
    page.on('request', (r) => { if (r.method() === 'GET' && /\/rest\//.test(r.url()) && !/\/(search|history)\b/.test(r.url())) reads.push(r.url()); });
    await signIn(page, web, `${pageOf(before)}?at=${encodeURIComponent(at)}`);
    await page.locator('[data-property="description"] dd', { hasText: 'Old text' }).waitFor();
    expect(await page.locator('.time-travel').textContent()).to.contain('Editing is off');
    expect(await page.getByRole('button', { name: 'Edit' }).count()).to.equal(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).to.equal(0);
    expect(await page.getByRole('button', { name: /^Add / }).count()).to.equal(0);
    await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('heading', { level: 1, name: /Orders/ }).waitFor();
    expect(new URL(page.url()).searchParams.get('at')).to.equal(at);
    expect(reads.length).to.be.greaterThan(2);
    for (const url of reads) expect(new URL(url).searchParams.get('version') ?? new URL(url).searchParams.get('cursor'), url).to.be.a('string');
    await page.getByRole('link', { name: 'Back to now' }).first().click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
  });

  it('shows a READ_ONLY person no edit controls', async () => {
    const { page } = await open();
    await signIn(page, web, pageOf(customer), reader);
    await page.getByRole('heading', { level: 1, name: /Customer/ }).waitFor();
    await page.getByRole('heading', { name: /Attributes/ }).waitFor();
    expect(await page.getByRole('button', { name: /^(Edit|Delete|Add )/ }).count()).to.equal(0);
    expect(await page.getByText('You can read but not change').count()).to.equal(1);
  });

  it('speaks German by the browser, switches to English and keeps the choice; lang follows', async () => {
    const page = await signedIn({ locale: 'de-DE' }, pageOf(customer));
    await page.getByRole('heading', { name: 'Allgemein' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).to.equal('de');
    expect(await page.getByRole('button', { name: 'Bearbeiten' }).count()).to.equal(1);
    await page.getByLabel('Sprache').selectOption('en');
    await page.getByRole('heading', { name: 'General' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).to.equal('en');
    await page.reload();
    await page.getByRole('heading', { name: 'General' }).waitFor();
  });

  it('at 390 px the sidebar is behind a button and nothing scrolls sideways', async () => {
    const page = await signedIn({ width: 390 }, pageOf(customer));
    await page.getByRole('heading', { level: 1, name: /Customer/ }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Contents of the database' });
    expect(await nav.isVisible()).to.equal(false);
    const menu = page.getByRole('button', { name: 'Contents' });
    expect(await menu.getAttribute('aria-expanded')).to.equal('false');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).to.equal('true');
    await nav.getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('heading', { level: 1, name: /Orders/ }).waitFor();
    await page.locator('.history table').waitFor();
    expect(await nav.isVisible()).to.equal(false);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
  });

  it('works with the keyboard alone: skip link, search, edit and save', async () => {
    const page = await signedIn({}, `/web/${db}`);
    await page.reload();
    await page.getByRole('main').getByText('Choose an object').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('main');
    for (let i = 0; i < 40 && (await page.evaluate(() => document.activeElement?.id)) !== 'search-input'; i++) await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('search-input');
    await page.keyboard.type('Customer');
    await page.getByRole('option', { name: /Customer/ }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: /Customer/ }).waitFor();
    for (let i = 0; i < 40 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Edit'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const title = page.getByRole('form', { name: /Edit Classifier/ }).getByLabel(/^Title/);
    await title.waitFor();
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.getAttribute('name'))) !== 'title'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Typed title');
    for (let i = 0; i < 60 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Save'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText('Saved.').waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/classifiers/${customer.id}`, 200)).title).to.equal('Typed title');
  });

  it('has no serious or critical axe-core violations on the sign-in page, the database, an object and its form', async () => {
    const { page } = await open();
    await page.goto(`${web.base}/web/${db}`);
    await page.locator('#signin-login').waitFor();
    expect(await axe(page)).to.deep.equal([]);
    await signIn(page, web, `/web/${db}`);
    await page.getByRole('main').getByText('Choose an object').waitFor();
    expect(await axe(page)).to.deep.equal([]);
    await page.goto(`${web.base}${pageOf(customer)}`);
    await page.getByRole('heading', { name: 'History' }).waitFor();
    await page.locator('.history table').waitFor();
    expect(await axe(page)).to.deep.equal([]);
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('button', { name: 'Save' }).waitFor();
    expect(await axe(page)).to.deep.equal([]);
  });

  it('shows a <script> in a label or a Markdown description as text, and never runs it', async () => {
    const page = await signedIn({}, pageOf(scheme));
    const description = page.locator('[data-property="description"] dd');
    await description.locator('strong', { hasText: 'orders' }).waitFor();
    expect(await description.textContent()).to.contain(HOSTILE);
    expect(await description.locator('script').count()).to.equal(0);
    await page.goto(`${web.base}${pageOf(hostile)}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.contain(HOSTILE);
    const search = page.getByRole('combobox', { name: 'Search' });
    await search.fill('pwned');
    await page.getByRole('option').first().waitFor();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).to.equal(undefined);
    expect(await page.locator('main script, nav script, header script').count()).to.equal(0);
  });

  it('shows responsibilities with links to the people, and adds one by searching for the person', async () => {
    const org = await rest(web, 'POST', `/rest/${db}/organizations`, 201, { _type: 'Organization', label: 'Bank' });
    const ada = await rest(web, 'POST', `/rest/${db}/organizations/Bank/persons`, 201, { _type: 'Person', label: 'Ada Lovelace', givenName: 'Ada', familyName: 'Lovelace', agentOf: org.id });
    await rest(web, 'POST', `/rest/${db}/persons`, 201, { _type: 'Person', label: 'Grace Hopper', givenName: 'Grace', familyName: 'Hopper', agentOf: org.id });
    const product = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers`, 201, { _type: 'Classifier', label: 'Product' });
    await rest(web, 'POST', `/rest/${db}/classifiers/${product.id}/attributedTo`, 201, { _type: 'Attribution', attributedTo: ada.id, role: 'Steward' });
    const page = await signedIn({}, pageOf(product));
    const region = page.getByRole('region', { name: /^Responsibilities/ });
    await region.getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('heading', { level: 1, name: /Ada Lovelace/ }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(pageOf(ada));
    await page.goBack();
    await region.getByRole('button', { name: 'Add Attribution' }).click();
    const form = page.getByRole('form', { name: 'New Attribution' });
    await form.getByRole('searchbox').first().fill('Grace');
    await form.getByRole('button', { name: /Grace Hopper/ }).click();
    await form.getByText('Chosen:').waitFor();
    await form.getByRole('button', { name: 'Create' }).click();
    await form.waitFor({ state: 'detached' });
    await region.getByRole('link', { name: 'Grace Hopper' }).waitFor();
    const list = await rest(web, 'GET', `/rest/${db}/classifiers/${product.id}/attributedTo`, 200);
    expect(list.total).to.equal(2);
  });

  it('shows who is signed in, and Log out ends the session and shows the sign-in page', async () => {
    const page = await signedIn({}, pageOf(customer));
    const header = page.getByRole('banner');
    expect(await header.textContent()).to.contain('Signed in as admin').and.contain('Tenant Default').and.contain(db);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#signin-login').waitFor();
    await page.reload();
    await page.locator('#signin-login').waitFor();
  });

  it('switches the login tenant from the header, and shows that tenant\'s objects', async () => {
    await createTenant(web.t, db, 'Elsewhere');
    await rest(web, 'POST', `/rest/${db}/schemes`, 201, { _type: 'Scheme', label: 'Far away' }, { 'service-tenant': 'Elsewhere' });
    const page = await signedIn({}, `/web/${db}`);
    const tree = page.getByRole('navigation', { name: 'Contents of the database' });
    await tree.getByRole('link', { name: 'Orders' }).waitFor();
    await page.getByRole('button', { name: 'Switch tenant' }).click();
    await page.getByLabel('Tenant', { exact: true }).fill('Elsewhere');
    await page.getByRole('button', { name: 'Switch', exact: true }).click();
    await page.getByRole('banner').getByText('Tenant Elsewhere').waitFor();
    await tree.getByRole('link', { name: 'Far away' }).waitFor();
    expect(await tree.getByRole('link', { name: 'Orders' }).count()).to.equal(0);
  });

  it('shows derivations both ways: to the derived attribute and back from it', async () => {
    const source = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers/Customer/attributes`, 201, { _type: 'BusinessAttribute', label: 'sourceField' });
    const target = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers/Customer/attributes`, 201, { _type: 'BusinessAttribute', label: 'targetField' });
    await rest(web, 'POST', `/rest/${db}/attributes/${source.id}/derivedTo`, 201, { _type: 'Derivation', derivedTo: target.id });
    const page = await signedIn({}, pageOf(source));
    await page.getByRole('region', { name: /^Derived to/i }).getByRole('link', { name: 'targetField' }).click();
    await page.getByRole('heading', { level: 1, name: /targetField/ }).waitFor();
    await page.getByRole('region', { name: /^Derived from/i }).getByRole('link', { name: 'sourceField' }).waitFor();
  });

  it('deletes an object after confirmation and goes to its parent', async () => {
    const doomed = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers`, 201, { _type: 'Classifier', label: 'Doomed' });
    const page = await signedIn({}, pageOf(doomed));
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).to.contain('Doomed');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await rest(web, 'GET', `/rest/${db}/classifiers/${doomed.id}`, 200);
    await page.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { level: 1, name: /Orders/ }).waitFor();
    await rest(web, 'GET', `/rest/${db}/classifiers/${doomed.id}`, 404);
  });

  it('stays quick with 1,000 attributes under a classifier: a page at a time in the tree and on the page', async () => {
    const big = await rest(web, 'POST', `/rest/${db}/schemes/Orders/classifiers`, 201, { _type: 'Classifier', label: 'Big' });
    const items = Array.from({ length: 1000 }, (_, i) => ({ _type: 'BusinessAttribute', label: `field${String(i).padStart(4, '0')}` }));
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${big.id}/attributes`, 200, items);
    const page = await signedIn({}, `/web/${db}`);
    const started = Date.now();
    await page.goto(`${web.base}${pageOf(big)}`);
    const list = page.getByRole('region', { name: /^Attributes/ });
    await list.getByRole('link', { name: 'field0000' }).waitFor();
    expect(Date.now() - started).to.be.below(10_000);
    expect(await list.getByRole('listitem').count()).to.equal(100);
    await list.getByRole('button', { name: 'Load more (100 of 1000)' }).click();
    await list.getByRole('link', { name: 'field0199' }).waitFor();
    const tree = page.getByRole('navigation', { name: 'Contents of the database' });
    await tree.getByRole('button', { name: 'Open Orders' }).click();
    await tree.getByRole('button', { name: 'Open Classifiers (Orders)' }).click();
    await tree.getByRole('button', { name: 'Open Big' }).click();
    await tree.getByRole('button', { name: 'Open Attributes (Big)' }).click();
    await tree.getByRole('link', { name: 'field0099' }).waitFor();
    expect(await tree.getByRole('link', { name: /^field\d+$/ }).count()).to.equal(100);
  });

  it('shows a custom property declared in uploaded annotations at once, and edits it', async () => {
    const page = await signedIn({}, pageOf(customer));
    await page.getByRole('heading', { name: 'General' }).waitFor();
    expect(await page.getByText('Data steward').count()).to.equal(0);
    const annotations = [
      'Classifier:',
      '  customProperties:',
      '    steward:',
      '      label: Datenverantwortung',
      '      labelEn: Data steward',
      '      baseType: STRING',
      '',
    ].join('\n');
    const r = await upload(web.t, db, 'annotations', Buffer.from(annotations));
    expect(r.status, await r.clone().text()).to.be.oneOf([200, 201, 204]);
    await page.reload();
    await page.locator('dt', { hasText: 'Data steward' }).waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('form', { name: /Edit Classifier/ }).getByLabel('Data steward').fill('Finance team');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await page.locator('[data-property="steward"] dd', { hasText: 'Finance team' }).waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/classifiers/${customer.id}`, 200)).customProperties).to.deep.equal({ steward: 'Finance team' });
  });

  it('edits a reference value and keeps its time series (a list of records, edited as JSON)', async () => {
    // Reference objects stand in reference data models (decisions §7.1).
    await rest(web, 'POST', `/rest/${db}/schemes`, 201, { _type: 'Scheme', label: 'Laws', modelType: 'ReferenceDataModel' });
    const law = await rest(web, 'POST', `/rest/${db}/schemes/Laws/enumerations`, 201, { _type: 'ReferenceObject', label: 'Tax law' });
    const timeSeries = [{ code: 'TL', shortText: 'Tax law', validFrom: Date.UTC(2020, 0, 1) }];
    const value = await rest(web, 'POST', `/rest/${db}/enumerations/${law.id}/literals`, 201, { _type: 'ReferenceValue', label: 'TL', timeSeries });
    const page = await signedIn({}, pageOf(value));
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: /Edit Reference value/ });
    await form.getByLabel(/^Title/).fill('Tax law of 2020');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect(await rest(web, 'GET', `/rest/${db}/referenceValues/${value.id}`, 200)).to.deep.include({ title: 'Tax law of 2020', timeSeries });
    // A changed series is written; a bad record is shown at the field.
    await page.getByRole('button', { name: 'Edit' }).click();
    await form.getByLabel(/^Time series/).fill(JSON.stringify([...timeSeries, { code: 'TL2', validFrom: Date.UTC(2024, 0, 1) }]));
    await page.getByRole('button', { name: 'Save' }).click();
    // Saved when the form has closed: the page offers Edit again.
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/referenceValues/${value.id}`, 200)).timeSeries.map((r: Json) => r.code)).to.deep.equal(['TL', 'TL2']);
    await page.getByRole('button', { name: 'Edit' }).click();
    await form.getByLabel(/^Time series/).fill('[{"shortText": "no code"}]');
    await page.getByRole('button', { name: 'Save' }).click();
    await form.locator('textarea[name="timeSeries"][aria-invalid="true"]').waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/referenceValues/${value.id}`, 200)).timeSeries).to.have.length(2);
  });
});
