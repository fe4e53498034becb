/**
 * The forms and the history of the pages (issue 18, part 1) in a real
 * browser over the real service: a list of references edited as removable
 * chips with a search (by mouse and by the keyboard alone), saved as the
 * array of technical keys the REST interface takes and reads back; a
 * write-only password never filled in, never shown, sent only when typed;
 * each history entry opened to show the old and the new value of what
 * changed, also for the oldest entry of a page; the search saying during
 * time travel that it searches the current state; all of it in German too.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { axe } from '../helpers/browser.ts';
import { createDatabase } from '../helpers/service.ts';
import { createUser, secret } from '../auth/fixtures.ts';
import { upload } from '../plugins/profiles/fixtures.ts';
import { closePages, open, pageOf, rest, signIn, startWeb, type Json, type Web } from './web.ts';

const ANNOTATIONS = [
  'Classifier:',
  '  customProperties:',
  '    related:',
  '      label: Verwandte Objekte',
  '      labelEn: Related objects',
  '      baseType: REFERENCE',
  '      cardinality: MANY',
  '',
].join('\n');

describe('user interface: forms with lists of references and secrets, history with old and new values', function () {
  this.timeout(120_000);
  let web: Web;
  let db: string;
  let hub: Json;
  let quokka: Json;
  let narwhal: Json;
  let axolotl: Json;
  const steward = { loginId: 'web-steward', password: secret('web-steward-secret-1') };

  before(async () => {
    web = await startWeb();
    db = await createDatabase(web.t);
    await rest(web, 'POST', `/rest/${db}/schemes`, 201, { _type: 'Scheme', label: 'Zoo' });
    const classifier = (label: string) => rest(web, 'POST', `/rest/${db}/schemes/Zoo/classifiers`, 201, { _type: 'Classifier', label });
    hub = await classifier('Enclosure');
    quokka = await classifier('Quokka');
    narwhal = await classifier('Narwhal');
    axolotl = await classifier('Axolotl');
    const r = await upload(web.t, db, 'annotations', Buffer.from(ANNOTATIONS));
    expect(r.status, await r.clone().text()).to.be.oneOf([200, 201, 204]);
    await createUser(web.t, db, { ...steward, accessLevel: 'ADMINISTRATOR' });
  });
  beforeEach(closePages);
  after(async () => {
    await closePages();
    await web?.close();
  });

  async function signedIn(path: string, options: Parameters<typeof open>[0] = {}): Promise<Page> {
    const { page } = await open(options);
    await signIn(page, web, path);
    return page;
  }

  const related = async (obj: Json) => (await rest(web, 'GET', `/rest/${db}/classifiers/${obj.id}`, 200)).customProperties?.related;

  /** Types into the reference search of the form and chooses the hit with that label. */
  async function addReference(page: Page, label: string) {
    const form = page.getByRole('form', { name: /Edit Classifier/ });
    await form.getByRole('searchbox', { name: 'Search for an object' }).fill(label);
    await form.getByRole('button', { name: `Classifier: ${label}` }).click();
    await form.getByRole('button', { name: `Remove ${label}` }).waitFor();
  }

  it('edits a list of references: adds two, removes one, saves the array of technical keys REST reads back, in order', async () => {
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${hub.id}`, 200, { customProperties: { related: [axolotl.id] } });
    const page = await signedIn(pageOf(hub));
    const shown = page.locator('[data-property="related"] dd');
    await shown.getByRole('link', { name: 'Axolotl' }).waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: /Edit Classifier/ });
    const group = form.getByRole('group', { name: 'Related objects' });
    await group.getByRole('button', { name: 'Remove Axolotl' }).waitFor();
    await addReference(page, 'Quokka');
    await addReference(page, 'Narwhal');
    // What is chosen is not offered again.
    await form.getByRole('searchbox', { name: 'Search for an object' }).fill('Quokka');
    await page.waitForTimeout(600);
    expect(await form.getByRole('button', { name: 'Classifier: Quokka' }).count()).to.equal(0);
    await form.getByRole('searchbox', { name: 'Search for an object' }).fill('');
    expect(await group.getByRole('listitem').allTextContents()).to.deep.equal(['Axolotl×', 'Quokka×', 'Narwhal×']);
    await group.getByRole('button', { name: 'Remove Axolotl' }).click();
    expect(await group.getByRole('link').allTextContents()).to.deep.equal(['Quokka', 'Narwhal']);
    const sent: Json[] = [];
    page.on('request', (r) => { if (r.method() === 'PUT') sent.push(r.postDataJSON()); });
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect(sent).to.have.length(1);
    expect(sent[0].customProperties.related).to.deep.equal([quokka.id, narwhal.id]);
    expect(await related(hub)).to.deep.equal([quokka.id, narwhal.id]);
    await page.reload();
    await shown.getByRole('link', { name: 'Narwhal' }).waitFor();
    expect(await shown.getByRole('link').allTextContents()).to.deep.equal(['Quokka', 'Narwhal']);
    // The other way round: what REST writes, the form shows in its order and saves unchanged.
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${hub.id}`, 200, { customProperties: { related: [narwhal.id, axolotl.id, quokka.id] } });
    await page.reload();
    await page.getByRole('button', { name: 'Edit' }).click();
    await group.getByRole('button', { name: 'Remove Quokka' }).waitFor();
    expect(await group.getByRole('link').allTextContents()).to.deep.equal(['Narwhal', 'Axolotl', 'Quokka']);
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect(await related(hub)).to.deep.equal([narwhal.id, axolotl.id, quokka.id]);
    // Removing every one leaves no value.
    await page.getByRole('button', { name: 'Edit' }).click();
    for (const label of ['Narwhal', 'Axolotl', 'Quokka']) await group.getByRole('button', { name: `Remove ${label}` }).click();
    await group.getByText('None chosen.').waitFor();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect(await related(hub)).to.equal(undefined);
  });

  it('adds and removes a reference with the keyboard alone; the form with the chips passes axe-core', async () => {
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${hub.id}`, 200, { customProperties: { related: [narwhal.id] } });
    const page = await signedIn(pageOf(hub));
    await page.getByRole('heading', { level: 1, name: /Enclosure/ }).waitFor();
    await page.locator('[data-property="related"] dd').getByRole('link', { name: 'Narwhal' }).waitFor();
    const active = () => page.evaluate(() => {
      const e = document.activeElement as HTMLElement | null;
      return { id: e?.id ?? '', name: e?.getAttribute('aria-label') ?? e?.textContent ?? '' };
    });
    for (let i = 0; i < 60 && (await active()).name !== 'Edit'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: /Edit Classifier/ });
    const group = form.getByRole('group', { name: 'Related objects' });
    await group.getByRole('button', { name: 'Remove Narwhal' }).waitFor();
    expect(await axe(page)).to.deep.equal([]);
    for (let i = 0; i < 30 && (await active()).id !== 'edit-customProperties-related'; i++) await page.keyboard.press('Tab');
    expect((await active()).id).to.equal('edit-customProperties-related');
    await page.keyboard.type('Quokka');
    await form.getByRole('button', { name: 'Classifier: Quokka' }).waitFor();
    await page.keyboard.press('Tab');
    expect((await active()).name).to.equal('Classifier: Quokka');
    await page.keyboard.press('Enter');
    await group.getByRole('button', { name: 'Remove Quokka' }).waitFor();
    // The focus goes back to the search, ready for the next one.
    expect((await active()).id).to.equal('edit-customProperties-related');
    expect(await axe(page)).to.deep.equal([]);
    for (let i = 0; i < 10 && (await active()).name !== 'Remove Narwhal'; i++) await page.keyboard.press('Shift+Tab');
    expect((await active()).name).to.equal('Remove Narwhal');
    await page.keyboard.press('Enter');
    await group.getByRole('button', { name: 'Remove Narwhal' }).waitFor({ state: 'detached' });
    // The focus moves to the chip that took its place.
    expect((await active()).name).to.equal('Remove Quokka');
    for (let i = 0; i < 60 && (await active()).name !== 'Save'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText('Saved.').waitFor();
    expect(await related(hub)).to.deep.equal([quokka.id]);
  });

  it('a password is an empty password field on editing, sent only when typed, and never shown', async () => {
    const first = secret('web-target-secret-1');
    const second = secret('web-target-secret-2');
    const target = await createUser(web.t, db, { loginId: 'web-target', password: first, accessLevel: 'READ_ONLY' }) as Json;
    const canSignIn = async (password: string) => (await web.t.request(`/rest/${db}/schemes`, { auth: { loginId: 'web-target', password } })).status;
    const { page } = await open();
    await signIn(page, web, pageOf(target), steward);
    await page.getByRole('heading', { level: 1, name: /web-target/ }).waitFor();
    await page.locator('[data-property="loginId"] dd', { hasText: 'web-target' }).waitFor();
    expect(await page.locator('[data-property="password"]').count()).to.equal(0);
    expect(await page.getByRole('main').textContent()).not.to.contain('Password');
    const sent: Json[] = [];
    page.on('request', (r) => { if (r.method() === 'PUT') sent.push(r.postDataJSON()); });
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: /Edit User/ });
    const password = form.getByLabel(/^Password/);
    expect(await password.getAttribute('type')).to.equal('password');
    expect(await password.getAttribute('autocomplete')).to.equal('new-password');
    expect(await password.inputValue()).to.equal('');
    expect(await form.getByText('Never shown.').count()).to.equal(1);
    await form.getByLabel(/^Access level/).selectOption('EDITOR');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect(sent).to.have.length(1);
    expect(sent[0]).not.to.have.property('password');
    expect(sent[0].accessLevel).to.equal('EDITOR');
    expect(await canSignIn(first)).to.equal(200);
    await page.getByRole('button', { name: 'Edit' }).click();
    expect(await password.inputValue()).to.equal('');
    await password.fill(second);
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect(sent[1].password).to.equal(second);
    expect(await canSignIn(second)).to.equal(200);
    expect(await canSignIn(first)).to.equal(401);
    // Nowhere on the page, nor in its history.
    await page.locator('.history table').waitFor();
    expect(await page.content()).not.to.contain(second);
    await page.getByRole('button', { name: 'Edit' }).click();
    expect(await password.inputValue()).to.equal('');
  });

  it('opens a history entry to show the old and the new value of a changed label, by the keyboard', async () => {
    const walrus = await rest(web, 'POST', `/rest/${db}/schemes/Zoo/classifiers`, 201, { _type: 'Classifier', label: 'Walrus', description: 'A *big* one.' });
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${walrus.id}`, 200, { label: 'Walross', description: 'Ein <b>großes</b> <img src=x onerror="window.__pwned=1">.' });
    const page = await signedIn(pageOf(walrus));
    const history = page.getByRole('region', { name: 'History' });
    const disclosure = history.getByRole('button', { name: /Changes of version 2\)$/ });
    await disclosure.waitFor();
    expect(await disclosure.textContent()).to.match(/^\W*Description, Label/);
    expect(await disclosure.getAttribute('aria-expanded')).to.equal('false');
    await disclosure.focus();
    await page.keyboard.press('Enter');
    expect(await disclosure.getAttribute('aria-expanded')).to.equal('true');
    const changes = history.getByRole('table', { name: 'Changes of version 2' });
    await changes.waitFor();
    expect(await disclosure.getAttribute('aria-controls')).to.equal('history-changes-2');
    expect(await axe(page)).to.deep.equal([]);
    const label = changes.locator('tr[data-property="label"]');
    expect(await label.locator('td.old').textContent()).to.equal('Walrus');
    expect(await label.locator('td.new').textContent()).to.equal('Walross');
    const description = changes.locator('tr[data-property="description"]');
    await description.locator('td.old em', { hasText: 'big' }).waitFor();
    expect(await description.locator('td.new').textContent()).to.contain('großes');
    expect(await description.locator('td.new img[onerror]').count()).to.equal(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).to.equal(undefined);
    await page.keyboard.press('Space');
    expect(await disclosure.getAttribute('aria-expanded')).to.equal('false');
    expect(await changes.isVisible()).to.equal(false);
    // A creation has no old values.
    await history.getByRole('button', { name: /Changes of version 1/ }).click();
    const created = history.getByRole('table', { name: 'Changes of version 1' });
    expect(await created.locator('tr[data-property="label"] td.old').textContent()).to.equal('—');
    expect(await created.locator('tr[data-property="label"] td.new').textContent()).to.equal('Walrus');
  });

  it('shows a changed list of references in the history as the links before and after', async () => {
    const pen = await rest(web, 'POST', `/rest/${db}/schemes/Zoo/classifiers`, 201, { _type: 'Classifier', label: 'Pen', customProperties: { related: [quokka.id] } });
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${pen.id}`, 200, { customProperties: { related: [narwhal.id, quokka.id] } });
    const page = await signedIn(pageOf(pen));
    const history = page.getByRole('region', { name: 'History' });
    const disclosure = history.getByRole('button', { name: /Changes of version 2\)$/ });
    expect(await disclosure.textContent()).to.match(/^\W*Related objects \(/);
    await disclosure.click();
    const row = history.getByRole('table', { name: 'Changes of version 2' }).getByRole('row', { name: /^Related objects/ });
    await row.locator('td.new').getByRole('link', { name: 'Narwhal' }).waitFor();
    expect(await row.locator('td.old').getByRole('link').allTextContents()).to.deep.equal(['Quokka']);
    expect(await row.locator('td.new').getByRole('link').allTextContents()).to.deep.equal(['Narwhal', 'Quokka']);
    await row.locator('td.new').getByRole('link', { name: 'Narwhal' }).click();
    await page.getByRole('heading', { level: 1, name: /Narwhal/ }).waitFor();
    // On a phone, the opened entry scrolls inside the history's table, never the page sideways.
    const phone = (await open({ width: 390 })).page;
    await signIn(phone, web, pageOf(pen));
    await phone.getByRole('region', { name: 'History' }).getByRole('button', { name: /Changes of version 2\)$/ }).click();
    await phone.getByRole('table', { name: 'Changes of version 2' }).getByRole('link', { name: 'Narwhal' }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
  });

  it('shows the old value of the oldest entry of a history page from the next page', async () => {
    const busy = await rest(web, 'POST', `/rest/${db}/schemes/Zoo/classifiers`, 201, { _type: 'Classifier', label: 'Busy', title: 't0' });
    for (let i = 1; i <= 21; i++) await rest(web, 'PATCH', `/rest/${db}/classifiers/${busy.id}`, 200, { title: `t${i}` });
    const page = await signedIn(pageOf(busy));
    const history = page.getByRole('region', { name: 'History' });
    await history.getByRole('button', { name: /Load more \(20 of 22\)/ }).waitFor();
    const last = history.getByRole('button', { name: /Changes of version 3\b/ });
    await last.click();
    const title = history.getByRole('table', { name: 'Changes of version 3' }).locator('tr[data-property="title"]');
    await title.locator('td.old', { hasText: 't1' }).waitFor();
    expect(await title.locator('td.new').textContent()).to.equal('t2');
  });

  it('says during time travel, in sight and to screen readers, that the search finds the current state', async () => {
    const at = new Date().toISOString();
    const page = await signedIn(`${pageOf(hub)}?at=${encodeURIComponent(at)}`);
    await page.getByRole('heading', { level: 1, name: /Enclosure/ }).waitFor();
    const box = page.getByRole('combobox', { name: 'Search' });
    const note = page.locator('#search-now');
    expect(await note.isVisible()).to.equal(true);
    expect(await note.textContent()).to.equal('The search finds objects as they are now, not as of the time shown.');
    expect(await box.getAttribute('aria-describedby')).to.equal('search-now');
    expect(await page.evaluate(() => {
      const input = document.getElementById('search-input')!;
      return input.getAttribute('aria-describedby')!.split(' ').map((id) => document.getElementById(id)?.textContent).join(' ');
    })).to.contain('as they are now');
    expect(await axe(page)).to.deep.equal([]);
    await page.getByRole('link', { name: 'Back to now' }).first().click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    expect(await note.count()).to.equal(0);
    expect(await box.getAttribute('aria-describedby')).to.equal(null);
  });

  it('says everything new in German, and in English after the switch', async () => {
    await rest(web, 'PATCH', `/rest/${db}/classifiers/${hub.id}`, 200, { customProperties: { related: [quokka.id] } });
    const steward2 = await rest(web, 'GET', `/rest/${db}/users/web-steward`, 200);
    const { page } = await open({ locale: 'de-DE' });
    await signIn(page, web, `${pageOf(hub)}?at=${encodeURIComponent(new Date().toISOString())}`);
    expect(await page.locator('#search-now').textContent()).to.equal('Die Suche findet Objekte im heutigen Stand, nicht im gezeigten.');
    await page.getByRole('link', { name: 'Zurück zu jetzt' }).first().click();
    await page.getByRole('button', { name: 'Bearbeiten' }).click();
    const form = page.getByRole('form', { name: /bearbeiten/ });
    const group = form.getByRole('group', { name: 'Verwandte Objekte' });
    await group.getByRole('button', { name: 'Quokka entfernen' }).waitFor();
    await group.getByRole('list', { name: 'Ausgewählt (1)' }).waitFor();
    await group.getByRole('searchbox', { name: 'Objekt suchen' }).fill('Narwhal');
    await group.getByRole('list', { name: 'Gefundene Objekte' }).waitFor();
    await group.getByRole('button', { name: 'Quokka entfernen' }).click();
    await group.getByText('Keine ausgewählt.').waitFor();
    await form.getByRole('button', { name: 'Abbrechen' }).click();
    const history = page.getByRole('region', { name: 'Verlauf' });
    await history.getByRole('button', { name: /Änderungen der Version 1/ }).click();
    const changes = history.getByRole('table', { name: 'Änderungen der Version 1' });
    await changes.getByRole('columnheader', { name: 'Vorher' }).waitFor();
    await changes.getByRole('columnheader', { name: 'Nachher' }).waitFor();
    await changes.getByRole('columnheader', { name: 'Eigenschaft' }).waitFor();
    await page.goto(`${web.base}${pageOf(steward2)}`);
    await page.getByRole('button', { name: 'Bearbeiten' }).click();
    await page.getByRole('form', { name: /bearbeiten/ }).getByText('Wird nie angezeigt.', { exact: false }).waitFor();
    await page.getByLabel('Sprache').selectOption('en');
    await page.getByRole('form', { name: /Edit User/ }).getByText('Never shown.', { exact: false }).waitFor();
  });
});
