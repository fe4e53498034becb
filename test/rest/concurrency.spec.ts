/**
 * Concurrent writes through the real service: cascading deletes beside
 * writes of the objects they remove, and merges of one object by many
 * writers at once. On the embedded database (one connection) the requests
 * queue; on PostgreSQL they meet in the database's locks.
 */
import { expect } from 'chai';
import pg from 'pg';
import type { PluginManifest } from '../../runtime/plugins.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

type Json = Record<string, any>;

async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

interface Answer {
  what: string;
  status: number;
  body: Json;
}

describe('REST interface: concurrent writes', () => {
  let t: TestService;
  let db: string;
  const call = async (method: string, path: string, status: number, json?: unknown) =>
    expectStatus(await t.request(`/rest/${db}/${path}`, { method, json }), status);
  /** Sends a request and keeps what came back, for the checks after a whole burst. */
  const send = async (what: string, method: string, path: string, json?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const r = await t.request(`/rest/${db}/${path}`, { method, json, headers });
    const text = await r.text();
    return { what, status: r.status, body: text ? JSON.parse(text) : {} };
  };

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
  });
  after(() => t.close());

  /** Organizations with persons, groups and a sub-organization; classifiers; attributions across all of them. */
  async function organizationsWithAttributions(prefix: string, count: number) {
    const orgs: Json[] = [];
    for (let i = 0; i < count; i++) {
      const label = `${prefix} ${i}`;
      const org = await call('POST', 'organizations', 201, { _type: 'Organization', label });
      const persons = (await call('PUT', `organizations/${org.id}/persons`, 200,
        Array.from({ length: 12 }, (_, n) => ({ _type: 'Person', givenName: `P${n}`, familyName: label })))
      )._embedded.persons;
      const groups = (await call('PUT', `organizations/${org.id}/groups`, 200,
        Array.from({ length: 3 }, (_, n) => ({ _type: 'Group', label: `G${n}` })))
      )._embedded.groups;
      const sub = await call('POST', `organizations/${org.id}/organizations`, 201, { _type: 'Organization', label: 'Sub' });
      const subPersons = (await call('PUT', `organizations/${sub.id}/persons`, 200,
        Array.from({ length: 3 }, (_, n) => ({ _type: 'Person', givenName: `S${n}`, familyName: label })))
      )._embedded.persons;
      orgs.push({ org, label, persons, groups, sub, subPersons });
    }
    const scheme = await call('POST', 'schemes', 201, { _type: 'Scheme', label: `${prefix} Scheme` });
    const classifiers = (await call('PUT', `schemes/${scheme.id}/classifiers`, 200,
      Array.from({ length: 6 }, (_, n) => ({ _type: 'Classifier', label: `C${n}` })))
    )._embedded.classifiers;
    const attributions = [];
    for (const [n, c] of classifiers.entries()) {
      for (const o of orgs) attributions.push({ for: c.id, to: o.persons[n].id }, { for: c.id, to: o.groups[n % 3].id }, { for: c.id, to: o.subPersons[n % 3].id });
    }
    // Persons of one organization answer for persons and groups of the next.
    for (const [i, o] of orgs.entries()) {
      const next = orgs[(i + 1) % orgs.length];
      for (const [n, p] of o.persons.entries()) attributions.push({ for: p.id, to: next.persons[n].id }, { for: p.id, to: next.groups[n % 3].id });
    }
    const items = attributions.map((a) => ({ _type: 'Attribution', attributionFor: a.for, attributedTo: a.to, role: 'Owner' }));
    const all = (await call('PATCH', 'attributions', 200, items))._embedded.attributions;
    return { orgs, classifiers, attributions: all as Json[] };
  }

  describe('cascading deletes beside writes of what they remove', () => {
    it('answers only 2xx, 404, 409 and 412 (400 only for a reference to a removed object), and leaves nothing dangling', async function () {
      const world = await organizationsWithAttributions('Cascade', 3);
      const [a, b, kept] = world.orgs;
      const burst: Promise<Answer>[] = [];
      for (const o of world.orgs) {
        const next = world.orgs[(world.orgs.indexOf(o) + 1) % 3];
        const org = `organizations/${encodeURIComponent(o.label)}`;
        for (const p of o.persons.slice(0, 4)) burst.push(send('patch person', 'PATCH', `${org}/persons/${encodeURIComponent(p.label)}`, { title: 'patched' }));
        for (let n = 0; n < 3; n++) burst.push(send('post person', 'POST', `${org}/persons`, { _type: 'Person', givenName: `New${n}`, familyName: o.label }));
        burst.push(send('patch person list', 'PATCH', `${org}/persons`, [
          { _type: 'Person', id: o.persons[5].id, givenName: 'P5', familyName: o.label, title: 'listed' },
          { _type: 'Person', givenName: 'Listed', familyName: o.label },
        ]));
        for (const p of o.persons.slice(6, 8)) burst.push(send('delete person', 'DELETE', `${org}/persons/${encodeURIComponent(p.label)}`));
        burst.push(send('delete group', 'DELETE', `${org}/groups/G2`));
        burst.push(send('patch sub', 'PATCH', `${org}/organizations/Sub`, { title: 'sub patched' }));
        for (const [n, c] of world.classifiers.entries()) {
          burst.push(send('post attribution', 'POST', `classifiers/${c.id}/attributedTo`, { _type: 'Attribution', attributedTo: o.persons[(n + 8) % 12].id }));
        }
        burst.push(send('post attribution', 'POST', `persons/${o.persons[9].id}/attributedTo`, { _type: 'Attribution', attributedTo: next.persons[10].id }));
      }
      for (const c of world.classifiers) burst.push(send('patch classifier', 'PATCH', `classifiers/${c.id}`, { title: 'attributed' }));
      for (const x of world.attributions.filter((_, n) => n % 5 === 0)) {
        burst.push(send('patch attribution', 'PATCH', `attributions/${x.id}`, { role: 'Steward' }, { 'If-Match': 'W/"1"' }));
      }
      for (const x of world.attributions.filter((_, n) => n % 7 === 3)) burst.push(send('delete attribution', 'DELETE', `attributions/${x.id}`));
      // The deletes go in the middle of the burst, so that writes run before, beside and after them.
      burst.splice(burst.length / 2, 0, send('delete organization', 'DELETE', `organizations/${a.org.id}`), send('delete organization', 'DELETE', `organizations/${encodeURIComponent(b.label)}`));
      const answers = await Promise.all(burst);

      const unexpected = answers.filter((x) => ![200, 201, 204, 404, 409, 412].includes(x.status) && !referenceGone(x));
      expect(unexpected.map((x) => `${x.what}: ${x.status} ${JSON.stringify(x.body)}`)).to.deep.equal([]);
      expect(answers.filter((x) => x.what === 'delete organization').map((x) => x.status)).to.deep.equal([204, 204]);
      await call('GET', `organizations/${a.org.id}`, 404);
      await call('GET', `organizations/${b.org.id}`, 404);
      await call('GET', `organizations/${kept.org.id}`, 200);
      expect(await danglingOf(db)).to.deep.equal({ orphans: [], attributionsOfNothing: [], openHistoryOfRemoved: [], objectsWithoutOpenHistory: [] });
    });
  });

  describe('merges without If-Match', () => {
    /** Sixteen properties of a business attribute, each with the value a writer's n-th PATCH gives it; each differs from the one before. */
    const STATUSES = ['SUBMITTED', 'ACCEPTED', 'REJECTED', 'FINAL', 'INACTIVE', 'PUBLISHED', 'WORKING'];
    const writers: [string, (n: number, ranges: string[]) => unknown][] = [
      ['label', (n) => `Merged ${n}`], ['title', (n) => `title ${n}`], ['description', (n) => `description ${n}`],
      ['defaultValue', (n) => `value ${n}`], ['inverseOf', (n) => `inverse${n}`], ['minCardinality', (n) => n], ['maxCardinality', (n) => 100 + n],
      ['identifying', (n) => n % 2 === 0], ['readOnly', (n) => n % 2 === 0], ['writeOnly', (n) => n % 2 === 0], ['owner', (n) => n % 2 === 0],
      ['required', (n) => (n % 2 === 0 ? 'MANDATORY' : 'OPTIONAL')], ['cardinality', (n) => (n % 2 === 0 ? 'MANY' : 'ONE')],
      ['status', (n) => STATUSES[n % STATUSES.length]], ['dataType', (n) => (n % 2 === 0 ? 'STRING' : 'INTEGER')], ['hasRange', (n, ranges) => ranges[n % 2]],
    ];

    it('applies 16 writers × 50 PATCHes of their own property of one object: every one 200, every last value kept', async function () {
      const scheme = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Merges' });
      const ranges = (await call('PUT', `schemes/${scheme.id}/enumerations`, 200, [{ _type: 'Enumeration', label: 'E0' }, { _type: 'Enumeration', label: 'E1' }]))
        ._embedded.enumerations.map((e: Json) => e.id);
      const classifier = await call('POST', `schemes/${scheme.id}/classifiers`, 201, { _type: 'Classifier', label: 'Merged' });
      const attribute = await call('POST', `classifiers/${classifier.id}/attributes`, 201, { _type: 'BusinessAttribute', label: 'Start' });
      const statuses = await Promise.all(writers.map(async ([property, value]) => {
        const seen: number[] = [];
        for (let n = 0; n < 50; n++) seen.push((await send(property, 'PATCH', `attributes/${attribute.id}`, { [property]: value(n, ranges) })).status);
        return seen;
      }));
      expect(statuses.flat().filter((s) => s !== 200)).to.deep.equal([]);
      const final = await call('GET', `attributes/${attribute.id}`, 200);
      expect(Object.fromEntries(writers.map(([property]) => [property, final[property]])))
        .to.deep.equal(Object.fromEntries(writers.map(([property, value]) => [property, value(49, ranges)])));
      // Every PATCH changed its property, so every one made a version.
      expect(final._version).to.equal(1 + 16 * 50);
    });

    it('locks an object reached by technical key through a top-level list it is no root of, and merges into it', async () => {
      const org = await call('POST', 'organizations', 201, { _type: 'Organization', label: 'Top' });
      const sub = await call('POST', `organizations/${org.id}/organizations`, 201, { _type: 'Organization', label: 'Below' });
      expect(await call('PATCH', `organizations/${sub.id}`, 200, { title: 'reached from the top' })).to.include({ parentId: org.id, _version: 2 });
      await call('DELETE', `organizations/${sub.id}`, 204);
    });

    it('still answers 412 to a PATCH or PUT whose If-Match is stale, and lets one of racing PATCHes with the same If-Match win', async () => {
      const scheme = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Preconditions' });
      const c = await call('POST', `schemes/${scheme.id}/classifiers`, 201, { _type: 'Classifier', label: 'Guarded' });
      await call('PATCH', `classifiers/${c.id}`, 200, { title: 'second' });
      const stale = { 'If-Match': 'W/"1"' };
      expect((await send('patch', 'PATCH', `classifiers/${c.id}`, { title: 'stale' }, stale)).status).to.equal(412);
      expect((await send('put', 'PUT', `classifiers/${c.id}`, { _type: 'Classifier', label: 'Guarded' }, stale)).status).to.equal(412);
      const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => send('patch', 'PATCH', `classifiers/${c.id}`, { title: `racer ${i}` }, { 'If-Match': 'W/"2"' })));
      expect(racing.map((x) => x.status).sort()).to.deep.equal([200, 412, 412, 412, 412, 412, 412, 412]);
      const winner = racing.find((x) => x.status === 200)!.body;
      expect(await call('GET', `classifiers/${c.id}`, 200)).to.include({ _version: 3, title: winner.title });
    });
  });

  describe('a write that waited for the delete of its object', () => {
    it('is answered as if it came after the delete: 404 by a path through the removed parent, a create by technical key', async function () {
      const url = process.env.SERVICE_TEST_DATABASE_URL;
      if (!url) this.skip(); // the embedded database runs one transaction at a time: a write cannot wait inside a delete
      const org = await call('POST', 'organizations', 201, { _type: 'Organization', label: 'Waited For' });
      const other = await call('POST', 'organizations', 201, { _type: 'Organization', label: 'Still There' });
      const person = await call('POST', `organizations/${org.id}/persons`, 201, { _type: 'Person', givenName: 'Erika' });
      const attribution = await call('POST', `persons/${person.id}/attributedTo`, 201, { _type: 'Attribution', attributedTo: other.id });
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        // Holding the attribution stops the delete after it locked the organization and the person.
        await holder.query('begin');
        await holder.query(`select 1 from "${schemaOf(db)}".objects where id = $1 for key share`, [attribution.id]);
        const deleting = send('delete', 'DELETE', `organizations/${org.id}`);
        await waitersReach(holder, 1);
        const byPath = send('by path', 'PATCH', 'organizations/Waited%20For/persons/Erika', { title: 'by path' });
        const byKey = send('by key', 'PATCH', `persons/${person.id}`, { givenName: 'Erika', agentOf: other.id, title: 'by key' });
        await waitersReach(holder, 3);
        await holder.query('rollback');
        expect((await deleting).status).to.equal(204);
        expect((await byPath).status).to.equal(404);
        const recreated = await byKey;
        expect(recreated.status).to.equal(201);
        // Version 1, the delete 2: the object made anew continues the count.
        expect(recreated.body).to.include({ id: person.id, agentOf: other.id, parentId: other.id, title: 'by key', _version: 3 });
      } finally {
        await holder.end();
      }
    });
  });

  /** Waits until so many other connections to the database wait for a lock. */
  async function waitersReach(client: pg.Client, count: number) {
    for (let tries = 0; tries < 200; tries++) {
      const r = await client.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      if (r.rows[0].n >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`fewer than ${count} requests wait for a lock`);
  }

  /** A 400 whose only violation is a reference to an object a concurrent delete removed. */
  function referenceGone(x: Answer): boolean {
    return x.status === 400 && x.what === 'post attribution' && x.body.violations?.length === 1 && x.body.violations[0].path === 'attributedTo';
  }

  /** What a delete must never leave: children of removed objects, relations naming them, open history. */
  async function danglingOf(name: string) {
    const s = `"${schemaOf(name)}"`;
    const q = (sql: string) => t.service.storage.knex.raw(sql).then((r: { rows: { id: string }[] }) => r.rows.map((x) => x.id));
    return {
      orphans: await q(`select o.id from ${s}.objects o where o.parent_id is not null and not exists (select 1 from ${s}.objects p where p.id = o.parent_id)`),
      attributionsOfNothing: await q(`select o.id from ${s}.objects o where o.type = 'Attribution' and not exists (select 1 from ${s}.objects p where p.id::text = o.props->>'attributedTo')`),
      openHistoryOfRemoved: await q(`select h.id from ${s}.history h where h.valid_to is null and not exists (select 1 from ${s}.objects o where o.id = h.id)`),
      objectsWithoutOpenHistory: await q(`select o.id from ${s}.objects o where not exists (select 1 from ${s}.history h where h.id = o.id and h.version = o.version and h.valid_to is null)`),
    };
  }
});

/**
 * A stand-in for the profiles plugin's check of custom properties, which runs
 * inside every write's transaction: for an object titled `deadlock N` it
 * fails the first N attempts as the database reports a deadlock.
 */
const attempts = new Map<string, number>();
const deadlocking: PluginManifest = {
  name: 'test-deadlocking', host: '^1',
  register(host) {
    host.setCustomPropertiesCheck(async ({ state }) => {
      const title = String(state.title ?? '');
      const failures = /^deadlock (\d+)$/.exec(title);
      if (!failures) return [];
      attempts.set(title, (attempts.get(title) ?? 0) + 1);
      if (attempts.get(title)! <= Number(failures[1])) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      return [];
    });
  },
};

describe('REST interface: writes that lose races', () => {
  let t: TestService;
  let db: string;
  let scheme: Json;
  const send = (method: string, path: string, json?: unknown) => t.request(`/rest/${db}/${path}`, { method, json });
  before(async () => {
    t = await startService({}, { plugins: [deadlocking], without: ['profiles'] });
    db = await createDatabase(t);
    scheme = await expectStatus(await send('POST', 'schemes', { _type: 'Scheme', label: 'Races' }), 201);
  });
  after(() => t.close());

  it('runs a write again after a deadlock and answers what the attempt that committed did', async () => {
    const created = await expectStatus(await send('POST', `schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Retried', title: 'deadlock 2' }), 201);
    expect(attempts.get('deadlock 2')).to.equal(3);
    expect(created).to.include({ label: 'Retried', _version: 1 });
    const changed = await expectStatus(await send('PATCH', `classifiers/${created.id}`, { title: 'deadlock 4' }), 200);
    expect(attempts.get('deadlock 4')).to.equal(5);
    expect(changed).to.include({ title: 'deadlock 4', _version: 2 });
    const listed = await expectStatus(await send('GET', `schemes/${scheme.id}/classifiers`), 200);
    expect(listed._embedded.classifiers.map((o: Json) => o.label)).to.deep.equal(['Retried']);
  });

  it('answers 503 with Retry-After when every attempt lost, and writes nothing', async () => {
    const r = await send('POST', `schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Given Up', title: 'deadlock 5' });
    expect(attempts.get('deadlock 5')).to.equal(5);
    expect(r.headers.get('retry-after')).to.equal('1');
    expect(await expectStatus(r, 503)).to.include({ statusCode: 503, method: 'POST', message: 'The service is temporarily unavailable.' });
    await expectStatus(await send('GET', `schemes/${scheme.id}/classifiers/Given%20Up`), 404);
  });

  describe('on PostgreSQL, beside a lock another connection holds', () => {
    let impatient: TestService;
    let name: string;
    let holder: pg.Client;
    const rest = (path: string, method = 'GET', json?: unknown) => impatient.request(`/rest/${name}/${path}`, { method, json });
    /** Holds a lock on rows from another connection while the call runs, and lets go after. */
    async function whileHeld(lockSql: string, id: string, run: () => Promise<void>) {
      await holder.query('begin');
      try {
        await holder.query(lockSql.replaceAll('$S', `"${schemaOf(name)}"`), [id]);
        await run();
      } finally {
        await holder.query('rollback');
      }
    }
    before(async function () {
      const url = process.env.SERVICE_TEST_DATABASE_URL;
      if (!url) this.skip(); // the embedded database has one connection: nobody else can hold a lock
      // A lock not granted within 50 ms fails the statement (55P03), so a write that waits shows as 503.
      impatient = await startService({ SERVICE_DATABASE_URL: `${url}?options=${encodeURIComponent('-c lock_timeout=50')}` });
      name = await createDatabase(impatient);
      holder = new pg.Client({ connectionString: url });
      await holder.connect();
    });
    after(async () => {
      await holder?.end();
      await impatient?.close();
    });

    it('answers 503, not 500, when no lock is granted within lock_timeout, and undoes what the write had done', async () => {
      const created = await expectStatus(await rest('schemes', 'POST', { _type: 'Scheme', label: 'Held', title: 'before' }), 201);
      // The open history row: the PATCH changes the object first, then waits here to close it.
      await whileHeld('select 1 from $S.history where id = $1 and valid_to is null for update', created.id, async () => {
        const r = await rest(`schemes/${created.id}`, 'PATCH', { title: 'after' });
        expect(r.headers.get('retry-after')).to.equal('1');
        await expectStatus(r, 503);
      });
      expect(await expectStatus(await rest(`schemes/${created.id}`), 200)).to.include({ title: 'before', _version: 1 });
      expect(await expectStatus(await rest(`schemes/${created.id}`, 'PATCH', { title: 'after' }), 200)).to.include({ _version: 2 });
    });

    it('adds a child to an organization being changed, and waits while it is being removed', async () => {
      const org = await expectStatus(await rest('organizations', 'POST', { _type: 'Organization', label: 'Parent' }), 201);
      await whileHeld('select 1 from $S.objects where id = $1 for no key update', org.id, async () => {
        await expectStatus(await rest(`organizations/${org.id}/persons`, 'POST', { _type: 'Person', givenName: 'Beside' }), 201);
      });
      await whileHeld('select 1 from $S.objects where id = $1 for update', org.id, async () => {
        await expectStatus(await rest(`organizations/${org.id}/persons`, 'POST', { _type: 'Person', givenName: 'After' }), 503);
      });
    });

    it('lets a list PATCH change objects of a list while another object of it is being written, and waits when it names or replaces that one', async () => {
      const org = await expectStatus(await rest('organizations', 'POST', { _type: 'Organization', label: 'Listed' }), 201);
      const [busy, free] = (await expectStatus(await rest(`organizations/${org.id}/persons`, 'PUT', [
        { _type: 'Person', givenName: 'Busy' }, { _type: 'Person', givenName: 'Free' }]), 200))._embedded.persons;
      await whileHeld('select 1 from $S.objects where id = $1 for no key update', busy.id, async () => {
        await expectStatus(await rest(`organizations/${org.id}/persons`, 'PATCH', [{ id: free.id, title: 'changed beside' }]), 200);
        await expectStatus(await rest(`organizations/${org.id}/persons`, 'PATCH', [{ id: busy.id, title: 'must wait' }]), 503);
        await expectStatus(await rest(`organizations/${org.id}/persons`, 'PUT', [{ _type: 'Person', id: free.id, givenName: 'Free' }]), 503);
      });
      expect((await expectStatus(await rest(`persons/${free.id}`), 200)).title).to.equal('changed beside');
    });
  });
});
