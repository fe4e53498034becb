/**
 * The query console (`/web/<db>/query`, issue 21) in a real browser over the
 * real service: an administrator runs a statement with Ctrl+Enter and sees
 * its rows, sees a bad statement refused in the service's own words,
 * downloads the result byte for byte as the synchronous call answers it,
 * runs a job that survives a reload and downloads its result; an editor
 * gets neither the link nor the page; German texts, a phone's width and
 * axe-core.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { axe } from '../helpers/browser.ts';
import { ADMIN, createDatabase } from '../helpers/service.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { createUser, secret } from '../auth/fixtures.ts';
import { closePages, open, rest, signIn, startWeb, type Web } from './web.ts';

describe('user interface: the query console', function () {
  this.timeout(180_000);
  let web: Web;
  let db: string;
  const editor = { loginId: 'console-editor', password: secret('console-editor-secret-1') };
  const statement = 'select label from scheme_view order by label';

  before(async () => {
    web = await startWeb();
    db = await createDatabase(web.t);
    // A label with a comma, a quote and a line break: the CSV must quote them as the service does.
    for (const label of ['Orders', 'Billing, "north"\nregion', 'Accounts']) await rest(web, 'POST', `/rest/${db}/schemes`, 201, { _type: 'Scheme', label });
    await createUser(web.t, db, { ...editor, accessLevel: 'EDITOR' });
  });
  beforeEach(closePages);
  after(async () => {
    await closePages();
    await web?.close();
  });

  /** The synchronous call from outside the browser, as the administrator: the bytes of the answer. */
  async function synchronous(sql: string, format = 'CSV'): Promise<{ status: number; body: Buffer }> {
    const r = await web.t.request(`/api/${db}/queries/download?format=${format}`, { method: 'PUT', json: { sql } });
    return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
  }

  async function consolePage(options: Parameters<typeof open>[0] = {}): Promise<Page> {
    const { page } = await open(options);
    await signIn(page, web, `/web/${db}`);
    await page.getByRole('link', { name: /^(Query console|Abfragekonsole)$/ }).click();
    await page.getByRole('heading', { level: 1, name: /^(Query console|Abfragekonsole)$/ }).waitFor();
    return page;
  }

  const editorBox = (page: Page) => page.getByRole('textbox', { name: /^(SQL statement|SQL-Anweisung)/ });

  async function type(page: Page, sql: string) {
    const box = editorBox(page);
    await box.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await box.fill(sql);
  }

  it('runs a statement with Ctrl+Enter and shows its rows; completes view names; lists the views', async () => {
    const page = await consolePage();
    expect(new URL(page.url()).pathname).to.equal(`/web/${db}/query`);
    const views = page.getByRole('complementary', { name: 'Views' });
    await views.getByText('scheme_view', { exact: true }).click();
    await views.locator('details', { has: page.getByText('scheme_view', { exact: true }) }).getByText('label', { exact: true }).waitFor();

    // Completion of the caller's views while typing.
    await editorBox(page).click();
    await page.keyboard.type('select label from scheme_v');
    await page.getByRole('option', { name: /scheme_view/ }).first().waitFor();
    await page.keyboard.press('Escape');

    await type(page, statement);
    await page.keyboard.press('Control+Enter');
    const table = page.getByRole('region', { name: 'Result' }).getByRole('table');
    await table.waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).to.deep.equal(['label']);
    expect(await table.locator('tbody td').allTextContents()).to.deep.equal(['Accounts', 'Billing, "north"\nregion', 'Orders']);
    await page.getByText('3 rows.').waitFor();
    expect(await axe(page)).to.deep.equal([]);
  });

  it('shows a refused statement in the service\'s words', async () => {
    const bad = 'select nope from scheme_view';
    const refused = await synchronous(bad);
    expect(refused.status).to.equal(400);
    const { message } = JSON.parse(refused.body.toString('utf8'));
    expect(message).to.be.a('string').and.not.equal('');
    const page = await consolePage();
    await type(page, bad);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const alert = page.locator('.query-error[role="alert"]');
    await alert.waitFor();
    expect(await alert.locator('p').first().textContent()).to.equal(message);
    expect(await page.getByRole('region', { name: 'Result' }).count()).to.equal(0);
  });

  it('marks where the service places the error in the statement, and the note moves the cursor there', async () => {
    const page = await consolePage();
    const mark = page.locator('.sql-editor .cm-query-error');
    const alert = page.locator('.query-error[role="alert"]');
    // The database's position (an unknown column), on the second line, after characters that are two UTF-16 units each.
    const bad = `select '😀😀' as a,\n  nope from scheme_view`;
    const answer = JSON.parse((await synchronous(bad)).body.toString('utf8'));
    expect(answer.position).to.equal(Array.from(bad.slice(0, bad.indexOf('nope'))).length + 1);
    await type(page, bad);
    await page.keyboard.press('Control+Enter');
    await alert.waitFor();
    expect(await alert.locator('p').first().textContent()).to.equal(answer.message);
    expect(await mark.textContent()).to.equal('nope');
    const note = alert.getByRole('button', { name: 'The error is at line 2, column 3 of the statement: show it in the editor.' });
    await note.waitFor();
    expect(await axe(page)).to.deep.equal([]);
    // By keyboard: the note puts the focus in the editor at the error; what is typed lands there, and the mark moves with the text.
    await note.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.type('x.');
    expect(await editorBox(page).textContent()).to.equal(`select '😀😀' as a,  x.nope from scheme_view`);
    expect(await mark.textContent()).to.equal('nope');

    // The sandbox's parser (a syntax error) and its check (a view that is none): marked too; a run that succeeds clears the mark.
    await type(page, 'select label, from scheme_view');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await alert.getByRole('button', { name: /line 1, column 15 / }).waitFor();
    expect(await mark.textContent()).to.equal('from');
    await type(page, 'select label from scheme_view, objects');
    await page.keyboard.press('Control+Enter');
    await alert.getByRole('button', { name: /line 1, column 32 / }).waitFor();
    expect(await mark.textContent()).to.equal('objects');
    await type(page, statement);
    await page.keyboard.press('Control+Enter');
    await page.getByRole('region', { name: 'Result' }).waitFor();
    expect(await mark.count()).to.equal(0);
    expect(await alert.count()).to.equal(0);

    // No position (a division by zero happens while rows are made): the message alone, no mark.
    await type(page, 'select 1 / 0 as x');
    await page.keyboard.press('Control+Enter');
    await alert.waitFor();
    expect(await alert.getByRole('button').count()).to.equal(0);
    expect(await mark.count()).to.equal(0);
  });

  it('downloads CSV, JSON and XML byte for byte as the synchronous call answers them, with the CSRF token', async () => {
    const page = await consolePage();
    await type(page, statement);
    const tokens: (string | undefined)[] = [];
    page.on('request', (r) => { if (r.url().includes('/queries/download')) tokens.push(r.headers()['x-csrf-token']); });
    for (const [format, ext] of [['CSV', 'csv'], ['JSON', 'json'], ['XML', 'xml']]) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${format}` }).click()]);
      expect(download.suggestedFilename()).to.equal(`Query.${ext}`);
      const got = await fs.readFile((await download.path())!);
      const expected = await synchronous(statement, format);
      expect(expected.status).to.equal(200);
      expect(got.equals(expected.body), `${format}: ${got.toString('utf8')}`).to.equal(true);
    }
    expect(tokens).to.have.length(3);
    for (const t of tokens) expect(t).to.be.a('string').and.not.equal('');
  });

  it('runs a job, finds it COMPLETED after a reload and downloads it; a failed job shows its cause', async () => {
    const page = await consolePage();
    await type(page, statement);
    await page.getByLabel('Format of the job').selectOption('CSV');
    await page.getByRole('button', { name: 'Run as a job' }).click();
    await page.getByText('The job was started; it is listed below.').waitFor();
    const jobs = page.getByRole('region', { name: 'My jobs' });
    const row = jobs.getByRole('row').filter({ hasText: statement });
    await row.getByRole('cell', { name: 'COMPLETED', exact: true }).waitFor({ timeout: 60_000 });

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Query console' }).waitFor();
    const again = page.getByRole('region', { name: 'My jobs' }).getByRole('row').filter({ hasText: statement });
    await again.getByRole('cell', { name: 'COMPLETED', exact: true }).waitFor();
    expect(await again.count()).to.equal(1);
    const listed = await rest(web, 'GET', `/api/${db}/jobs?mine=true`, 200);
    expect(listed._embedded.jobs.map((j: { statement: string; status: string }) => [j.statement, j.status])).to.deep.equal([[statement, 'COMPLETED']]);
    await again.locator('.job-log summary', { hasText: 'Log' }).click();
    await again.locator('.job-log li').first().waitFor();
    expect((await again.locator('.job-log li').allTextContents()).every((l) => l.startsWith('INFO: '))).to.equal(true);
    const [download] = await Promise.all([page.waitForEvent('download'), again.getByRole('button', { name: /Download CSV/ }).click()]);
    const got = await fs.readFile((await download.path())!);
    expect(got.equals((await synchronous(statement)).body), got.toString('utf8')).to.equal(true);

    // A statement the database refuses: the job fails, and its cause is the job's own message.
    const bad = 'select nope from scheme_view';
    await type(page, bad);
    await page.getByRole('button', { name: 'Run as a job' }).click();
    const failedRow = page.getByRole('region', { name: 'My jobs' }).getByRole('row').filter({ hasText: bad });
    await failedRow.getByRole('cell', { name: 'FAILED', exact: true }).waitFor({ timeout: 60_000 });
    const job = (await rest(web, 'GET', `/api/${db}/jobs?mine=true`, 200))._embedded.jobs.find((j: { statement: string }) => j.statement === bad);
    const logs = await rest(web, 'GET', `/api/${db}/jobs/${job.id}/logs`, 200);
    const cause = logs.data.filter((m: { level: string }) => m.level === 'ERROR').map((m: { message: string }) => m.message).join(' ');
    // The database's own words, as the synchronous call gives them.
    expect(cause).to.equal(JSON.parse((await synchronous(bad)).body.toString('utf8')).message);
    await failedRow.locator('.error', { hasText: cause }).waitFor();
  });

  it('shows only the first page of a larger result and says that there is more', async () => {
    const page = await consolePage();
    // 3^5 = 243 rows.
    await type(page, 'select a.label from scheme_view a, scheme_view b, scheme_view c, scheme_view d, scheme_view e');
    await page.keyboard.press('Control+Enter');
    await page.getByText('The first 100 rows; the result has more (download it to read them all).').waitFor();
    expect(await page.getByRole('region', { name: 'Result' }).locator('tbody tr').count()).to.equal(100);
  });

  it('reads NULL, the empty text, commas, quotes and line breaks out of the CSV answer as they are', async () => {
    const page = await consolePage();
    await type(page, `select null as a, '' as b, 'x,y' as c, 'say "hi"' as d, E'two\\nlines' as e from scheme_view limit 1`);
    await page.keyboard.press('Control+Enter');
    const cells = page.getByRole('region', { name: 'Result' }).locator('tbody tr').first().locator('td');
    await cells.first().waitFor();
    expect(await cells.evaluateAll((tds) => tds.map((td) => [td.className, td.textContent]))).to.deep.equal([
      ['null', '—'], ['', ''], ['', 'x,y'], ['', 'say "hi"'], ['', 'two\nlines'],
    ]);
  });

  it('sends the options: the language of the result, the timeout, and the time-travel state as of', async () => {
    const refusedSql = 'select * from pg_class';
    const messageIn = async (language: string) => {
      const r = await web.t.request(`/api/${db}/queries/download?language=${language}`, { method: 'PUT', json: { sql: refusedSql } });
      expect(r.status).to.equal(400);
      return (await r.json()).message as string;
    };
    const [en, de] = [await messageIn('en'), await messageIn('de')];
    expect(de).to.not.equal(en);
    const page = await consolePage();
    const urls: string[] = [];
    page.on('request', (r) => { if (r.url().includes('/queries/download')) urls.push(r.url()); });
    await type(page, refusedSql);
    await page.getByLabel('Language of the result').selectOption('de');
    await page.getByLabel('Statement timeout (ms)').fill('5000');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('.query-error[role="alert"]', { hasText: de }).waitFor();
    expect(await page.locator('.query-error p').first().textContent()).to.equal(de);
    const sent = new URL(urls.at(-1)!).searchParams;
    expect([sent.get('language'), sent.get('statementTimeout'), sent.get('version')]).to.deep.equal(['de', '5000', null]);

    // A timeout the service refuses: its own message.
    await page.getByLabel('Statement timeout (ms)').fill('99999999999');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const r = await web.t.request(`/api/${db}/queries/download?statementTimeout=99999999999&language=de`, { method: 'PUT', json: { sql: refusedSql } });
    expect(r.status).to.equal(400);
    const { message } = await r.json();
    await page.locator('.query-error[role="alert"]', { hasText: message }).waitFor();

    // The header's time travel sets the state the statement runs on.
    const at = new Date(Date.now() - 1000).toISOString();
    await page.goto(`${web.base}/web/${db}/query?at=${encodeURIComponent(at)}`);
    await page.getByText(/^Runs on the state as of /).waitFor();
    await type(page, statement);
    await page.keyboard.press('Control+Enter');
    await page.getByRole('region', { name: 'Result' }).waitFor();
    expect(new URL(urls.at(-1)!).searchParams.get('version')).to.equal(String(Date.parse(at)));
  });

  it('gives an editor no console link, and the page says it is not allowed', async () => {
    const { page } = await open();
    await signIn(page, web, `/web/${db}`, editor);
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    expect(await page.getByRole('link', { name: 'Query console' }).count()).to.equal(0);
    await page.goto(`${web.base}/web/${db}/query`);
    await page.getByRole('alert').filter({ hasText: 'Only administrators of this database may run queries.' }).waitFor();
    expect(await editorBox(page).count()).to.equal(0);
    // Nor does the service answer the calls behind it.
    const r = await web.t.request(`/api/${db}/queries/views`, { auth: editor });
    expect(r.status).to.equal(403);
  });

  it('lists the caller\'s jobs on a page of their own, a page at a time; an editor finds it too, with none of the administrator\'s jobs', async () => {
    // More jobs than a page holds: finished ones of the administrator, as the jobs table keeps them until their retention ends
    // (written directly: running 21 statements would take the tenant's two query slots for half a minute on the embedded database).
    const before = (await rest(web, 'GET', `/api/${db}/jobs?mine=true`, 200)).total as number;
    const tenant = (await web.t.service.databases.get(db))!.defaultTenant;
    for (let i = 0; i < 21; i++) {
      await web.t.service.storage.knex.raw(
        `insert into "${schemaOf(db)}".query_jobs (id, tenant, all_tenants, login_id, format, language, status, instance, heartbeat_ms,
           created_at, started_at, finished_at, expires_at, row_count, byte_count, statement)
         values (?, ?, true, ?, 'JSON', 'en', 'COMPLETED', 'elsewhere', 1000,
           now() + make_interval(secs => ?), now() + make_interval(secs => ?), now() + make_interval(secs => ?), now() + interval '1 day', 1, 10, ?)`,
        [randomUUID(), tenant, ADMIN.loginId, i, i, i + 0.5, `select ${i} as n`],
      );
    }
    const { page } = await open();
    await signIn(page, web, `/web/${db}`);
    await page.getByRole('link', { name: 'My jobs' }).click();
    await page.getByRole('heading', { level: 1, name: 'My jobs' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(`/web/${db}/jobs`);
    const rows = page.getByRole('region', { name: 'My jobs' }).locator('tbody tr');
    await page.getByText(`20 of ${before + 21} jobs shown`).waitFor();
    expect(await rows.count()).to.equal(20);
    // Newest first: the last one started is at the top.
    expect(await rows.first().locator('code').textContent()).to.equal('select 20 as n');
    await page.getByRole('button', { name: 'Show more' }).click();
    await page.getByText(`${before + 21} of ${before + 21} jobs shown`).waitFor();
    expect(await page.getByRole('button', { name: 'Show more' }).count()).to.equal(0);
    expect(await rows.count()).to.equal(before + 21);
    expect(await axe(page)).to.deep.equal([]);

    const other = (await open()).page;
    await signIn(other, web, `/web/${db}`, editor);
    await other.getByRole('link', { name: 'My jobs' }).click();
    await other.getByRole('heading', { level: 1, name: 'My jobs' }).waitFor();
    await other.getByText('No jobs.').waitFor();

  });

  it('follows a running job beyond the first page by its statistics, asking only for the first page again', async function () {
    // A user of their own: 45 finished jobs and one running, the running one on the second page (written directly, as above).
    const owner = { loginId: 'console-jobs', password: secret('console-jobs-secret-1') };
    await createUser(web.t, db, { ...owner, accessLevel: 'ADMINISTRATOR' });
    const tenant = (await web.t.service.databases.get(db))!.defaultTenant;
    const jobs = `"${schemaOf(db)}".query_jobs`;
    const insert = (id: string, status: string, minutesAgo: number, statement: string) => web.t.service.storage.knex.raw(
      `insert into ${jobs} (id, tenant, all_tenants, login_id, format, language, status, instance, heartbeat_at, heartbeat_ms,
         created_at, started_at, finished_at, expires_at, row_count, byte_count, statement)
       values (?, ?, false, ?, 'CSV', 'en', ?, 'elsewhere', now(), 3600000, now() - make_interval(secs => ?::float8), now() - make_interval(secs => ?::float8),
         case when ? = 'RUNNING' then null else now() - make_interval(secs => ?::float8) end, now() + interval '1 day', 5, 50, ?)`,
      [id, tenant, owner.loginId, status, minutesAgo * 60, minutesAgo * 60, status, minutesAgo * 60, statement],
    );
    const running = randomUUID();
    for (let i = 0; i < 45; i++) await insert(randomUUID(), 'COMPLETED', i + 1, `select ${i} as done`);
    await insert(running, 'RUNNING', 30.5, 'select 1 as running');

    const { page } = await open();
    const lists: string[] = [];
    const statistics: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === `/api/${db}/jobs`) lists.push(url.search);
      if (url.pathname.endsWith('/statistics')) statistics.push(url.pathname);
    });
    await signIn(page, web, `/web/${db}/jobs`, owner);
    const rows = page.getByRole('region', { name: 'My jobs' }).locator('tbody tr');
    await page.getByText('20 of 46 jobs shown').waitFor();
    await page.getByRole('button', { name: 'Show more' }).click();
    await page.getByText('40 of 46 jobs shown').waitFor();
    await page.getByRole('button', { name: 'Show more' }).click();
    await page.getByText('46 of 46 jobs shown').waitFor();
    const row = page.locator(`tr[data-job="${running}"]`);
    expect(await row.locator('.job-state').textContent()).to.match(/^RUNNING/);

    // While it runs: polls of the first page only (no cursor), and of the running job's statistics.
    lists.length = 0;
    statistics.length = 0;
    await page.waitForTimeout(4000);
    expect(lists.length, lists.join(' ')).to.be.within(2, 4);
    for (const search of lists) expect(search).to.not.include('cursor=');
    expect(statistics.length).to.be.at.least(2);
    expect(new Set(statistics)).to.deep.equal(new Set([`/api/${db}/jobs/${running}/statistics`]));

    // A job started meanwhile appears at the top; the pages loaded before stay, none twice.
    const newest = randomUUID();
    await insert(newest, 'COMPLETED', 0, 'select 1 as newest');
    await page.getByText('47 of 47 jobs shown').waitFor();
    expect(await rows.count()).to.equal(47);
    expect(await rows.first().getAttribute('data-job')).to.equal(newest);

    // The running job ends: its statistics say so, its row offers the result, and polling stops.
    await web.t.service.storage.knex.raw(`update ${jobs} set status = 'COMPLETED', finished_at = now() where id = ?`, [running]);
    await row.getByRole('button', { name: /^Download CSV/ }).waitFor();
    expect(await row.locator('.job-state').textContent()).to.equal('COMPLETED');
    await page.waitForTimeout(500);
    lists.length = 0;
    await page.waitForTimeout(3500);
    expect(lists).to.deep.equal([]);
    expect(await axe(page)).to.deep.equal([]);
  });

  it('speaks German, fits 390 px without sideways scrolling, and passes axe-core', async () => {
    const page = await consolePage({ locale: 'de-DE', width: 390 });
    await page.getByRole('complementary', { name: 'Sichten' }).getByText('scheme_view', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Ausführen', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Als Auftrag ausführen' }).waitFor();
    await page.getByRole('heading', { name: 'Meine Aufträge' }).waitFor();
    await type(page, statement);
    await page.keyboard.press('Control+Enter');
    await page.getByText('3 Zeilen.').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
    expect(await axe(page)).to.deep.equal([]);
  });
});
