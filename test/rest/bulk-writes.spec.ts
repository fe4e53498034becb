/**
 * Bulk writes (runtime/rest/bulk-writes.ts), through the host as a plugin
 * uses them, on the backend the suite runs on: nothing staged is seen, a
 * write that loses a race midway writes nothing and runs again, a batch
 * left by a stopped writer goes, and the work gives way to interactive
 * requests.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { PluginHost, PluginManifest } from '../../runtime/plugins.ts';
import type { Principal } from '../../runtime/auth/types.ts';
import { ServiceError } from '../../runtime/errors.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { ObjectStore, plainObject, type StoredObject } from '../../runtime/storage/objects.ts';
import { CLOSE_PART, LINES_BETWEEN, STALE_MS, StagedBatch } from '../../runtime/storage/staging.ts';
import { RaceLost } from '../../runtime/storage/retry.ts';
import { APPLY_PART, STAGE_PART_FIRST } from '../../runtime/rest/bulk-writes.ts';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { uploaded } from '../plugins/transfer/fixtures.ts';

let host: PluginHost;
let principal: Principal | undefined;
let release: (() => void) | undefined;

const probe: PluginManifest = {
  name: 'test-bulk-probe', host: '^1',
  register(h) {
    host = h;
    h.api.get('/bulk-probe', (ctx) => {
      principal = ctx.state.principal as Principal;
      ctx.body = {};
    });
    // A request someone waits for, answered when the test says so.
    h.api.get('/bulk-probe/held', async (ctx) => {
      await new Promise<void>((resolve) => { release = resolve; });
      ctx.body = {};
    });
  },
};

describe('REST: bulk writes', function () {
  this.timeout(300_000);
  let t: TestService;
  let db: string;
  before(async () => {
    t = await startService({}, { plugins: [probe] });
    db = await createDatabase(t);
    expect((await t.request(`/api/${db}/bulk-probe`)).status).to.equal(200);
  });
  after(async () => t?.close());

  const s = () => `"${schemaOf(db)}"`;
  const count = async (sql: string, params: unknown[] = []) => Number((await t.service.storage.knex.raw(sql, params as never)).rows[0].n);
  const classifiers = (label: string) => count(`select count(*) as n from ${s()}.objects o join ${s()}.objects p on p.id = o.parent_id where p.label = ? and o.type = 'Classifier'`, [label]);
  const staged = () => count(`select count(*) as n from ${s()}.staged_objects`);

  /** Prepares and checks `n` classifiers K0… below the scheme `label` (which exists). */
  async function prepareClassifiers(w: Parameters<Parameters<PluginHost['bulkWrites']>[2]>[0], label: string, n: number) {
    const scheme = (await w.store.child(principal!.tenant!, null, 'schemes', label))!;
    const payloads = Array.from({ length: n }, (_, i) => ({ _type: 'Classifier', label: `K${i}` }));
    await w.observe(payloads);
    const prepared = [];
    for (let i = 0; i < n; i++) {
      const { prepared: one, violations } = await w.prepare({ payload: payloads[i], mode: 'put', parent: scheme, list: 'classifiers', index: i });
      expect(violations).to.deep.equal([]);
      prepared.push(one!);
    }
    return w.check(prepared, []);
  }

  it('a write that loses a race midway through its transaction writes nothing, runs again and then reports what changed', async () => {
    const n = APPLY_PART + 200;
    const clash = `K${APPLY_PART + 100}`;
    expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Race' } })).status).to.equal(201);
    let attempts = 0;
    let caught: unknown;
    try {
      await host.bulkWrites(db, principal!, async (w) => {
        attempts++;
        const checked = await prepareClassifiers(w, 'Race', n);
        // Another request takes a label of the batch's second part after the checks found it free.
        if (attempts === 1) {
          const r = await t.request(`/rest/${db}/schemes/Race/classifiers`, { method: 'POST', json: { _type: 'Classifier', label: clash } });
          expect(r.status).to.equal(201);
        }
        await w.commit(checked);
      });
    } catch (err) {
      caught = err;
    }
    expect(attempts).to.equal(2);
    expect(caught).to.be.instanceOf(ServiceError);
    expect((caught as ServiceError).violations).to.deep.include({ path: `${APPLY_PART + 100}.label`, key: 'labelTaken' });
    // The first part was inserted and rolled back with the rest; nothing stays staged.
    expect(await classifiers('Race')).to.equal(1);
    expect(await staged()).to.equal(0);
  });

  it('commits all of a batch at once, with history as the uploader, and keeps nothing staged', async () => {
    expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Whole' } })).status).to.equal(201);
    await host.bulkWrites(db, principal!, async (w) => w.commit(await prepareClassifiers(w, 'Whole', 300)));
    expect(await classifiers('Whole')).to.equal(300);
    expect(await count(`select count(*) as n from ${s()}.history h join ${s()}.objects o on o.id = h.id where o.type = 'Classifier' and h.changed_by = ? and h.operation = 'create' and h.version = 1`, [principal!.loginId])).to.be.at.least(300);
    expect(await staged()).to.equal(0);
  });

  it('prepares nothing before the write observers saw the payloads (the checks would read no write\'s annotations)', async () => {
    let error: unknown;
    await host.bulkWrites(db, principal!, async (w) => {
      const scheme = (await w.store.child(principal!.tenant!, null, 'schemes', 'Whole'))!;
      error = await w.prepare({ payload: { _type: 'Classifier', label: 'Unseen' }, mode: 'put', parent: scheme, list: 'classifiers', index: 0 }).catch((e) => e);
    });
    expect(String(error)).to.match(/must observe its payloads before preparing them/);
  });

  it('stages text as it is (tabs, line breaks, backslashes) and keeps in history what REST writes keep (plainObject)', async () => {
    expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Rows' } })).status).to.equal(201);
    const text = 'a\tb\nc\r\\N d\\e "f" \'g\' ü \u{1F600}';
    const tenant = principal!.tenant!;
    await host.bulkWrites(db, principal!, async (w) => {
      const scheme = (await w.store.child(tenant, null, 'schemes', 'Rows'))!;
      const payload = { _type: 'Classifier', label: 'K\\1', title: text, description: text };
      await w.observe([payload]);
      const { prepared, violations } = await w.prepare({ payload, mode: 'put', parent: scheme, list: 'classifiers', index: 0 });
      expect(violations).to.deep.equal([]);
      await w.commit(await w.check([prepared!], []));
    });
    const knex = t.service.storage.knex;
    const { id } = (await knex.raw(`select id from ${s()}.objects where label = ?`, ['K\\1'])).rows[0];
    const [stored] = await new ObjectStore(knex, db).byIds(tenant, [id]);
    expect([stored.title, stored.description]).to.deep.equal([text, text]);
    const { row } = (await knex.raw(`select row from ${s()}.history where id = ?`, [id])).rows[0];
    expect(row).to.deep.equal(JSON.parse(JSON.stringify(plainObject(stored, db))));
  });

  it('staged rows are seen by nobody; a batch whose writer stopped is removed by the next one', async () => {
    const knex = t.service.storage.knex;
    const tenant = principal!.tenant!;
    const store = new ObjectStore(knex, db);
    const now = await store.now();
    const id = randomUUID();
    const scheme: StoredObject = {
      id, type: 'Scheme', tenant, parentId: null, list: 'schemes', label: 'Staged only', title: null, description: null, status: null,
      modelId: id, version: 1, createdBy: 'x', dateCreated: now, modifiedBy: 'x', dateModified: now, props: {}, custom: {},
    };
    // Renewing the heartbeat with every part: the stopped writer's next part below finds its batch gone.
    const stopped = new StagedBatch(knex, db, 0);
    await stopped.open();
    await stopped.stage('create', [scheme]);
    // The writer stops here (its instance died): the object is staged, and nowhere to be read.
    expect(await staged()).to.equal(1);
    expect((await t.request(`/rest/${db}/schemes/Staged%20only`)).status).to.equal(404);
    expect((await t.request(`/rest/${db}/schemes/${id}`)).status).to.equal(404);
    expect(await count(`select count(*) as n from ${s()}.history where id = ?`, [id])).to.equal(0);
    // A fresh batch leaves it while its heartbeat is recent, and removes it once that is stale.
    const next = new StagedBatch(knex, db);
    await next.open();
    expect(await staged()).to.equal(1);
    await knex.raw(`update ${s()}.staged_batches set heartbeat_at = now() - make_interval(secs => ?) where id = ?`, [STALE_MS / 1000 + 1, stopped.id]);
    const after = new StagedBatch(knex, db);
    await after.open();
    expect(await staged()).to.equal(0);
    // Were its writer still going, it would have lost the race: its next part fails, and stages nothing.
    let lost: unknown;
    await stopped.stage('create', [{ ...scheme, id: randomUUID(), label: 'Staged later' }]).catch((err) => { lost = err; });
    expect(lost).to.be.instanceOf(RaceLost);
    expect(await staged()).to.equal(0);
    for (const b of [next, after]) await b.close();
    expect(await count(`select count(*) as n from ${s()}.staged_batches`)).to.equal(0);
  });

  /** `n` new schemes of the caller's tenant as stored objects, labelled `<prefix> <i>`, each with props `{ n: i }`. */
  async function newSchemes(n: number, prefix: string): Promise<StoredObject[]> {
    const tenant = principal!.tenant!;
    const now = await new ObjectStore(t.service.storage.knex, db).now();
    return Array.from({ length: n }, (_, i) => {
      const id = randomUUID();
      return {
        id, type: 'Scheme', tenant, parentId: null, list: 'schemes', label: `${prefix} ${i}`, title: null, description: null, status: null,
        modelId: id, version: 1, createdBy: 'x', dateCreated: now, modifiedBy: 'x', dateModified: now, props: { n: i }, custom: {},
      };
    });
  }

  it('closing a batch removes its staged rows part by part, every one of them, and the batch', async () => {
    const knex = t.service.storage.knex;
    const batch = new StagedBatch(knex, db);
    await batch.open();
    const objects = await newSchemes(2 * CLOSE_PART + 3, 'Closed');
    await batch.stage('create', objects);
    expect(await count(`select count(*) as n from ${s()}.staged_objects where batch = ?`, [batch.id])).to.equal(objects.length);
    let parts = 0;
    await batch.close(undefined, () => {
      parts++;
      return undefined;
    });
    expect(parts).to.equal(3);
    expect(await count(`select count(*) as n from ${s()}.staged_objects where batch = ?`, [batch.id])).to.equal(0);
    expect(await count(`select count(*) as n from ${s()}.staged_batches where id = ?`, [batch.id])).to.equal(0);
  });

  it('a part lets others go first every LINES_BETWEEN objects while it makes their lines, and stages every one of them', async () => {
    const knex = t.service.storage.knex;
    const batch = new StagedBatch(knex, db);
    await batch.open();
    const objects = await newSchemes(3 * LINES_BETWEEN + 5, 'Between');
    let calls = 0;
    let awaited = 0;
    await batch.stage('create', objects, () => {
      calls++;
      // Something to await every other time: the part goes on after it.
      return calls % 2 ? new Promise<void>((resolve) => setImmediate(() => { awaited++; resolve(); })) : undefined;
    });
    expect(calls).to.equal(3);
    expect(awaited).to.equal(2);
    const rows = (await knex.raw(`select label, props from ${s()}.staged_objects where batch = ? order by seq`, [batch.id])).rows as { label: string; props: { n: number } }[];
    expect(rows.map((r) => r.label)).to.deep.equal(objects.map((o) => o.label));
    expect(rows.map((r) => r.props.n)).to.deep.equal(objects.map((_, i) => i));
    await batch.close();
  });

  it('a batch renews its heartbeat with a part once its interval has passed, not with every part', async () => {
    const knex = t.service.storage.knex;
    const tenant = principal!.tenant!;
    const now = await new ObjectStore(knex, db).now();
    const object = (label: string): StoredObject => {
      const id = randomUUID();
      return {
        id, type: 'Scheme', tenant, parentId: null, list: 'schemes', label, title: null, description: null, status: null,
        modelId: id, version: 1, createdBy: 'x', dateCreated: now, modifiedBy: 'x', dateModified: now, props: {}, custom: {},
      };
    };
    const beatOf = async (batch: StagedBatch) =>
      Number((await knex.raw(`select extract(epoch from now() - heartbeat_at) as age from ${s()}.staged_batches where id = ?`, [batch.id])).rows[0].age);
    const age = (batch: StagedBatch) => knex.raw(`update ${s()}.staged_batches set heartbeat_at = now() - interval '1 minute' where id = ?`, [batch.id]);
    const slow = new StagedBatch(knex, db, 60_000);
    const eager = new StagedBatch(knex, db, 0);
    try {
      for (const b of [slow, eager]) {
        await b.open();
        await age(b);
        await b.stage('create', [object(`Beat ${b.id}`)]);
      }
      // Within its interval a part leaves the heartbeat as it was; past it, a part renews it.
      expect(await beatOf(slow)).to.be.greaterThan(50);
      expect(await beatOf(eager)).to.be.lessThan(30);
    } finally {
      for (const b of [slow, eager]) await b.close();
    }
  });

  it('an upload gives way to a request someone waits for, part by part, and completes once it is answered', async () => {
    const file = JSON.stringify({
      _type: 'Scheme', label: 'Paused',
      classifiers: Array.from({ length: 750 }, (_, i) => ({ _type: 'Classifier', label: `C${i}`, attributes: [{ _type: 'BusinessAttribute', label: 'a', dataType: 'STRING' }] })),
    });
    const before = host.interactive.figures.pauses;
    // The sizes of the parts staged (StagedBatch.stage, watched on its prototype for this upload).
    const parts: number[] = [];
    const stage = StagedBatch.prototype.stage;
    StagedBatch.prototype.stage = function (this: StagedBatch, operation, objects) {
      parts.push(objects.length);
      return stage.call(this, operation, objects);
    };
    try {
      const held = t.request(`/api/${db}/bulk-probe/held`);
      while (!release) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(host.interactive.inFlight).to.be.at.least(1);
      const upload = uploaded(t, db, '/schemes/Paused/upload', file, 'Paused.json');
      // Before each part of its 1,501 records (reading, resolving, preparing) and of its writes, the upload waits up
      // to 10 ms for the held request: it pauses again and again while that is in flight.
      const deadline = Date.now() + 120_000;
      while (host.interactive.figures.pauses < before + 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      const pausedWhileHeld = host.interactive.figures.pauses - before;
      release!();
      expect((await held).status).to.equal(200);
      expect(pausedWhileHeld).to.be.at.least(6);
      const job = await upload;
      expect(job.statistics.status, JSON.stringify(job.logs)).to.equal('COMPLETED');
      expect(job.statistics.statistics).to.include({ created: 1501 });
      expect(parts.reduce((a, b) => a + b, 0)).to.equal(1501);
      if (t.service.storage.kind === 'pglite') {
        // The embedded database's one connection: while people browse, parts are small and timed (STAGE_PART_MS).
        expect(parts.length).to.be.at.least(3);
        expect(Math.max(...parts)).to.be.at.most(STAGE_PART_FIRST);
      } else {
        // PostgreSQL serves requests beside the staging: parts stay whole.
        expect(parts).to.deep.equal([1501]);
      }
    } finally {
      StagedBatch.prototype.stage = stage;
    }
  });
});
