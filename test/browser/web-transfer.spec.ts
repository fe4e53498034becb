/**
 * Download and upload on a scheme's page (issue 21, on decisions §8) in a
 * real browser over the real service: the model downloaded in a format the
 * page offers is the same file as the interface's own download; a
 * spreadsheet uploaded as a dry run shows the changes it would make and
 * writes nothing, then for real its progress bar reaches the end and the new
 * object is listed; a file the service refuses shows each refused object by
 * business key and line; a reader gets the download but no upload; German,
 * a phone's width and axe-core.
 */
import fs from 'node:fs/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { axe } from '../helpers/browser.ts';
import { ADMIN, createDatabase } from '../helpers/service.ts';
import { createUser, secret } from '../auth/fixtures.ts';
import { closePages, open, pageOf, rest, signIn, startWeb, type Json, type Web } from './web.ts';

describe('user interface: download and upload on a scheme\'s page', function () {
  this.timeout(180_000);
  let web: Web;
  let db: string;
  let scheme: Json;
  let dir: string;
  const reader = { loginId: 'transfer-reader', password: secret('transfer-reader-secret-1') };

  before(async () => {
    web = await startWeb();
    db = await createDatabase(web.t);
    scheme = await rest(web, 'POST', `/rest/${db}/schemes`, 201, { _type: 'Scheme', label: 'Vertrieb', description: 'Kunden, "Aufträge"' });
    await rest(web, 'POST', `/rest/${db}/schemes/Vertrieb/classifiers`, 201, { _type: 'Classifier', label: 'Kunde' });
    await createUser(web.t, db, { ...reader, accessLevel: 'READ_ONLY' });
    dir = mkdtempSync(join(tmpdir(), 'web-transfer-'));
  });
  beforeEach(closePages);
  after(async () => {
    await closePages();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function schemePage(options: Parameters<typeof open>[0] = {}, as?: typeof reader) {
    const { page } = await open(options);
    await signIn(page, web, pageOf(scheme), as);
    await page.locator('#object-heading').filter({ hasText: 'Vertrieb' }).waitFor();
    return page;
  }

  it('downloads the model in the chosen format, the same file as the interface\'s download', async () => {
    const page = await schemePage();
    const region = page.getByRole('region', { name: 'Download and upload' });
    for (const format of ['YAML', 'XML']) {
      await region.getByLabel('File format').selectOption(format);
      const [download] = await Promise.all([page.waitForEvent('download'), region.getByRole('button', { name: 'Download', exact: true }).click()]);
      expect(download.suggestedFilename()).to.equal(`Vertrieb.${format.toLowerCase()}`);
      const got = await fs.readFile((await download.path())!);
      const direct = await web.t.request(`/api/${db}/schemes/Vertrieb/download?format=${format}&language=en`);
      expect(got.equals(Buffer.from(await direct.arrayBuffer())), got.toString('utf8')).to.equal(true);
    }
  });

  it('uploads a spreadsheet as a dry run, showing the planned changes and writing nothing; then for real, the progress bar reaching the end', async () => {
    // The spreadsheet: the model as it would be with one more classifier.
    await rest(web, 'POST', `/rest/${db}/schemes/Vertrieb/classifiers`, 201, { _type: 'Classifier', label: 'Auftrag' });
    const xlsx = Buffer.from(await (await web.t.request(`/api/${db}/schemes/Vertrieb/download?format=XLSX`)).arrayBuffer());
    await rest(web, 'DELETE', `/rest/${db}/schemes/Vertrieb/classifiers/Auftrag`, 204);
    const file = join(dir, 'Vertrieb.xlsx');
    writeFileSync(file, xlsx);

    const page = await schemePage();
    const region = page.getByRole('region', { name: 'Download and upload' });
    await region.getByLabel('File to upload').setInputFiles(file);
    expect(await region.getByLabel('Dry run (check only, write nothing)').isChecked()).to.equal(true);
    await region.getByRole('button', { name: 'Upload', exact: true }).click();
    await region.getByRole('heading', { name: 'Changes the upload would make' }).waitFor();
    expect(await region.locator('.transfer-created li').allTextContents()).to.deep.equal(['Auftrag']);
    await region.getByText('A dry run: nothing is written.').waitFor();
    expect((await web.t.request(`/rest/${db}/schemes/Vertrieb/classifiers/Auftrag`)).status).to.equal(404);

    await region.getByLabel('Dry run (check only, write nothing)').uncheck();
    await region.getByRole('button', { name: 'Upload', exact: true }).click();
    await region.getByRole('heading', { name: 'Changes made' }).waitFor();
    const bar = region.getByRole('progressbar');
    expect(await bar.getAttribute('value')).to.equal(await bar.getAttribute('max'));
    expect(await region.locator('.transfer-counts').textContent()).to.match(/^3 of 3 objects read: 1 created, 0 updated, 0 deleted, 2 unchanged, 0 failed\.$/);
    // The page lists it now, and the service has it, written by the uploader.
    await page.locator('section.object-list', { has: page.locator('#list-classifiers') }).getByRole('link', { name: 'Auftrag' }).waitFor();
    // A business data model offers no lists of what only other kinds of model hold.
    expect(await page.locator('#list-datatypes').count()).to.equal(0);
    expect(await page.locator('#list-systems').count()).to.equal(0);
    expect((await rest(web, 'GET', `/rest/${db}/schemes/Vertrieb/classifiers/Auftrag`, 200)).createdBy).to.equal(ADMIN.loginId);
    // And the job is among the caller's jobs.
    const jobs = await rest(web, 'GET', `/api/${db}/jobs?mine=true`, 200);
    expect(jobs._embedded.jobs.filter((j: Json) => j.kind === 'upload').map((j: Json) => j.status)).to.deep.equal(['COMPLETED', 'COMPLETED']);
  });

  it('shows each refused object of a failed upload by business key and line; nothing is written', async () => {
    const file = join(dir, 'kaputt.json');
    writeFileSync(file, JSON.stringify({ _type: 'Scheme', label: 'Vertrieb', classifiers: [{ _type: 'Classifier', label: 'Rechnung', status: 'UNBEKANNT' }] }, null, 2));
    const page = await schemePage();
    const region = page.getByRole('region', { name: 'Download and upload' });
    await region.getByLabel('File to upload').setInputFiles(file);
    await region.getByLabel('Dry run (check only, write nothing)').uncheck();
    await region.getByRole('button', { name: 'Upload', exact: true }).click();
    await region.getByText('The upload failed; nothing was written. Refused:').waitFor();
    expect(await region.locator('.transfer-problems li').allTextContents()).to.have.length(1);
    expect(await region.locator('.transfer-problems li').first().textContent()).to.match(/^Refused: Rechnung \(line 5, column 5\), status: /);
    expect((await web.t.request(`/rest/${db}/schemes/Vertrieb/classifiers/Rechnung`)).status).to.equal(404);
  });

  it('offers a reader the download but no upload, and the service refuses a reader\'s upload', async () => {
    const page = await schemePage({}, reader);
    const region = page.getByRole('region', { name: 'Download and upload' });
    await region.getByRole('button', { name: 'Download', exact: true }).waitFor();
    expect(await region.getByLabel('File to upload').count()).to.equal(0);
    const form = new FormData();
    form.append('file', new Blob(['{"_type":"Scheme","label":"Vertrieb"}']), 'v.json');
    const r = await web.t.request(`/api/${db}/schemes/Vertrieb/upload`, { method: 'PUT', body: form, auth: reader });
    expect(r.status).to.equal(403);
  });

  it('speaks German, fits 390 px without sideways scrolling, and passes axe-core', async () => {
    const page = await schemePage({ locale: 'de-DE', width: 390 });
    const region = page.getByRole('region', { name: 'Herunterladen und Hochladen' });
    await region.getByRole('button', { name: 'Hochladen', exact: true }).waitFor();
    await region.getByLabel('Vorgang').selectOption('REPLACE');
    expect(await region.getByLabel('Vorgang').locator('option:checked').textContent()).to.equal('Ersetzen: auch löschen, was die Datei nicht nennt');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
    expect(await axe(page)).to.deep.equal([]);
  });
});
