import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryEngineOf } from '../../../plugins/query/index.ts';
import { queryFixture, rest, runQuery, slowStatement, type QueryFixture } from './fixtures.ts';

describe('Query interface: statement timeouts', () => {
  let t: TestService;
  let f: QueryFixture;
  let adaId: string;
  before(async () => {
    t = await startService({ SERVICE_STATEMENT_TIMEOUT: '700' });
    f = await queryFixture(t);
    adaId = (await rest(t, 'GET', `/rest/${f.db}/users?loginId=ada`))._embedded.users[0].id;
  });
  after(() => t?.close());

  const settings = (json?: unknown, auth = undefined as typeof f.admin | undefined) =>
    t.request(`/api/${f.db}/queries/settings`, { method: json === undefined ? 'GET' : 'PUT', json, auth });

  /** The maximum that applies to a caller, as the 400 for a larger value names it. */
  async function maximumOf(auth: typeof f.admin): Promise<string> {
    const r = await runQuery(t, f.db, 'select 1', { auth, params: { statementTimeout: '2000000000' } });
    if (r.status === 200) return 'none';
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).to.equal(400);
    return /maximum of (\d+) ms/.exec(body.violations[0].message)![1];
  }

  async function setUserTimeout(value: number | null) {
    await rest(t, 'PATCH', `/rest/${f.db}/users/${adaId}`, { statementTimeout: value });
  }

  it('cancels a statement that outlives the configured maximum and says why', async () => {
    const started = Date.now();
    const r = await runQuery(t, f.db, slowStatement(), { auth: f.admin });
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).to.equal(400);
    expect(Object.keys(body)).to.deep.equal(['message']);
    expect(body.message).to.match(/^The statement was cancelled because it ran longer than the statement timeout of 700 ms \(.*statement timeout.*\)\.$/);
    expect(Date.now() - started).to.be.below(15_000);
    // The service and its pooled connection are fine afterwards.
    expect((await runQuery(t, f.db, 'select label from scheme_view', { auth: f.admin, format: 'CSV' }).then((x) => x.text()))).to.equal('label\r\nOrders\r\n');
    const state = await queryEngineOf(t.service.storage)!.inspect();
    expect(state).to.include({ statementTimeout: '0', tenants: '', readOnly: 'off', advisoryLocks: 0 });
    expect(state.currentUser).to.equal(state.sessionUser);
  });

  it('cancels after an explicit statementTimeout, which a system administrator may set above the maximum', async function () {
    const r = await runQuery(t, f.db, slowStatement(), { params: { statementTimeout: '900' } });
    expect(r.status).to.equal(400);
    expect((await r.json()).message).to.match(/statement timeout of 900 ms/);
  });

  it('runs a statement past the configured maximum to its end with statementTimeout=0 (a system administrator)', async () => {
    // Over a second on PostgreSQL (3,000,000 took 0.6 s on a quiet machine) and longer embedded: past the 700 ms maximum.
    const slow = slowStatement(8_000_000);
    const started = Date.now();
    const r = await runQuery(t, f.db, slow, { params: { statementTimeout: '0' }, format: 'CSV' });
    expect(r.status, await r.clone().text()).to.equal(200);
    expect(await r.text()).to.equal('c\r\n8000000\r\n');
    expect(Date.now() - started).to.be.above(700);
  });

  it('stops the statement when the caller leaves before the answer', async function () {
    const leaving = new AbortController();
    const started = t.request(`/api/${f.db}/queries/download?statementTimeout=0`, { method: 'PUT', json: { sql: slowStatement(1e9) }, signal: leaving.signal });
    await new Promise((r) => setTimeout(r, 400));
    leaving.abort();
    await started.catch(() => undefined);
    const until = Date.now() + 10_000;
    if (t.service.storage.kind === 'postgres') {
      // The query pool's connections are named `query`.
      const active = async () => (await t.service.storage.knex.raw(
        `select count(*)::int as n from pg_stat_activity where application_name = 'query' and state = 'active' and datname = current_database()`)).rows[0].n;
      while (await active() > 0) {
        expect(Date.now(), 'the statement still runs').to.be.below(until);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    // Embedded, the service's only connection is free again, also once a statement would have started
    // had the service missed the caller leaving (e.g. while it still prepared the request): a REST read answers.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const r = await t.request(`/rest/${f.db}/schemes`, { signal: AbortSignal.timeout(8_000) });
    expect(r.status).to.equal(200);
    expect(Date.now()).to.be.below(until);
  });

  it('lets a caller lower the maximum but not raise it or switch it off; a system administrator may', async () => {
    for (const [value, message] of [
      ['701', 'The value may not exceed the configured maximum of 700 ms.'],
      ['0', 'Only a system administrator may run a statement without a timeout (0).'],
    ]) {
      const r = await runQuery(t, f.db, 'select 1', { auth: f.admin, params: { statementTimeout: value } });
      const body = await r.json();
      expect(r.status, value).to.equal(400);
      expect(body.violations).to.deep.equal([{ path: 'statementTimeout', message }]);
    }
    for (const value of ['-1', '1.5', 'soon', '2147483648']) {
      const r = await runQuery(t, f.db, 'select 1', { params: { statementTimeout: value } });
      expect(r.status, value).to.equal(400);
    }
    expect((await runQuery(t, f.db, 'select 1 as one', { auth: f.admin, params: { statementTimeout: '700' }, format: 'CSV' })).status).to.equal(200);
    expect((await runQuery(t, f.db, 'select 1 as one', { params: { statementTimeout: '0' }, format: 'CSV' })).status).to.equal(200);
    expect((await runQuery(t, f.db, 'select 1 as one', { params: { statementTimeout: '3600000' }, format: 'CSV' })).status).to.equal(200);
  });

  it('takes the user\'s statementTimeout over the database\'s setting over the server\'s', async () => {
    try {
      expect(await maximumOf(f.admin)).to.equal('700');
      let r = await settings({ statementTimeout: 400 });
      expect(r.status).to.equal(200);
      expect(await r.json()).to.deep.equal({ statementTimeout: 400, serverStatementTimeout: 700 });
      expect(await maximumOf(f.admin)).to.equal('400');
      await setUserTimeout(250);
      expect(await maximumOf(f.admin)).to.equal('250');
      // 0 on the user: no maximum for this user.
      await setUserTimeout(0);
      expect(await maximumOf(f.admin)).to.equal('none');
      // Beyond what PostgreSQL's setting holds (2^31 - 1 ms): the largest timeout there is, not a failure of every query of the user.
      await setUserTimeout(Number.MAX_SAFE_INTEGER);
      expect((await runQuery(t, f.db, 'select 1', { auth: f.admin })).status).to.equal(200);
      // More than an integer of the metamodel holds exactly is refused where it is written (property kinds: INTEGER).
      const refused = await t.request(`/rest/${f.db}/users/${adaId}`, { method: 'PATCH', json: { statementTimeout: 1e20 } });
      expect(refused.status).to.equal(400);
      expect((await refused.json()).violations).to.deep.equal([{ path: 'statementTimeout', message: 'The value is outside the allowed range: it must be <= 9007199254740991.' }]);
      await setUserTimeout(null);
      expect(await maximumOf(f.admin)).to.equal('400');
      r = await settings({ statementTimeout: null });
      expect(await r.json()).to.deep.equal({ statementTimeout: null, serverStatementTimeout: 700 });
      expect(await maximumOf(f.admin)).to.equal('700');
    } finally {
      await setUserTimeout(null);
      await settings({ statementTimeout: null });
    }
  });

  it('shows the database setting to administrators and lets only system administrators change it', async () => {
    const r = await settings(undefined, f.admin);
    expect(r.status).to.equal(200);
    expect(await r.json()).to.deep.equal({ statementTimeout: null, serverStatementTimeout: 700 });
    expect((await settings({ statementTimeout: 1 }, f.admin)).status).to.equal(403);
    expect((await settings(undefined, f.editor)).status).to.equal(403);
    expect((await settings(undefined, f.admin)).status).to.equal(200);
  });

  it('refuses a database setting that is not a number of milliseconds', async () => {
    for (const body of [{ statementTimeout: -1 }, { statementTimeout: 1.5 }, { statementTimeout: '100' }, {}, { statementTimeout: 1, extra: true }, [1]]) {
      const r = await settings(body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect((await r.json()).violations).to.have.length(1);
    }
    expect(await (await settings()).json()).to.deep.equal({ statementTimeout: null, serverStatementTimeout: 700 });
  });
});
