/**
 * Exports give way to interactive requests (runtime/interactive.ts): an
 * export's producer asks the gate after each part it hands on; it waits
 * only while another request is in flight, never for its own, and while
 * one is, all bulk work of the instance (exports, jobs, job downloads) is
 * capped at SERVICE_QUERY_BULK_RATE.
 */
import { expect } from 'chai';
import pg from 'pg';
import { readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { PluginManifest } from '../../../runtime/plugins.ts';
import { RECENT_MS, type InteractiveGate } from '../../../runtime/interactive.ts';
import { basic, startService, type TestService } from '../../helpers/service.ts';
import { finished, queryFixture, runQuery, type QueryFixture } from './fixtures.ts';

/**
 * A plugin that counts the pauses bulk work asks the gate for, and serves
 * /test/held, a request that stays in flight until released.
 */
function probe() {
  const asked = { calls: 0, waits: 0 };
  let gate!: InteractiveGate;
  let held: Promise<void> = Promise.resolve();
  const manifest: PluginManifest = {
    name: 'interactive-probe', host: '^1',
    register(host) {
      gate = host.interactive;
      const pause = gate.pause.bind(gate);
      gate.pause = () => {
        const waiting = pause();
        asked.calls++;
        if (waiting) asked.waits++;
        return waiting;
      };
      host.router.get('/test/held', async (ctx) => {
        await held;
        ctx.body = 'done';
      });
    },
  };
  return {
    manifest,
    asked,
    /** How long bulk work has waited at the capped rate so far, in all. */
    rateWaitedMs: () => gate.figures.rateWaitedMs,
    /** Runs `task` while a request of t's is in flight. */
    async whileHeld<T>(t: TestService, task: () => Promise<T>): Promise<T> {
      let release!: () => void;
      held = new Promise((resolve) => { release = resolve; });
      const waiting = fetch(`${t.url}/test/held`);
      while (gate.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      try {
        return await task();
      } finally {
        release();
        expect(await (await waiting).text()).to.equal('done');
      }
    },
  };
}

describe('Query interface: exports give way to interactive requests', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;
  const p = probe();

  before(async () => {
    t = await startService({}, { plugins: [p.manifest] });
    f = await queryFixture(t);
  });
  after(() => t?.close());

  /** Exports everything; the pauses asked for meanwhile. */
  const exportAll = async () => {
    p.asked.calls = 0;
    p.asked.waits = 0;
    const r = await runQuery(t, f.db, 'select * from scheme_view, classifier_view', { auth: f.admin, format: 'CSV' });
    expect(r.status).to.equal(200);
    await r.text();
    return { ...p.asked };
  };

  it('does not hold an export back for its own request', async () => {
    const asked = await exportAll();
    expect(asked.calls).to.be.greaterThan(0);
    expect(asked.waits).to.equal(0);
  });

  it('holds an export back while another request is in flight, and lets it finish', async () => {
    const asked = await p.whileHeld(t, exportAll);
    expect(asked.waits).to.be.greaterThan(0);
  });
});

describe('Query interface: bulk work is capped at SERVICE_QUERY_BULK_RATE while interactive requests are served', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;
  const p = probe();
  /** About 700 kB of CSV: 3.5 s at 200 kB/s. */
  const SQL = `with recursive r(n) as (select 1 union all select n + 1 from r where n < 10000)
    select n, md5(n::text) as a, md5((n + 1)::text) as b from r`;

  before(async () => {
    t = await startService({ SERVICE_QUERY_BULK_RATE: '200000' }, { plugins: [p.manifest] });
    f = await queryFixture(t);
  });
  after(() => t?.close());

  const timed = async (call: () => Promise<Response>): Promise<{ seconds: number; bytes: number }> => {
    const started = performance.now();
    const r = await call();
    expect(r.status).to.equal(200);
    const bytes = (await r.arrayBuffer()).byteLength;
    return { seconds: (performance.now() - started) / 1000, bytes };
  };

  /**
   * Free, then capped: the free run waits for the rate not at all; the capped one, less the parts handed on before
   * their wait, takes its size at the rate. (The gate's own figures, not the free run's time: on a busy machine a
   * free run took 2.2 s, more than half the capped one.)
   */
  const expectCapped = async (call: () => Promise<Response>) => {
    // A request answered within RECENT_MS still caps bulk work (the fixture's last one, on PostgreSQL, whose export
    // starts at once: 1.3 s of rate waits): the free run starts after that.
    await new Promise((resolve) => setTimeout(resolve, 3 * RECENT_MS));
    let waited = p.rateWaitedMs();
    const free = await timed(call);
    expect(free.bytes).to.be.within(600_000, 800_000);
    expect(p.rateWaitedMs() - waited, 'ms the free run waited for the rate').to.equal(0);
    waited = p.rateWaitedMs();
    const capped = await p.whileHeld(t, () => timed(call));
    expect(capped.bytes).to.equal(free.bytes);
    const minimum = (capped.bytes - 300_000) / 200_000;
    expect(p.rateWaitedMs() - waited, 'ms the capped run waited for the rate').to.be.above(minimum * 1000);
    expect(capped.seconds).to.be.above(minimum);
  };

  it('runs an export at full speed with no other request, and at the rate while one is in flight', async () => {
    await expectCapped(() => runQuery(t, f.db, SQL, { auth: f.admin, format: 'CSV' }));
  });

  it('answers other requests while an export is capped: the capped part holds no database connection', async () => {
    // On the embedded database the run has the only connection until its rows are spooled: were the spooling capped,
    // every request would wait for the whole capped export.
    await p.whileHeld(t, async () => {
      const started = performance.now();
      const exporting = runQuery(t, f.db, SQL, { auth: f.admin, format: 'CSV' }).then(async (r) => {
        expect(r.status).to.equal(200);
        expect((await r.arrayBuffer()).byteLength).to.be.above(600_000);
        return performance.now() - started;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const r = await t.request(`/rest/${f.db}/schemes`, { auth: f.admin });
      expect(r.status).to.equal(200);
      const answered = performance.now() - started;
      const exported = await exporting;
      expect(exported, 'the export was capped').to.be.above(2_000);
      expect(answered, 'the GET did not wait for the export').to.be.below(exported - 1_000);
    });
  });

  it('leaves no spooled result behind when a capped download is abandoned (embedded database)', async function () {
    if (t.service.storage.kind !== 'pglite') this.skip(); // PostgreSQL streams from COPY, nothing is spooled
    // The spool is unlinked as soon as it is open: only this process's open handle reaches it.
    const spools = () => readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return /\/query-[0-9a-f-]{36} \(deleted\)$/.test(readlinkSync(`/proc/self/fd/${fd}`));
      } catch {
        return false; // closed meanwhile
      }
    }).length;
    const inTmp = () => readdirSync(tmpdir()).filter((name) => /^query-[0-9a-f-]{36}$/.test(name)).length;
    expect(spools()).to.equal(0);
    await p.whileHeld(t, async () => {
      const left = new AbortController();
      const r = await fetch(`${t.url}/api/${f.db}/queries/download?format=CSV`, {
        method: 'PUT', signal: left.signal, body: JSON.stringify({ sql: SQL }),
        headers: { authorization: basic(f.admin.loginId, f.admin.password), 'content-type': 'application/json' },
      });
      expect(r.status).to.equal(200);
      const reader = r.body!.getReader();
      expect((await reader.read()).done).to.equal(false);
      expect(spools(), 'the spool is open while the capped download runs').to.equal(1);
      expect(inTmp(), 'and has no name').to.equal(0);
      left.abort();
      await reader.cancel().catch(() => undefined);
    });
    for (let waited = 0; spools() > 0; waited += 50) {
      expect(waited, 'the spool is closed').to.be.below(5_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('serves a job\'s result the same way', async () => {
    const started = await runQuery(t, f.db, SQL, { auth: f.admin, format: 'CSV', method: 'POST' });
    const { id } = await started.json();
    expect((await finished(t, f.db, id, f.admin)).status).to.equal('COMPLETED');
    // The polls were interactive requests: past RECENT_MS, the download is free again.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expectCapped(() => t.request(`/api/${f.db}/jobs/${id}/download`, { auth: f.admin }));
  });
});

async function pgVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('show server_version')).rows[0].server_version;
  } finally {
    await client.end();
  }
}

describe('Query interface: a statement started while people browse runs without parallel workers (PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;
  let admin: pg.Client;
  /** Set: the gate is told that nobody browses, whatever it saw. */
  const quiet = { on: false };
  /** Long enough to watch, in parallel where allowed: scans of a view joined many times over, stopped by its timeout. */
  const SQL = `select count(*) from ${Array.from({ length: 32 }, (_, i) => `asset_view v${i}`).join(', ')}`;

  before(async function () {
    const url = process.env.SERVICE_TEST_DATABASE_URL;
    if (!url) this.skip(); // the embedded database has no parallel workers
    // Every plan that may run in parallel does, however small its tables (PostgreSQL 16 renamed the setting).
    const version = Number((await pgVersion(url)).split('.')[0]);
    const cheap = new URL(url);
    cheap.searchParams.set('options', `-c ${version >= 16 ? 'debug_parallel_query' : 'force_parallel_mode'}=on`);
    const manifest: PluginManifest = {
      name: 'browsing-probe', host: '^1',
      register(host) {
        const gate = host.interactive;
        const browsing = gate.browsing.bind(gate);
        gate.browsing = () => !quiet.on && browsing();
      },
    };
    t = await startService({ SERVICE_DATABASE_URL: cheap.toString() }, { plugins: [manifest] });
    f = await queryFixture(t);
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    await t?.close();
  });

  /** The most parallel workers seen working for the query interface while the statement runs (up to its 3 s timeout). */
  const workersSeen = async (method: 'PUT' | 'POST') => {
    const answer = runQuery(t, f.db, SQL, { auth: f.admin, format: 'CSV', method, params: { statementTimeout: '3000' } });
    let most = 0;
    let leaderSeen = false;
    for (const until = Date.now() + 2500; Date.now() < until;) {
      const r = await admin.query(`select count(*) filter (where w.backend_type = 'parallel worker')::int as workers, count(*)::int as leaders
        from pg_stat_activity l left join pg_stat_activity w on w.leader_pid = l.pid
        where l.application_name = 'query' and l.state = 'active' and l.query ilike 'copy%'`);
      leaderSeen ||= r.rows[0].leaders > 0;
      most = Math.max(most, r.rows[0].workers);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const response = await answer;
    if (method === 'POST') expect((await finished(t, f.db, (await response.json()).id, f.admin)).status).to.equal('FAILED');
    else expect(response.status, `stopped by its timeout: ${await response.clone().text()}`).to.equal(400);
    expect(leaderSeen, 'the statement was seen running').to.equal(true);
    return most;
  };

  it('runs with parallel workers when nobody browses', async () => {
    quiet.on = true;
    expect(await workersSeen('PUT')).to.be.greaterThan(0);
    expect(await workersSeen('POST')).to.be.greaterThan(0);
  });

  it('runs without them when somebody browsed in the last seconds', async () => {
    quiet.on = false;
    expect((await t.request(`/rest/${f.db}/schemes`, { auth: f.admin })).status).to.equal(200);
    expect(await workersSeen('PUT')).to.equal(0);
    expect(await workersSeen('POST')).to.equal(0);
  });
});
