/**
 * The tenant page (`/web/<db>/tenant`, issue 21) in a real browser over the
 * real service: an administrator creates a user who then signs in in a
 * second browser context, edits and deletes users (filter and paging);
 * issues an access key that works from outside the browser until it is
 * revoked in the page; writes access rules and sees the explain form pick
 * the right one; uploads annotations with an error (line and column, nothing
 * stored), then valid ones whose custom property appears on an object's
 * form, and edits them in the YAML editor; a system administrator creates
 * and renames tenants. READ_ONLY and EDITOR users get no link, the page says
 * they may not, and the service refuses the calls behind it. German, a
 * phone's width, axe-core; every change carries the anti-forgery token.
 */
import fs from 'node:fs/promises';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { axe } from '../helpers/browser.ts';
import { ADMIN, createDatabase } from '../helpers/service.ts';
import { rememberSecret } from '../helpers/secrets.ts';
import { createUser, secret } from '../auth/fixtures.ts';
import { download as downloadProfile, upload } from '../plugins/profiles/fixtures.ts';
import { closePages, open, rest, signIn, startWeb, type Json, type Web } from './web.ts';

const BAD_ANNOTATIONS = 'Classifier:\n  customProperties:\n    ticket: { baseType: NOPE }\n';
const MARKUP = '<img src=x onerror="document.title=\'owned\'">';
const GOOD_ANNOTATIONS = 'Classifier:\n  customProperties:\n    ticket:\n      label: Vorgang\n      labelEn: Ticket number\n      baseType: STRING\n';

describe('user interface: the tenant page', function () {
  this.timeout(120_000);
  let web: Web;
  let db: string;
  const editor = { loginId: 'tenant-editor', password: secret('tenant-editor-secret-1') };
  const reader = { loginId: 'tenant-reader', password: secret('tenant-reader-secret-1') };
  const steward = { loginId: 'tenant-steward', password: secret('tenant-steward-secret-1') };
  /** Anti-forgery tokens of every change the pages sent (method, path, token). */
  let changes: { method: string; path: string; token?: string }[] = [];

  before(async () => {
    web = await startWeb();
    db = await createDatabase(web.t);
    await createUser(web.t, db, { ...editor, accessLevel: 'EDITOR' });
    await createUser(web.t, db, { ...reader, accessLevel: 'READ_ONLY' });
    await createUser(web.t, db, { ...steward, accessLevel: 'ADMINISTRATOR' });
    // Enough users for a second page of the list (20 a page).
    await Promise.all(Array.from({ length: 19 }, (_, i) => createUser(web.t, db, { loginId: `bulk-${String(i + 1).padStart(2, '0')}`, accessLevel: 'READ_ONLY' })));
    // A name that is markup: shown as text.
    await rest(web, 'POST', `/rest/${db}/users`, 201, { _type: 'User', loginId: 'bulk-00', accessLevel: 'READ_ONLY', givenName: MARKUP, familyName: 'Tables' });
    await rest(web, 'POST', `/rest/${db}/schemes`, 201, { _type: 'Scheme', label: 'Zoo' });
  });
  beforeEach(async () => {
    await closePages();
    changes = [];
  });
  after(async () => {
    await closePages();
    await web?.close();
  });

  async function tenantPage(options: Parameters<typeof open>[0] & { as?: typeof steward } = {}): Promise<Page> {
    const { as, ...rest } = options;
    const { page } = await open(rest);
    page.on('request', (r) => {
      if (!['GET', 'HEAD'].includes(r.method()) && /\/(rest|api)\//.test(r.url())) changes.push({ method: r.method(), path: new URL(r.url()).pathname, token: r.headers()['x-csrf-token'] });
    });
    await signIn(page, web, `/web/${db}`, as);
    await page.getByRole('link', { name: /^(Tenant|Mandant)$/ }).click();
    await page.getByRole('heading', { level: 1, name: /^(Tenant|Mandant) Default$/ }).waitFor();
    return page;
  }

  const usersTable = (page: Page) => page.locator('table.users');
  const row = (page: Page, loginId: string) => usersTable(page).locator(`tr[data-user="${loginId}"]`);
  const userOf = async (loginId: string): Promise<Json | undefined> => (await rest(web, 'GET', `/rest/${db}/users?loginId=${loginId}`, 200))._embedded.users[0];

  function expectTokens() {
    expect(changes.length).to.be.greaterThan(0);
    for (const c of changes) expect(c.token, `${c.method} ${c.path}`).to.be.a('string').and.not.equal('');
  }

  it('creates a user who then signs in in a second browser; edits, filters, pages and deletes users', async () => {
    const page = await tenantPage();
    expect(new URL(page.url()).pathname).to.equal(`/web/${db}/tenant`);
    await usersTable(page).waitFor();
    // The first page of 23 users (sorted by login ID), then the next.
    await page.getByText('23 users match.').waitFor();
    expect(await usersTable(page).locator('tbody tr').count()).to.equal(20);
    expect(await row(page, 'bulk-00').locator('td').first().textContent()).to.equal(`${MARKUP} Tables`);
    expect(await usersTable(page).locator('img').count()).to.equal(0);
    await page.getByRole('button', { name: 'Next page' }).click();
    await row(page, 'tenant-steward').waitFor();
    expect(await usersTable(page).locator('tbody tr').count()).to.equal(3);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await row(page, 'bulk-00').waitFor();

    await page.getByRole('button', { name: 'Create a user' }).click();
    const form = page.locator('form.user-form');
    await form.getByLabel('Login ID').fill('carla');
    await form.getByLabel('Access level').selectOption('EDITOR');
    await form.getByLabel(/^statementTimeout$|Statement timeout/).fill('5000');
    await form.getByLabel('Password').fill(secret('carla-secret-123'));
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByText('The user carla was created.').waitFor();
    const carla = (await userOf('carla'))!;
    expect([carla.accessLevel, carla.statementTimeout, 'password' in carla]).to.deep.equal(['EDITOR', 5000, false]);
    expect(await axe(page)).to.deep.equal([]);

    // Carla signs in in a browser of her own, with the password the page set.
    const second = await open();
    await signIn(second.page, web, `/web/${db}`, { loginId: 'carla', password: 'carla-secret-123' });
    await second.page.getByText('Signed in as carla').waitFor();
    expect(await second.page.getByRole('link', { name: 'Tenant', exact: true }).count()).to.equal(0);

    // Filter by access level, then by login ID.
    const filter = page.locator('form.filter');
    await filter.getByLabel('Access level').selectOption('ADMINISTRATOR');
    await filter.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('One user matches.').waitFor();
    await row(page, 'tenant-steward').waitFor();
    await filter.getByLabel('Access level').selectOption('');
    // Edit: the password is never shown back; the system administrator column is not editable.
    await page.getByLabel('Login ID (exact)').fill('carla');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('One user matches.').waitFor();
    await row(page, 'carla').getByRole('button', { name: 'Edit carla' }).click();
    expect(await form.getByLabel('New password').inputValue()).to.equal('');
    await form.getByText(/^System administrator: No/).waitFor();
    await form.getByLabel('Access level').selectOption('READ_ONLY');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The user carla was saved.').waitFor();
    expect((await userOf('carla'))!.accessLevel).to.equal('READ_ONLY');
    await row(page, 'carla').getByRole('cell', { name: 'Read only' }).waitFor();

    // A login ID the service refuses (a clash): the field says why.
    await row(page, 'carla').getByRole('button', { name: 'Edit carla' }).click();
    await form.getByLabel('Login ID').fill('tenant-editor');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('#user-loginId-error, .error').first().waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();

    // Delete, confirmed in a dialog.
    await row(page, 'carla').getByRole('button', { name: 'Delete carla' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('The user carla was deleted.').waitFor();
    await page.getByText('No user matches.').waitFor();
    expect(await userOf('carla')).to.equal(undefined);
    expectTokens();
  });

  it('issues an access key shown once, which works from outside until it is revoked in the page', async () => {
    const robot = await createUser(web.t, db, { loginId: 'robot', accessLevel: 'EDITOR' });
    const page = await tenantPage();
    await page.getByLabel('Login ID (exact)').fill('robot');
    await page.getByRole('button', { name: 'Filter' }).click();
    await row(page, 'robot').getByRole('button', { name: 'Access keys robot' }).click();
    const panel = page.getByRole('region', { name: 'Access keys of robot' });
    await panel.getByText('This user has no access keys.').waitFor();
    // With the keyboard: Enter in the form creates the key.
    await panel.getByLabel('Description').fill('nightly import');
    await panel.getByLabel('Description').press('Enter');
    await panel.getByText(/shown only this once/).waitFor();
    const key = await panel.getByLabel('New access key').inputValue();
    expect(key).to.match(/^\S{20,}$/);
    // The log check after the run looks for it too.
    rememberSecret(key, 'access key');
    await panel.getByRole('button', { name: 'Copy' }).waitFor();
    const listed = await rest(web, 'GET', `/rest/${db}/users/${robot.id}/accessKeys`, 200);
    expect(listed._embedded.accessKeys.map((k: Json) => k.description)).to.deep.equal(['nightly import']);
    expect(JSON.stringify(listed)).not.to.contain(key);

    // From outside the browser, as an integration calls: the key alone.
    const call = () => fetch(`${web.base}/rest/${db}/schemes`, { headers: { 'service-access-key': key } });
    expect((await call()).status).to.equal(200);
    await panel.getByRole('cell', { name: 'nightly import', exact: true }).waitFor();
    expect(await axe(page)).to.deep.equal([]);
    // Opened again: the key is not shown any more, and its last use is listed.
    await panel.getByRole('button', { name: 'Close' }).click();
    await row(page, 'robot').getByRole('button', { name: 'Access keys robot' }).click();
    await panel.getByRole('cell', { name: 'nightly import', exact: true }).waitFor();
    expect(await panel.getByLabel('New access key').count()).to.equal(0);
    expect(await panel.locator('tbody tr').first().locator('td').nth(3).textContent()).to.match(/\d/);

    await panel.getByRole('button', { name: 'Revoke nightly import' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(/Calls with it are refused at once/).waitFor();
    // The dialog has the focus; Escape leaves it without revoking, Enter on its button revokes.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await call()).status).to.equal(200);
    await panel.getByRole('button', { name: 'Revoke nightly import' }).click();
    await dialog.getByRole('button', { name: 'Revoke' }).focus();
    await page.keyboard.press('Enter');
    await panel.getByText('The access key "nightly import" was revoked.').waitFor();
    await panel.getByText('This user has no access keys.').waitFor();
    expect((await call()).status).to.equal(401);
    expectTokens();
  });

  it('writes access rules as one PUT, moves them, and the explain form picks the rule that applies', async () => {
    const page = await tenantPage();
    const rules = page.locator('ol.rules');
    await page.getByText('No access rules.').waitFor();
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await page.getByRole('button', { name: 'Add a rule' }).click();
    const first = rules.getByRole('group', { name: 'Rule 1' });
    const second = rules.getByRole('group', { name: 'Rule 2' });
    await first.getByLabel('Groups (separated by commas)').fill('stewards, analysts');
    await first.getByLabel('Action').selectOption('GRANT');
    await first.getByLabel('Access level').selectOption('EDITOR');
    await second.getByLabel('Condition').selectOption('any');
    await second.getByLabel('Action').selectOption('DENY');
    expect(await second.getByLabel('Access level').count()).to.equal(0);
    await page.getByRole('button', { name: 'Save the rules' }).click();
    await page.getByText('The access rules were saved.').waitFor();
    const puts = changes.filter((c) => c.method === 'PUT' && c.path.endsWith('/accessRules'));
    expect(puts).to.have.length(1);
    expect(await rest(web, 'GET', `/rest/${db}/tenants/Default/accessRules`, 200)).to.deep.equal([
      { action: 'GRANT', condition: { groups: ['stewards', 'analysts'] }, accessLevel: 'EDITOR' },
      { action: 'DENY', condition: null },
    ]);

    const explain = page.locator('form.explain');
    const ask = async (loginId: string, groups: string) => {
      await explain.getByLabel('Login ID').fill(loginId);
      await explain.getByLabel('Groups', { exact: true }).fill(groups);
      await explain.getByRole('button', { name: 'Explain' }).click();
    };
    await ask('dora', 'analysts');
    await explain.locator('.explanation', { hasText: 'Rule 1 applies.' }).waitFor();
    await explain.getByText(/Access level: Editor/).waitFor();
    await explain.getByText('Matched: groups: analysts').waitFor();
    await ask('dora', 'visitors');
    await explain.locator('.explanation', { hasText: 'Rule 2 applies.' }).waitFor();
    await explain.getByText(/The sign-in would be refused/).waitFor();
    // A login ID with a user here: the rules do not apply.
    await ask(editor.loginId, 'analysts');
    await explain.getByText(/has a user in this tenant/).waitFor();

    // Move the DENY rule up (keyboard: the button keeps the focus), save: now it decides first.
    await rules.getByRole('button', { name: 'Move up (Rule 2)' }).focus();
    await page.keyboard.press('Enter');
    // The row reached the top: the focus is on its other move button, in the row's new place.
    await page.waitForFunction(() => document.activeElement?.textContent === 'Move down (Rule 1)', undefined, { timeout: 5000 });
    await rules.getByRole('group', { name: 'Rule 1' }).getByLabel('Action').evaluate((s) => (s as HTMLSelectElement).value).then((v) => expect(v).to.equal('DENY'));
    await page.getByRole('button', { name: 'Save the rules' }).click();
    await page.getByText('The access rules were saved.').waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/tenants/Default/accessRules`, 200)).map((r: Json) => r.action)).to.deep.equal(['DENY', 'GRANT']);
    await ask('dora', 'analysts');
    await explain.locator('.explanation', { hasText: 'Rule 1 applies.' }).waitFor();
    await explain.getByText(/The sign-in would be refused/).waitFor();

    // A rule the service refuses: its words, with the rule's number.
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await rules.getByRole('group', { name: 'Rule 3' }).getByLabel('Action').selectOption('CREATE');
    await rules.getByRole('group', { name: 'Rule 3' }).getByLabel('Organization of the new user (optional)').fill('No such organization');
    await page.getByRole('button', { name: 'Save the rules' }).click();
    await page.locator('.problems[role="alert"] li', { hasText: /^Rule 3: / }).first().waitFor();
    expect(await rest(web, 'GET', `/rest/${db}/tenants/Default/accessRules`, 200)).to.have.length(2);
    await rest(web, 'PUT', `/rest/${db}/tenants/Default/accessRules`, 200, []);
    expectTokens();
  });

  it('uploads annotations: an error with line and column stores nothing; a valid file shows its custom property on a form; the YAML editor uploads an edited version', async () => {
    const page = await tenantPage();
    const before = Buffer.from(await (await downloadProfile(web.t, db, 'annotations')).arrayBuffer());

    // The standard annotations download as the service serves them.
    const [standard] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download standard-annotations' }).click()]);
    const served = Buffer.from(await (await downloadProfile(web.t, db, 'standard-annotations')).arrayBuffer());
    expect((await fs.readFile((await standard.path())!)).equals(served)).to.equal(true);

    await page.getByLabel('Profile to replace').selectOption('annotations');
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'bad.yaml', mimeType: 'application/yaml', buffer: Buffer.from(BAD_ANNOTATIONS) });
    const refused = page.locator('.problems[role="alert"]');
    await refused.getByText(/nothing of annotations was stored/).waitFor();
    expect(await refused.locator('li').first().textContent()).to.match(/^Line 3, column 2\d: .*NOPE/);
    expect(Buffer.from(await (await downloadProfile(web.t, db, 'annotations')).arrayBuffer()).equals(before)).to.equal(true);

    // A valid file, dropped on the drop zone.
    const transfer = await page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'annotations.yaml', { type: 'application/yaml' }));
      return dt;
    }, GOOD_ANNOTATIONS);
    await page.dispatchEvent('.drop-zone', 'drop', { dataTransfer: transfer });
    await page.getByText('The profile annotations was stored; it changed.').waitFor();
    expect(await refused.count()).to.equal(0);
    expect(await (await downloadProfile(web.t, db, 'annotations')).text()).to.equal(GOOD_ANNOTATIONS);
    // The same bytes again: unchanged.
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'same.yaml', mimeType: 'application/yaml', buffer: Buffer.from(GOOD_ANNOTATIONS) });
    await page.getByText('The profile annotations is unchanged: the file is the one stored.').waitFor();

    // The YAML editor shows the stored text; an edited version is uploaded.
    await page.getByRole('button', { name: 'Edit as YAML annotations' }).click();
    const box = page.getByRole('textbox', { name: 'YAML of the profile annotations' });
    await box.waitFor();
    expect(await box.textContent()).to.contain('labelEn: Ticket number');
    await box.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('# edited in the page');
    await page.getByRole('button', { name: 'Upload the edited version' }).click();
    await page.getByText('The profile annotations was stored; it changed.').waitFor();
    expect(await (await downloadProfile(web.t, db, 'annotations')).text()).to.equal(`${GOOD_ANNOTATIONS}# edited in the page`);
    expect(await axe(page)).to.deep.equal([]);
    expectTokens();

    // The custom property is on a classifier's form.
    const classifier = await rest(web, 'POST', `/rest/${db}/schemes/Zoo/classifiers`, 201, { _type: 'Classifier', label: 'Okapi' });
    await page.goto(new URL(classifier.href).toString());
    await page.getByRole('heading', { level: 1, name: /Okapi/ }).waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Ticket number').fill('T-42');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/classifiers/${classifier.id}`, 200)).customProperties).to.deep.equal({ ticket: 'T-42' });
  });

  it('creates, uploads, downloads, edits and deletes named profiles; a scheme chooses them under Profiles; one a scheme names is not deleted (409)', async () => {
    const FINANZEN = 'Classifier:\n  customProperties:\n    budget:\n      label: Budget\n      labelEn: Budget\n      baseType: STRING\n';
    const page = await tenantPage();
    const named = page.getByRole('region', { name: 'Named profiles' });
    await named.getByText('The tenant has no named profiles.').waitFor();

    // Created by name; the service's refusals of a name are shown at the field as it words them.
    const name = page.locator('#create-profile-name');
    await name.fill('bad name!');
    await page.getByRole('button', { name: 'Create profile' }).click();
    const fieldError = page.locator('#create-profile-error');
    await fieldError.waitFor();
    const badAnswer = await rest(web, 'POST', `/api/${db}/profiles`, 400, { name: 'bad name!' });
    expect(await fieldError.textContent()).to.equal(badAnswer.violations[0].message);
    expect(await name.getAttribute('aria-invalid')).to.equal('true');
    await name.fill('Finanzen');
    await name.press('Enter');
    await page.getByText('The profile Finanzen was created; it is empty until its annotations are uploaded.').waitFor();
    const finanzen = named.locator('tr[data-profile="Finanzen"]');
    await finanzen.waitFor();
    expect(await finanzen.textContent()).to.contain(ADMIN.loginId);
    await name.fill('Finanzen');
    await page.getByRole('button', { name: 'Create profile' }).click();
    await fieldError.getByText('The profile Finanzen exists already.').waitFor();

    // Uploaded through the file picker (the new profile is the target at once), downloaded as stored.
    expect(await page.getByLabel('Profile to replace').inputValue()).to.equal('Finanzen');
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'finanzen.yaml', mimeType: 'application/yaml', buffer: Buffer.from(FINANZEN) });
    await page.getByText('The profile Finanzen was stored; it changed.').waitFor();
    const [file] = await Promise.all([page.waitForEvent('download'), finanzen.getByRole('button', { name: 'Download Finanzen' }).click()]);
    expect(await fs.readFile((await file.path())!, 'utf8')).to.equal(FINANZEN);

    // Edited as YAML, like the tenant's own.
    await finanzen.getByRole('button', { name: 'Edit as YAML Finanzen' }).click();
    const box = page.getByRole('textbox', { name: 'YAML of the profile Finanzen' });
    await box.waitFor();
    expect(await box.textContent()).to.contain('budget:');
    await box.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('# Finanzen, edited');
    await page.getByRole('button', { name: 'Upload the edited version' }).click();
    await page.getByText('The profile Finanzen was stored; it changed.').waitFor();
    expect(await (await downloadProfile(web.t, db, 'Finanzen')).text()).to.equal(`${FINANZEN}# Finanzen, edited`);
    expect(await axe(page)).to.deep.equal([]);

    // A scheme chooses it on its form, by keyboard: the choice offers the named profiles only.
    const zoo = (await rest(web, 'GET', `/rest/${db}/schemes/Zoo`, 200)) as Json;
    await page.goto(new URL(zoo.href).toString());
    await page.getByRole('heading', { level: 1, name: /Zoo/ }).waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    const group = page.getByRole('group', { name: 'Profiles' });
    await group.getByText('No profiles: only the tenant\'s annotations apply.').waitFor();
    const choice = group.getByLabel('Add a profile');
    // The tenant's named profiles are read after the form opens: wait for the choice to offer them.
    await choice.locator('option', { hasText: 'Finanzen' }).waitFor({ state: 'attached' });
    expect(await choice.locator('option').allTextContents()).to.deep.equal(['Finanzen']);
    await choice.focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await group.getByRole('list', { name: 'Profiles of the scheme, in order (1)' }).getByText('Finanzen').waitFor();
    await group.getByText('Every named profile of the tenant is chosen.').waitFor();
    expect(await axe(page)).to.deep.equal([]);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    expect((await rest(web, 'GET', `/rest/${db}/schemes/Zoo`, 200)).profiles).to.deep.equal(['Finanzen']);

    // Deleting it while Zoo names it: confirmed, then refused in the service's words; it stays.
    const tenant = await tenantPage();
    const again = tenant.getByRole('region', { name: 'Named profiles' }).locator('tr[data-profile="Finanzen"]');
    await again.getByRole('button', { name: 'Delete Finanzen' }).click();
    const dialog = tenant.getByRole('dialog', { name: 'Delete the profile Finanzen?' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    const inUse = await rest(web, 'DELETE', `/api/${db}/profiles/Finanzen`, 409);
    await tenant.getByRole('alert').getByText(inUse.violations[0].message).waitFor();
    expect(inUse.violations[0].message).to.contain('Zoo');
    expect(await again.count()).to.equal(1);

    // Once no scheme names it, deleted after confirmation (Cancel first keeps it).
    await rest(web, 'PATCH', `/rest/${db}/schemes/Zoo`, 200, { profiles: null });
    await again.getByRole('button', { name: 'Delete Finanzen' }).click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await again.count()).to.equal(1);
    await again.getByRole('button', { name: 'Delete Finanzen' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await tenant.getByText('The profile Finanzen was deleted.').waitFor();
    await tenant.getByRole('region', { name: 'Named profiles' }).getByText('The tenant has no named profiles.').waitFor();
    expect((await downloadProfile(web.t, db, 'Finanzen')).status).to.equal(404);
    expectTokens();
  });

  it('lets a system administrator create and rename tenants; a tenant administrator sees no tenants section', async () => {
    const page = await tenantPage();
    const section = page.getByRole('region', { name: 'Tenants' });
    await section.locator('.tenant-label', { hasText: 'Default' }).waitFor();
    await section.getByLabel('Label of the new tenant').fill('Branch');
    await section.getByRole('button', { name: 'Create a tenant' }).click();
    await section.getByText('The tenant Branch was created.').waitFor();
    await section.getByRole('button', { name: 'Rename Branch' }).click();
    await section.getByLabel('New label of Branch').fill('Branch Office');
    await section.getByRole('button', { name: 'Rename', exact: true }).click();
    await section.getByText('The tenant Branch is now called Branch Office.').waitFor();
    const labels = (await rest(web, 'GET', `/rest/${db}/tenants`, 200))._embedded.tenants.map((t: Json) => t.label);
    expect(labels).to.include('Branch Office').and.not.include('Branch');
    // A label the service refuses: at the field.
    await section.getByLabel('Label of the new tenant').fill('Default');
    await section.getByRole('button', { name: 'Create a tenant' }).click();
    await section.locator('#tenant-label-error').waitFor();
    expectTokens();

    // A tenant administrator manages users, not tenants; the system administrator column shows who is one.
    const admin = await tenantPage({ as: steward });
    await usersTable(admin).waitFor();
    expect(await admin.getByRole('region', { name: 'Tenants' }).count()).to.equal(0);
    await createUser(web.t, db, { loginId: 'admin', accessLevel: 'ADMINISTRATOR' });
    await admin.getByLabel('Login ID (exact)').fill('admin');
    await admin.getByRole('button', { name: 'Filter' }).click();
    await row(admin, 'admin').getByRole('cell', { name: 'Yes' }).waitFor();
    expect(await row(admin, 'admin').locator('input, select').count()).to.equal(0);
  });

  it('gives READ_ONLY and EDITOR users no link; the page says they may not; the service refuses the calls (403)', async () => {
    for (const who of [reader, editor]) {
      const { page } = await open();
      await signIn(page, web, `/web/${db}`, who);
      await page.getByRole('button', { name: 'Log out' }).waitFor();
      expect(await page.getByRole('link', { name: 'Tenant', exact: true }).count()).to.equal(0);
      await page.goto(`${web.base}/web/${db}/tenant`);
      await page.getByRole('alert').filter({ hasText: 'Only administrators of the tenant may manage' }).waitFor();
      expect(await page.locator('table.users').count()).to.equal(0);
      // Who the system administrators are is told to administrators only.
      const session = await page.evaluate(async (url) => (await fetch(url)).json(), `${web.base}/web/session?database=${db}`);
      expect(session.loginId).to.equal(who.loginId);
      expect(session).not.to.have.property('systemAdministrators');
      const as = { auth: who };
      const statuses = await Promise.all([
        web.t.request(`/rest/${db}/users`, as),
        web.t.request(`/rest/${db}/users`, { ...as, method: 'POST', json: { _type: 'User', loginId: 'mallory', accessLevel: 'ADMINISTRATOR' } }),
        web.t.request(`/rest/${db}/users/${who.loginId}/accessKeys`, { ...as, method: 'POST', json: {} }),
        web.t.request(`/rest/${db}/tenants/Default/accessRules`, as),
        web.t.request(`/rest/${db}/tenants/Default/accessRules`, { ...as, method: 'PUT', json: [] }),
        web.t.request(`/rest/${db}/tenants/Default/accessRules/explain`, { ...as, method: 'POST', json: { loginId: 'x' } }),
        upload(web.t, db, 'annotations', Buffer.from(GOOD_ANNOTATIONS), { as: who }),
      ].map((p) => p.then((r) => r.status)));
      expect(statuses, who.loginId).to.deep.equal([403, 403, 403, 403, 403, 403, 403]);
    }
  });

  it('speaks German, fits 390 px without sideways scrolling, and passes axe-core', async () => {
    const page = await tenantPage({ locale: 'de-DE', width: 390, as: steward });
    await page.getByRole('heading', { level: 2, name: 'Benutzer' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Zugriffsregeln' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Profile' }).waitFor();
    await usersTable(page).waitFor();
    await page.getByRole('button', { name: 'Benutzer anlegen' }).click();
    await page.locator('form.user-form').getByLabel('Zugriffsstufe').waitFor();
    await page.getByRole('button', { name: 'Regel hinzufügen' }).click();
    await row(page, 'bulk-01').getByRole('button', { name: 'Zugriffsschlüssel bulk-01' }).click();
    await page.getByRole('region', { name: 'Zugriffsschlüssel von bulk-01' }).getByText('Dieser Benutzer hat keine Zugriffsschlüssel.').waitFor();
    await page.getByRole('button', { name: 'Als YAML bearbeiten profile' }).click();
    await page.getByRole('textbox', { name: 'YAML des Profils profile' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
    expect(await axe(page)).to.deep.equal([]);
  });
});
