/**
 * A statement of the query interface holds nobody else: not the REST calls
 * and sign-ins of other tenants (the embedded database runs it on a copy of
 * itself), and not the queries of other tenants (each tenant runs at most
 * SERVICE_QUERY_TENANT_CONCURRENCY at once). No statement outlives
 * SERVICE_STATEMENT_TIMEOUT_MAX, whatever a user or request says.
 */
import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryEngineOf } from '../../../plugins/query/index.ts';
import { createUser, secret, type Credentials } from '../../auth/fixtures.ts';
import { finished, queryFixture, rest, rows, runQuery, slowStatement, type QueryFixture } from './fixtures.ts';

const onPostgres = () => !!process.env.SERVICE_TEST_DATABASE_URL;

describe('Query interface: a long statement holds no other request', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;
  let otherReader: Credentials;
  let schemeId: string;
  before(async () => {
    // Every GET signs in afresh: a password check is part of what must not wait.
    t = await startService({ SERVICE_AUTH_CACHE_TTL: '0' });
    f = await queryFixture(t);
    otherReader = { loginId: 'oskar', password: secret('oskar-Passwort-1') };
    await createUser(t, f.db, { ...otherReader, accessLevel: 'READ_ONLY', tenant: 'Other' });
    schemeId = f.otherScheme.id;
  });
  after(() => t?.close());

  it('answers another tenant\'s GETs and sign-ins at once while a statement runs for seconds', async () => {
    const started = Date.now();
    let ended = 0;
    const long = runQuery(t, f.db, slowStatement(), { auth: f.admin, params: { statementTimeout: '6000' } })
      .then(async (r) => { ended = Date.now(); return { status: r.status, body: await r.text() }; });
    // Long enough for the statement to be running whatever the copy of the database took.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const latencies: number[] = [];
    while (latencies.length < 10) {
      const at = Date.now();
      const r = await t.request(`/rest/${f.db}/schemes/${schemeId}`, { auth: otherReader, headers: { 'service-tenant': 'Other' } });
      expect(r.status).to.equal(200);
      latencies.push(Date.now() - at);
    }
    const gets = Date.now();
    const result = await long;
    expect(result.status, result.body).to.equal(400);
    expect(result.body).to.match(/statement timeout of 6000 ms/);
    // The GETs were answered while the statement ran, not after it.
    expect(ended, `the statement ended ${ended - started} ms after it started`).to.be.above(gets);
    expect(Math.max(...latencies), `GET latencies ${latencies.join(', ')} ms`).to.be.below(1000);
  });

  it('shows every change committed before the statement', async () => {
    for (const label of ['First', 'Second', 'Third']) {
      await rest(t, 'POST', `/rest/${f.db}/schemes`, { _type: 'Scheme', label });
      const labels = (await rows(t, f.db, 'select label from scheme_view order by label', { auth: f.admin })).map((r) => r.label);
      expect(labels).to.include(label);
    }
  });

  it('copies the embedded database once for statements between which nothing changed', async function () {
    if (onPostgres()) this.skip();
    const readers = queryEngineOf(t.service.storage)!.snapshotReaders!;
    await rows(t, f.db, 'select label from scheme_view', { auth: f.admin });
    const made = readers.made;
    for (let i = 0; i < 3; i++) await rows(t, f.db, 'select label from scheme_view', { auth: f.admin });
    expect(readers.made).to.equal(made);
    await rest(t, 'POST', `/rest/${f.db}/schemes`, { _type: 'Scheme', label: 'Changed' });
    expect((await rows(t, f.db, `select label from scheme_view where label = 'Changed'`, { auth: f.admin }))).to.have.length(1);
    expect(readers.made).to.equal(made + 1);
  });
});

describe('Query interface: limits per tenant and a hard ceiling', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;
  before(async () => {
    // A ceiling long enough for the first test's steps to happen while the long statement runs, on a busy machine too.
    t = await startService({ SERVICE_QUERY_TENANT_CONCURRENCY: '1', SERVICE_STATEMENT_TIMEOUT_MAX: '8000' });
    f = await queryFixture(t);
  });
  after(() => t?.close());

  it('answers 429 to a tenant that runs its limit of statements already; other tenants and its jobs go on', async () => {
    const long = runQuery(t, f.db, slowStatement(), { auth: f.admin });
    // Once the long statement holds the tenant's one slot (a statement before that runs), the next is refused.
    let second = await runQuery(t, f.db, 'select 1 as one', { auth: f.admin });
    for (let tries = 0; second.status === 200 && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      second = await runQuery(t, f.db, 'select 1 as one', { auth: f.admin });
    }
    expect(second.status, await second.clone().text()).to.equal(429);
    expect(second.headers.get('retry-after')).to.equal('5');
    expect((await second.json()).message).to.equal('Your tenant is running 1 queries already; try again when one has finished.');
    // Another tenant's administrator is not held.
    expect(await rows(t, f.db, 'select label from scheme_view', { auth: f.otherAdmin })).to.deep.equal([{ label: 'Secret' }]);
    // A job of the tenant waits for the slot and then runs.
    const job = await t.request(`/api/${f.db}/queries/download?format=JSON`, { method: 'POST', json: { sql: 'select label from scheme_view' }, auth: f.admin });
    const { id } = await job.json();
    const early = await t.request(`/api/${f.db}/jobs/${id}/statistics`, { auth: f.admin });
    expect((await early.json()).status).to.equal('QUEUED');
    expect((await long).status).to.equal(400);
    expect((await finished(t, f.db, id, f.admin)).status).to.equal('COMPLETED');
    // The slot is free again.
    expect(await rows(t, f.db, 'select 1 as one', { auth: f.admin })).to.deep.equal([{ one: 1 }]);
  });

  it('stops every statement at SERVICE_STATEMENT_TIMEOUT_MAX, one asked to run without a timeout included', async () => {
    for (const statementTimeout of ['0', '600000']) {
      const started = Date.now();
      const r = await runQuery(t, f.db, slowStatement(), { params: { statementTimeout } });
      expect(r.status).to.equal(400);
      expect((await r.json()).message).to.match(/statement timeout of 8000 ms/);
      expect(Date.now() - started).to.be.below(30_000);
    }
  });

  it('refuses a ceiling of 0 on the embedded database at start, naming the setting', async function () {
    if (onPostgres()) this.skip();
    let failure: unknown;
    await startService({ SERVICE_STATEMENT_TIMEOUT_MAX: '0' }).then((s) => s.close(), (err) => { failure = err; });
    expect(String(failure)).to.match(/SERVICE_STATEMENT_TIMEOUT_MAX: must be above 0 on the embedded database/);
  });
});
