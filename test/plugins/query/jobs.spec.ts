import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { schemaOf } from '../../../runtime/storage/migrations.ts';
import type { Credentials } from '../../auth/fixtures.ts';
import { finished, queryFixture, runQuery, slowStatement, type Json, type QueryFixture } from './fixtures.ts';
import { startServiceProcess } from './service-process.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const onPostgres = () => !!process.env.SERVICE_TEST_DATABASE_URL;

async function startJob(t: TestService, db: string, sql: string, query = 'format=JSON', auth?: Credentials): Promise<string> {
  const r = await t.request(`/api/${db}/queries/download?${query}`, { method: 'POST', json: { sql }, auth });
  const body = await r.json();
  expect(r.status, JSON.stringify(body)).to.equal(200);
  expect(Object.keys(body)).to.deep.equal(['id']);
  expect(body.id).to.match(UUID);
  return body.id;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('Query interface: jobs', () => {
  let t: TestService;
  let f: QueryFixture;
  before(async () => {
    t = await startService({ SERVICE_JOB_HEARTBEAT: '200' });
    f = await queryFixture(t);
  });
  after(() => t?.close());

  const get = async (path: string, auth?: { loginId: string; password: string }) => {
    const r = await t.request(`/api/${f.db}/jobs/${path}`, { auth });
    return { status: r.status, headers: r.headers, text: await r.text() };
  };

  it('runs a job and serves its statistics, log and result in the format chosen at start', async () => {
    const sql = 'select label, status_label from scheme_view order by label';
    const id = await startJob(t, f.db, sql, 'format=XML&language=de');
    const statistics = await finished(t, f.db, id);
    const { progress, ...rest } = statistics;
    expect(rest).to.deep.equal({ status: 'COMPLETED', messages: [{ level: 'INFO', message: 'Die Abfrage ist mit 2 Zeilen abgeschlossen.' }] });
    const logs = JSON.parse((await get(`${id}/logs`)).text);
    expect(logs.totalCount).to.equal(3);
    expect(logs.data.map((d: Json) => d.level)).to.deep.equal(['INFO', 'INFO', 'INFO']);
    const download = await get(`${id}/download`);
    expect(download.status).to.equal(200);
    expect(progress).to.include({ rows: 2, bytes: Buffer.byteLength(download.text) });
    expect(progress.elapsedMs).to.be.a('number').at.least(0);
    expect(download.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
    const sync = await runQuery(t, f.db, sql, { format: 'XML', params: { language: 'de' } });
    expect(download.text).to.equal(await sync.text()).and.include('<status_label>In Bearbeitung</status_label>');
  });

  it('names a CSV result Query.csv', async () => {
    const id = await startJob(t, f.db, 'select label from scheme_view order by label', 'format=CSV');
    await finished(t, f.db, id);
    const download = await get(`${id}/download`);
    expect(download.headers.get('content-disposition')).to.equal('attachment; filename="Query.csv"');
    expect(download.text).to.equal('label\r\nOrders\r\nSecret\r\n');
  });

  it('reports a failed job with FAILED and an ERROR message, keeps the cause in its log, and has no result (409)', async () => {
    for (const [sql, cause] of [['select * from objects', /objects is not a view/], ['select 1 / (version - 1) from scheme_view', /division by zero/]] as const) {
      const id = await startJob(t, f.db, sql);
      const statistics = await finished(t, f.db, id);
      expect(statistics.status).to.equal('FAILED');
      expect(statistics.messages).to.deep.equal([{ level: 'ERROR', message: 'The query failed; the job log holds the cause.' }]);
      const logs = JSON.parse((await get(`${id}/logs`)).text);
      expect(logs.data.at(-1).level).to.equal('ERROR');
      expect(logs.data.at(-1).message).to.match(cause);
      const download = await get(`${id}/download`);
      expect(download.status).to.equal(409);
      expect(JSON.parse(download.text)).to.deep.equal({ message: 'The job failed; it has no result. The job log holds the cause.' });
    }
  });

  it('answers 202 and a 409 download while a job runs, and fails the job when its statement times out', async () => {
    const id = await startJob(t, f.db, slowStatement(), 'format=CSV&statementTimeout=1500');
    // The job's statement holds no request (embedded, it runs on a copy of the database): the job is seen unfinished.
    const early = await t.request(`/api/${f.db}/jobs/${id}/statistics`);
    expect(early.status).to.equal(202);
    expect((await early.json()).status).to.be.oneOf(['QUEUED', 'RUNNING']);
    const download = await get(`${id}/download`);
    expect(download.status).to.equal(409);
    expect(JSON.parse(download.text)).to.deep.equal({ message: 'The job has not completed; its result can be downloaded once it has.' });
    const statistics = await finished(t, f.db, id);
    expect(statistics.status).to.equal('FAILED');
    const logs = JSON.parse((await get(`${id}/logs`)).text);
    expect(logs.data.at(-1).message).to.match(/cancelled because it ran longer than the statement timeout of 1500 ms/);
  });

  it('shows the rows and bytes a running job has written so far, and the time since it started', async function () {
    this.timeout(60_000);
    // Slow per row (md5 a thousand times over), so that the rows arrive over seconds.
    const hash = Array.from({ length: 40 }).reduce<string>((e) => `md5(${e})`, 'n::text');
    const sql = `with recursive r(n) as (select 1 union all select n + 1 from r where n < 60000) select n, ${hash} as h from r`;
    const id = await startJob(t, f.db, sql, 'format=JSON');
    let seen: Json | undefined;
    for (const until = Date.now() + 30_000; !seen && Date.now() < until;) {
      const r = await t.request(`/api/${f.db}/jobs/${id}/statistics`);
      const body = await r.json();
      if (r.status === 200) break;
      if (body.progress?.rows > 0) seen = body;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen, 'progress while running').to.not.equal(undefined);
    expect(seen!.status).to.equal('RUNNING');
    expect(seen!.progress.rows).to.be.above(0).and.below(60000);
    expect(seen!.progress.elapsedMs).to.be.above(0);
    const done = await finished(t, f.db, id, undefined, 60_000);
    expect(done.status).to.equal('COMPLETED');
    expect(done.progress.rows).to.equal(60000);
    expect(done.progress.bytes).to.equal(Buffer.byteLength((await get(`${id}/download`)).text));
    expect(done.progress.elapsedMs).to.be.at.least(seen!.progress.elapsedMs);
  });

  it('hides a job from administrators of other tenants, and a system administrator\'s job from tenant administrators (404)', async () => {
    const mine = await startJob(t, f.db, 'select label from scheme_view', 'format=JSON', f.admin);
    await finished(t, f.db, mine, f.admin);
    for (const path of ['statistics', 'logs', 'download']) {
      expect((await get(`${mine}/${path}`, f.otherAdmin)).status, path).to.equal(404);
      expect((await get(`${mine}/${path}`)).status, path).to.equal(200);
    }
    expect(JSON.parse((await get(`${mine}/download`, f.admin)).text)).to.deep.equal([{ label: 'Orders' }]);
    const admins = await startJob(t, f.db, 'select label from scheme_view');
    await finished(t, f.db, admins);
    expect((await get(`${admins}/download`, f.admin)).status).to.equal(404);
  });

  it('answers 404 for an unknown or malformed job id', async () => {
    for (const id of ['00000000-0000-0000-0000-000000000000', 'not-a-uuid', "1' or '1'='1"]) {
      const r = await get(`${encodeURIComponent(id)}/statistics`);
      expect(r.status, id).to.equal(404);
    }
  });

  it('stores a large result in chunks of at most 1 MB and serves it whole', async () => {
    const sql = `with recursive r(n) as (select 1 union all select n + 1 from r where n < 60000) select n, 'a fairly long label for row ' || n as label from r`;
    const id = await startJob(t, f.db, sql, 'format=JSON');
    expect((await finished(t, f.db, id)).status).to.equal('COMPLETED');
    const stored = await t.service.storage.knex.raw(
      `select count(*)::int as chunks, max(length(data))::int as largest, sum(length(data))::int as bytes from "${schemaOf(f.db)}".query_job_chunks where job_id = ?`, [id],
    );
    const { chunks, largest, bytes } = stored.rows[0];
    expect(chunks).to.be.greaterThan(1);
    expect(largest).to.be.at.most(1024 * 1024);
    const download = await get(`${id}/download`);
    expect(download.text.length).to.equal(bytes);
    expect(sha(download.text)).to.equal(sha(await (await runQuery(t, f.db, sql, { format: 'JSON' })).text()));
  });

  it('checks its settings at start', async () => {
    for (const [name, value] of [['SERVICE_JOB_RETENTION', '1 day'], ['SERVICE_STATEMENT_TIMEOUT', '5s'], ['SERVICE_DATABASE_READONLY_USER', 'x"; drop role postgres; --']]) {
      let error: unknown;
      try {
        await (await startService({ [name]: value })).close();
      } catch (err) {
        error = err;
      }
      expect(String(error), name).to.include(name);
    }
  });

  describe('retention', () => {
    let short: TestService;
    before(async () => {
      short = await startService({ SERVICE_JOB_RETENTION: '1000' });
    });
    after(() => short?.close());

    it('removes a finished job and its result after SERVICE_JOB_RETENTION', async () => {
      const db = await createDatabase(short);
      const id = await startJob(short, db, `with recursive r(n) as (select 1 union all select n + 1 from r where n < 1000) select n from r`);
      expect((await finished(short, db, id)).status).to.equal('COMPLETED');
      expect((await short.request(`/api/${db}/jobs/${id}/download`)).status).to.equal(200);
      const table = (name: string) => `"${schemaOf(db)}".${name}`;
      const count = async (name: string) => (await short.service.storage.knex.raw(`select count(*)::int as n from ${table(name)} where ${name === 'query_jobs' ? 'id' : 'job_id'} = ?`, [id])).rows[0].n;
      expect(await count('query_job_chunks')).to.equal(1);
      await new Promise((r) => setTimeout(r, 1100));
      expect((await short.request(`/api/${db}/jobs/${id}/statistics`)).status).to.equal(404);
      // The sweep runs every half retention.
      await new Promise((r) => setTimeout(r, 700));
      expect(await count('query_jobs')).to.equal(0);
      expect(await count('query_job_chunks')).to.equal(0);
    });
  });

  describe('more than one instance', () => {
    it('serves a job started on one instance from another sharing the database', async function () {
      if (!onPostgres()) this.skip(); // an embedded database belongs to one process
      const second = await startService({ SERVICE_JOB_HEARTBEAT: '200' });
      try {
        const id = await startJob(t, f.db, 'select label from scheme_view order by label', 'format=CSV');
        expect((await finished(second, f.db, id)).status).to.equal('COMPLETED');
        const r = await second.request(`/api/${f.db}/jobs/${id}/download`);
        expect(await r.text()).to.equal('label\r\nOrders\r\nSecret\r\n');
        // A job running on the other instance is reported running, not stale.
        const slow = await startJob(second, f.db, slowStatement(), 'format=CSV&statementTimeout=2000');
        await new Promise((r) => setTimeout(r, 1000));
        const running = await t.request(`/api/${f.db}/jobs/${slow}/statistics`);
        expect(running.status).to.equal(202);
        expect((await running.json()).status).to.equal('RUNNING');
        expect((await finished(t, f.db, slow)).status).to.equal('FAILED');
        const logs = await (await t.request(`/api/${f.db}/jobs/${slow}/logs`)).json();
        expect(logs.data.at(-1).message).to.match(/statement timeout of 2000 ms/);
      } finally {
        await second.close();
      }
    });

    it('fails the running and the queued jobs of an instance that is stopped', async function () {
      if (!onPostgres()) this.skip();
      const second = await startService({ SERVICE_JOB_HEARTBEAT: '200', SERVICE_QUERY_JOB_CONCURRENCY: '1' });
      const running = await startJob(second, f.db, slowStatement(1e9), 'format=CSV&statementTimeout=0');
      const queued = await startJob(second, f.db, 'select label from scheme_view', 'format=CSV');
      await new Promise((r) => setTimeout(r, 300));
      expect((await (await t.request(`/api/${f.db}/jobs/${queued}/statistics`)).json()).status).to.equal('QUEUED');
      await second.close();
      for (const id of [running, queued]) {
        const statistics = await finished(t, f.db, id, undefined, 5_000);
        expect(statistics.status, id === queued ? 'queued' : 'running').to.equal('FAILED');
        const logs = await (await t.request(`/api/${f.db}/jobs/${id}/logs`)).json();
        expect(logs.data.at(-1)).to.deep.equal({ level: 'ERROR', message: 'The job failed because the service instance running it stopped.' });
      }
      expect((await finished(t, f.db, running)).messages).to.deep.equal([{ level: 'ERROR', message: 'The query failed; the job log holds the cause.' }]);
    });

    it('fails the job of an instance that died, once its heartbeat is stale', async function () {
      this.timeout(120_000);
      const dir = onPostgres() ? '' : mkdtempSync(join(tmpdir(), 'query-dead-'));
      const storage: Record<string, string> = onPostgres() ? { SERVICE_DATABASE_URL: process.env.SERVICE_TEST_DATABASE_URL! } : { SERVICE_DATA_DIR: dir };
      try {
        const spoolFiles = () => readdirSync(tmpdir()).filter((name) => /^query-[0-9a-f-]{36}$/.test(name));
        const spooledBefore = new Set(spoolFiles());
        const doomed = await startServiceProcess({ ...storage, SERVICE_JOB_HEARTBEAT: '200' });
        let db = f.db;
        if (!onPostgres()) {
          db = 'doomed';
          expect((await doomed.request('/api/admin/databases', { method: 'POST', json: { name: db } })).status).to.equal(201);
        }
        const r = await doomed.request(`/api/${db}/queries/download?format=CSV&statementTimeout=0`, { method: 'POST', json: { sql: slowStatement(1e9) } });
        const { id } = await r.json();
        expect(id).to.match(UUID);
        await new Promise((resolve) => setTimeout(resolve, 500));
        await doomed.kill();
        // Embedded: its result was being spooled to a file without a name, which went with the process.
        expect(spoolFiles().filter((name) => !spooledBefore.has(name))).to.deep.equal([]);
        // Embedded: the instance that opens the data next finds the job of the dead one.
        const observer = onPostgres() ? t : await startService({ SERVICE_DATA_DIR: dir });
        try {
          const statistics = await finished(observer, db, id);
          expect(statistics.status).to.equal('FAILED');
          const logs = await (await observer.request(`/api/${db}/jobs/${id}/logs`)).json();
          expect(logs.data.at(-1)).to.deep.equal({ level: 'ERROR', message: 'The job failed because the service instance running it stopped.' });
        } finally {
          if (observer !== t) await observer.close();
        }
      } finally {
        if (dir) rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
