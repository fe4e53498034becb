/**
 * The list of jobs (`GET /api/<db>/jobs`): the caller's own with
 * `mine=true`; without it, a system administrator's every job, an
 * administrator's the tenant's, everyone else's their own; never another
 * tenant's. Paged newest first.
 */
import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { createUser, secret, type Credentials } from '../../auth/fixtures.ts';
import { finished, queryFixture, type Json, type QueryFixture } from './fixtures.ts';

describe('Query interface: the list of jobs', function () {
  this.timeout(240_000);
  let t: TestService;
  let f: QueryFixture;
  const colleague = { loginId: 'ada-two', password: secret('ada-Two-Passwort-1') };
  const ids: Record<string, string> = {};
  const long = `select label from scheme_view where label <> '${'x'.repeat(240)}'`;

  async function start(name: string, sql: string, auth?: Credentials) {
    const r = await t.request(`/api/${f.db}/queries/download?format=JSON`, { method: 'POST', json: { sql }, auth });
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).to.equal(200);
    ids[name] = body.id;
    await finished(t, f.db, body.id, auth);
  }

  async function list(query: string, auth?: Credentials | null, status = 200): Promise<Json> {
    const r = await t.request(`/api/${f.db}/jobs${query}`, { auth });
    const text = await r.text();
    expect(r.status, text).to.equal(status);
    return JSON.parse(text);
  }

  const names = (page: Json) => page._embedded.jobs.map((j: Json) => Object.keys(ids).find((n) => ids[n] === j.id) ?? j.id);

  // Started one after the other, so that newest first is a known order.
  before(async () => {
    t = await startService();
    f = await queryFixture(t);
    await createUser(t, f.db, { ...colleague, accessLevel: 'ADMINISTRATOR' });
    await start('ada', 'select label from scheme_view', f.admin);
    await start('colleague', long, colleague);
    await start('system', 'select label from scheme_view order by label');
    await start('otto', 'select label from scheme_view', f.otherAdmin);
  });
  after(() => t?.close());

  it('lists the caller\'s own jobs with mine=true, newest first, with their times, statement and links', async () => {
    const mine = await list('?mine=true', f.admin);
    expect(mine.total).to.equal(1);
    expect(names(mine)).to.deep.equal(['ada']);
    const [job] = mine._embedded.jobs;
    expect(job).to.include({ id: ids.ada, kind: 'query', status: 'COMPLETED', format: 'JSON', statement: 'select label from scheme_view', createdBy: 'ada' });
    expect(job.created).to.be.a('number');
    expect(job.started).to.be.at.least(job.created);
    expect(job.finished).to.be.at.least(job.started);
    expect(job.elapsedMs).to.be.a('number').at.least(0);
    expect(job._links.statistics.href).to.equal(`${t.url}/api/${f.db}/jobs/${ids.ada}/statistics`);
    expect(mine._links.self.href).to.equal(`${t.url}/api/${f.db}/jobs?mine=true`);
    const statistics = await t.request(new URL(job._links.statistics.href).pathname, { auth: f.admin });
    expect(statistics.status).to.equal(200);
    expect((await t.request(new URL(job._links.download.href).pathname, { auth: f.admin })).status).to.equal(200);
    expect(names(await list('?mine=true'))).to.deep.equal(['system']);
  });

  it('shows the start of a long statement, its white space collapsed', async () => {
    const [job] = (await list('?mine=true', colleague))._embedded.jobs;
    expect(job.statement).to.have.length(200);
    expect(job.statement).to.match(/^select label from scheme_view where label <> 'x+…$/);
  });

  it('shows an administrator the tenant\'s jobs but a system administrator\'s over all tenants, and a system administrator every job', async () => {
    expect(names(await list('', f.admin))).to.deep.equal(['colleague', 'ada']);
    expect(names(await list('?mine=false', colleague))).to.deep.equal(['colleague', 'ada']);
    const all = await list('');
    expect(all.total).to.equal(4);
    expect(names(all)).to.deep.equal(['otto', 'system', 'colleague', 'ada']);
    const times = all._embedded.jobs.map((j: Json) => j.created);
    expect(times).to.deep.equal([...times].sort((x, y) => y - x));
  });

  it('never shows another tenant\'s jobs, and a READ_ONLY or EDITOR caller only their own (none)', async () => {
    for (const query of ['', '?mine=true']) {
      expect(names(await list(query, f.otherAdmin))).to.deep.equal(['otto']);
      for (const caller of [f.reader, f.editor]) {
        const page = await list(query, caller);
        expect(page).to.deep.include({ total: 0 });
        expect(page._embedded.jobs).to.deep.equal([]);
      }
    }
  });

  it('pages with limit and cursor, and refuses what it did not make', async () => {
    const first = await list('?limit=3');
    expect(first.total).to.equal(4);
    expect(names(first)).to.deep.equal(['otto', 'system', 'colleague']);
    const next = new URL(first._links.next.href);
    expect(next.searchParams.get('limit')).to.equal('3');
    const second = await list(next.search);
    expect(names(second)).to.deep.equal(['ada']);
    expect(second._links.next).to.equal(undefined);
    // A cursor from the system administrator's list gives a tenant administrator nothing more than the tenant's.
    expect(names(await list(`?cursor=${next.searchParams.get('cursor')}`, f.otherAdmin))).to.deep.equal([]);
    for (const query of ['?limit=0', '?limit=10001', '?limit=x', '?cursor=nonsense', '?mine=maybe', '?mine=true&mine=false']) {
      const error = await list(query, f.admin, 400);
      expect(error.message).to.be.a('string');
    }
  });

  it('asks for credentials, and answers an unknown database 404', async () => {
    await list('?mine=true', null, 401);
    expect((await t.request('/api/nosuchdatabase/jobs?mine=true')).status).to.equal(404);
  });
});
