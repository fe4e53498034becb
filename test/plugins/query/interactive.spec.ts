/**
 * Exports give way to interactive requests (runtime/interactive.ts): an
 * export's producer asks the gate before each part it hands on; it waits
 * only while another request is in flight, never for its own.
 */
import { expect } from 'chai';
import type { PluginManifest } from '../../../runtime/plugins.ts';
import type { InteractiveGate } from '../../../runtime/interactive.ts';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryFixture, runQuery, type QueryFixture } from './fixtures.ts';

describe('Query interface: exports give way to interactive requests', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;
  let gate: InteractiveGate;
  const asked = { calls: 0, waits: 0 };
  let held: Promise<void> = Promise.resolve();

  /** Counts the producer's questions to the gate, and serves a request that stays in flight until released. */
  const probe: PluginManifest = {
    name: 'interactive-probe',
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

  before(async () => {
    t = await startService({}, { plugins: [probe] });
    f = await queryFixture(t);
  });
  after(() => t?.close());

  const exportAll = () => runQuery(t, f.db, 'select * from scheme_view, classifier_view', { auth: f.admin, format: 'CSV' });

  it('does not hold an export back for its own request', async () => {
    asked.calls = 0;
    asked.waits = 0;
    const r = await exportAll();
    expect(r.status).to.equal(200);
    await r.text();
    expect(asked.calls).to.be.greaterThan(0);
    expect(asked.waits).to.equal(0);
  });

  it('holds an export back while another request is in flight, and lets it finish', async () => {
    let release!: () => void;
    held = new Promise((resolve) => { release = resolve; });
    const waiting = fetch(`${t.url}/test/held`);
    while (gate.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    asked.calls = 0;
    asked.waits = 0;
    const r = await exportAll();
    expect(r.status).to.equal(200);
    await r.text();
    expect(asked.waits).to.be.greaterThan(0);
    release();
    expect(await (await waiting).text()).to.equal('done');
  });
});

describe('Query interface: exports are capped at SERVICE_QUERY_BULK_RATE while interactive requests are served', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;
  let gate: InteractiveGate;
  let held: Promise<void> = Promise.resolve();
  const probe: PluginManifest = {
    name: 'interactive-probe',
    register(host) {
      gate = host.interactive;
      host.router.get('/test/held', async (ctx) => {
        await held;
        ctx.body = 'done';
      });
    },
  };

  before(async () => {
    t = await startService({ SERVICE_QUERY_BULK_RATE: '200000' }, { plugins: [probe] });
    f = await queryFixture(t);
  });
  after(() => t?.close());

  /** About 700 kB of CSV: 3.5 s at 200 kB/s. */
  const timedExport = async (): Promise<{ seconds: number; bytes: number }> => {
    const started = performance.now();
    const r = await runQuery(t, f.db, `with recursive r(n) as (select 1 union all select n + 1 from r where n < 10000)
      select n, md5(n::text) as a, md5((n + 1)::text) as b from r`, { auth: f.admin, format: 'CSV' });
    expect(r.status).to.equal(200);
    const bytes = (await r.arrayBuffer()).byteLength;
    return { seconds: (performance.now() - started) / 1000, bytes };
  };

  it('runs at full speed with no other request, and at the rate while one is in flight', async () => {
    const free = await timedExport();
    expect(free.bytes).to.be.within(600_000, 800_000);
    let release!: () => void;
    held = new Promise((resolve) => { release = resolve; });
    const waiting = fetch(`${t.url}/test/held`);
    while (gate.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const capped = await timedExport();
    release();
    expect(await (await waiting).text()).to.equal('done');
    // Less the parts handed on before their wait, the result took its size at the rate, and much longer than free.
    expect(capped.seconds).to.be.above((capped.bytes - 300_000) / 200_000);
    expect(capped.seconds).to.be.above(free.seconds * 2);
  });
});
