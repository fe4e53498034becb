import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { finished, queryFixture, runQuery, type QueryFixture } from './fixtures.ts';

describe('Query interface: who may use it', () => {
  let t: TestService;
  let f: QueryFixture;
  let job: string;
  before(async () => {
    t = await startService();
    f = await queryFixture(t);
    const r = await runQuery(t, f.db, 'select label from scheme_view', { method: 'POST', auth: f.admin });
    job = (await r.json()).id;
    await finished(t, f.db, job, f.admin);
  });
  after(() => t?.close());

  /** Every call of the interface, with the body it takes. */
  const calls = () => [
    { method: 'PUT', path: `/api/${f.db}/queries/download?format=CSV`, json: { sql: 'select label from scheme_view' } },
    { method: 'POST', path: `/api/${f.db}/queries/download?format=CSV`, json: { sql: 'select label from scheme_view' } },
    { method: 'GET', path: `/api/${f.db}/jobs/${job}/statistics` },
    { method: 'GET', path: `/api/${f.db}/jobs/${job}/logs` },
    { method: 'GET', path: `/api/${f.db}/jobs/${job}/download` },
    { method: 'GET', path: `/api/${f.db}/queries/settings` },
    { method: 'PUT', path: `/api/${f.db}/queries/settings`, json: { statementTimeout: 1000 } },
  ];

  it('answers 401 with a challenge to a caller without credentials or with wrong ones', async () => {
    // Wrong passwords only twice: more would trip the sign-in throttle, which is not under test here.
    for (const [i, call] of calls().entries()) {
      const auth = i < 2 ? { loginId: `mallory${i}`, password: 'wrong-password-1' } : null;
      const r = await t.request(call.path, { method: call.method, json: call.json, auth });
      expect(r.status, `${call.method} ${call.path}`).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.match(/^Basic/);
    }
  });

  it('answers 403 to editors and readers, whatever they ask', async () => {
    for (const call of calls()) {
      for (const auth of [f.editor, f.reader]) {
        const r = await t.request(call.path, { method: call.method, json: call.json, auth });
        const body = await r.json();
        expect(r.status, `${auth.loginId}: ${call.method} ${call.path}`).to.equal(403);
        expect(body).to.include({ statusCode: 403, message: 'You are not allowed to do this.' });
      }
    }
  });

  it('refuses an editor\'s statement before running it, even one that would fail', async () => {
    const r = await runQuery(t, f.db, 'select * from objects', { auth: f.editor });
    expect(r.status).to.equal(403);
  });

  it('lets administrators of the tenant query, and only system administrators change the settings', async () => {
    const r = await runQuery(t, f.db, 'select label from scheme_view', { auth: f.admin, format: 'CSV' });
    expect(await r.text()).to.equal('label\r\nOrders\r\n');
    expect((await t.request(`/api/${f.db}/queries/settings`, { method: 'PUT', json: { statementTimeout: 1 }, auth: f.admin })).status).to.equal(403);
    expect((await t.request(`/api/${f.db}/queries/settings`, { method: 'PUT', json: { statementTimeout: null } })).status).to.equal(200);
  });

  it('answers 404 for a database that does not exist and for paths the interface does not have', async () => {
    expect((await runQuery(t, 'nothing_here', 'select 1')).status).to.equal(404);
    expect((await runQuery(t, 'nothing_here', 'select 1', { auth: null })).status).to.equal(401);
    expect((await t.request(`/api/${f.db}/queries/upload`, { method: 'PUT', json: { sql: 'select 1' } })).status).to.equal(404);
    expect((await t.request(`/api/${f.db}/jobs/${job}`)).status).to.equal(404);
  });
});
