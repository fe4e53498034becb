/**
 * The walks up the tree (ObjectStore.withAncestors for downloads,
 * ObjectStore.ancestors for moves, SearchStore.ancestors for search hits)
 * read each parent by its key, however many objects they start from: joined
 * plainly, the planner hashed the whole table at every step once they
 * started from a few hundred objects (objects.ts: parentStep).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { ObjectStore, type StoredObject } from '../../runtime/storage/objects.ts';
import { SearchStore } from '../../runtime/storage/search.ts';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

describe('object store: walks up the tree', () => {
  const tenant = randomUUID();
  let t: TestService;
  let knex: Knex;
  let db: string;
  let store: ObjectStore;
  const object = (parentId: string | null, list: string, label: string): StoredObject => ({
    id: randomUUID(), type: 'Collection', tenant, parentId, list, label, title: null, description: null, status: null, modelId: null,
    version: 1, createdBy: 'test', dateCreated: 0, modifiedBy: 'test', dateModified: 0, props: {}, custom: {},
  });
  const root = object(null, 'schemes', 'Root');
  // 100 collections of 200 each: enough rows that hashing the table looks cheap to the planner.
  const middle = Array.from({ length: 100 }, (_, i) => object(root.id, 'collections', `m${i}`));
  const leaves = middle.flatMap((m) => Array.from({ length: 200 }, (_, i) => object(m.id, 'collections', `l${i}`)));
  // The first leaf of each collection and the other leaves of the first: 299 objects to start from.
  const started = [...middle.map((_, i) => leaves[i * 200]), ...leaves.slice(1, 200)];

  before(async function () {
    this.timeout(300_000);
    t = await startService();
    knex = t.service.storage.knex;
    db = await createDatabase(t);
    store = new ObjectStore(knex, db);
    await store.insert([root, ...middle], () => ({}), 'test');
    for (let at = 0; at < leaves.length; at += 5000) await store.insert(leaves.slice(at, at + 5000), () => ({}), 'test');
    // Statistics as a running installation has them (autovacuum, or the embedded database's timer).
    await knex.raw('analyze');
  });
  after(() => t?.close());

  /** A step up reads each parent by its key (the first objects may be read any way: that happens once). */
  function expectParentsByKey(plan: string) {
    const brief = plan.replace(/'\{[^}]*\}'/g, "'{…}'");
    expect(brief, brief).not.to.match(/Hash Join/);
    expect(brief, brief).to.match(/Nested Loop[\s\S]*Limit[\s\S]*Index Scan using objects_pkey on objects p/);
  }

  /** The plan of the statement `run` sends, as EXPLAIN gives it. */
  async function planOf(pattern: RegExp, run: () => Promise<unknown>): Promise<string> {
    let sql = '';
    let bindings: unknown[] = [];
    const listener = (q: { sql: string; bindings: unknown[] }) => {
      if (pattern.test(q.sql)) ({ sql, bindings } = q);
    };
    knex.on('query', listener);
    try {
      await run();
    } finally {
      knex.off('query', listener);
    }
    expect(sql, 'the statement').not.to.equal('');
    const explained = await knex.raw(`explain ${sql.replace(/\$\d+/g, '?')}`, bindings as Knex.RawBinding[]);
    return (explained.rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
  }

  it('reads the places of many objects with everything above them, each parent by its key (withAncestors)', async () => {
    const rows = await store.withAncestors(tenant, started.map((o) => o.id));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(rows).to.have.length(299 + 100 + 1);
    expect(byId.get(leaves[5].id)).to.deep.equal({ id: leaves[5].id, parentId: middle[0].id, label: 'l5' });
    expect(byId.get(middle[7].id)).to.deep.equal({ id: middle[7].id, parentId: root.id, label: 'm7' });
    expect(byId.get(root.id)).to.deep.equal({ id: root.id, parentId: null, label: 'Root' });
    expect(await store.withAncestors(randomUUID(), started.map((o) => o.id))).to.deep.equal([]);
    const plan = await planOf(/with recursive up\(id, parent_id, label\)/, () => store.withAncestors(tenant, started.map((o) => o.id)));
    expectParentsByKey(plan);
  });

  it('reads the keys above many objects, each parent by its key (ancestors)', async () => {
    const found = await store.ancestors(tenant, started.map((o) => o.id));
    expect(found.get(leaves[200 * 7].id)).to.deep.equal([middle[7].id, root.id]);
    const plan = await planOf(/with recursive up\(start, parent_id, depth\)/, () => store.ancestors(tenant, started.map((o) => o.id)));
    expectParentsByKey(plan);
  });

  it('reads the chains above many search hits, each parent by its key (SearchStore.ancestors)', async () => {
    const search = new SearchStore(knex, db);
    const chains = await search.ancestors(started.map((o) => o.id));
    expect(chains.get(leaves[200 * 9].id)?.map((a) => a.label)).to.deep.equal(['Root', 'm9', 'l0']);
    const plan = await planOf(/with recursive up as/, () => search.ancestors(started.map((o) => o.id)));
    expectParentsByKey(plan);
  });
});
