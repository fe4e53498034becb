/**
 * ObjectStore.childrenOfMany (downloads read whole trees with it): the
 * children of many objects in one statement, object after object in the
 * order asked, each one's by list and label, cut after `total` rows. The
 * order is the statement's (the rows' places, not the order they come in):
 * the planner serves it without sorting the rows.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { ObjectStore, type StoredObject } from '../../runtime/storage/objects.ts';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

describe('object store: children of many objects', () => {
  const tenant = randomUUID();
  let t: TestService;
  let knex: Knex;
  let store: ObjectStore;
  let db: string;
  const object = (parentId: string | null, list: string, label: string): StoredObject => ({
    id: randomUUID(), type: 'Collection', tenant, parentId, list, label, title: null, description: null, status: null, modelId: null,
    version: 1, createdBy: 'test', dateCreated: 0, modifiedBy: 'test', dateModified: 0, props: { n: label }, custom: {},
  });
  const root = object(null, 'schemes', 'Root');
  const first = object(root.id, 'collections', 'First');
  const empty = object(root.id, 'collections', 'Empty');
  const third = object(root.id, 'collections', 'Third');
  // Written out of order: the store orders them by list, then label.
  const firstChildren = [object(first.id, 'datasets', 'b'), object(first.id, 'collections', 'z'), object(first.id, 'datasets', 'a')];
  const thirdChildren = ['d', 'a', 'c', 'b'].map((l) => object(third.id, 'collections', l));
  const grandchild = object(firstChildren[1].id, 'collections', 'deep');
  const labels = (objects: { list: string; label: string }[]) => objects.map((o) => `${o.list}/${o.label}`);

  before(async function () {
    // Starting the embedded database takes most of a minute on a busy machine.
    this.timeout(300_000);
    t = await startService();
    knex = t.service.storage.knex;
    db = await createDatabase(t);
    store = new ObjectStore(knex, db);
    await store.insert([root, third, empty, first, ...thirdChildren, ...firstChildren, grandchild], () => ({}), 'test');
  });
  after(() => t?.close());

  it('reads every child of each object in the order asked, each one\'s by list and label, with whether it has children', async () => {
    const { children, complete } = await store.childrenOfMany(tenant, [third.id, empty.id, first.id], 100);
    expect(complete).to.equal(3);
    expect(children.map(labels)).to.deep.equal([
      ['collections/a', 'collections/b', 'collections/c', 'collections/d'],
      [],
      ['collections/z', 'datasets/a', 'datasets/b'],
    ]);
    expect(children[2].map((c) => c.hasChildren)).to.deep.equal([true, false, false]);
    expect(children[2][0]).to.include({ id: firstChildren[1].id, type: 'Collection', parentId: first.id });
    expect(children[2][0].props).to.deep.equal({ n: 'z' });
  });

  it('stops after `total` children: the objects before the last one read whole, the last one from its first child on', async () => {
    const { children, complete } = await store.childrenOfMany(tenant, [first.id, empty.id, third.id], 5);
    expect(complete).to.equal(2);
    expect(children.map(labels)).to.deep.equal([['collections/z', 'datasets/a', 'datasets/b'], [], ['collections/a', 'collections/b']]);
    const cutInFirst = await store.childrenOfMany(tenant, [third.id, first.id], 2);
    expect(cutInFirst.complete).to.equal(0);
    expect(cutInFirst.children.map(labels)).to.deep.equal([['collections/a', 'collections/b'], []]);
  });

  it('reads one list\'s children a page at a time after a place, with whether each has children (treeChildren)', async () => {
    const page = await store.treeChildren(tenant, first.id, 'datasets', { limit: 1 });
    expect(labels(page)).to.deep.equal(['datasets/a']);
    const rest = await store.treeChildren(tenant, first.id, 'datasets', { limit: 10, after: { label: page[0].label, id: page[0].id } });
    expect(labels(rest)).to.deep.equal(['datasets/b']);
    const collections = await store.treeChildren(tenant, first.id, 'collections', { limit: 10 });
    expect(collections.map((c) => [c.label, c.hasChildren])).to.deep.equal([['z', true]]);
    expect(collections[0]).to.include({ id: firstChildren[1].id, type: 'Collection', parentId: first.id });
    expect(collections[0].props).to.deep.equal({ n: 'z' });
    expect((await store.treeChildren(tenant, third.id, 'collections', { limit: 10 })).map((c) => c.hasChildren)).to.deep.equal([false, false, false, false]);
    // Another tenant's objects are not read.
    expect(await store.treeChildren(randomUUID(), first.id, 'datasets', { limit: 10 })).to.deep.equal([]);
  });

  it('looks whether a child has children only where it is of a type the walk descends into (branchTypes)', async () => {
    const asked = [third.id, empty.id, first.id];
    expect((await store.childrenOfMany(tenant, asked, 100, ['Collection'])).children[2].map((c) => c.hasChildren)).to.deep.equal([true, false, false]);
    expect((await store.childrenOfMany(tenant, asked, 100, [])).children[2].map((c) => c.hasChildren)).to.deep.equal([false, false, false]);
    expect((await store.childrenOfMany(tenant, asked, 100, ['Classifier'])).children[2].map((c) => c.hasChildren)).to.deep.equal([false, false, false]);
    expect((await store.treeChildren(tenant, first.id, 'collections', { limit: 10 }, ['Collection'])).map((c) => c.hasChildren)).to.deep.equal([true]);
    expect((await store.treeChildren(tenant, first.id, 'collections', { limit: 10 }, [])).map((c) => c.hasChildren)).to.deep.equal([false]);
  });

  describe('lean reads (LeanTreeRead: what a download has no use for, left out)', () => {
    // Below `Lean`: a branch (a collection) and leaves (datasets); each dataset keeps a reference to its parent among
    // its properties, as stored objects do.
    const parent = object(root.id, 'collections', 'Lean');
    const leaf = (label: string, custom: Record<string, unknown> = {}): StoredObject => ({
      ...object(parent.id, 'datasets', label), type: 'Dataset', props: { n: label, inCollection: parent.id }, custom,
    });
    const branch = object(parent.id, 'collections', 'c');
    const [a, b, d] = [leaf('a', { note: 'kept' }), leaf('b'), leaf('d')];
    const lean = { leaveOut: ['inCollection'], branchIdsOnly: true };
    before(() => store.insert([parent, branch, d, a, b], () => ({}), 'test'));

    it('leaves the properties out that it is told to, and gives one frozen empty object for no custom properties', async () => {
      const [children] = (await store.childrenOfMany(tenant, [parent.id], 100, ['Collection'], lean)).children;
      expect(labels(children)).to.deep.equal(['collections/c', 'datasets/a', 'datasets/b', 'datasets/d']);
      expect(children.map((c) => c.props)).to.deep.equal([{ n: 'c' }, { n: 'a' }, { n: 'b' }, { n: 'd' }]);
      expect(children[1].custom).to.deep.equal({ note: 'kept' });
      expect(children[2].custom).to.deep.equal({});
      expect(Object.isFrozen(children[2].custom)).to.equal(true);
      // Not lean: everything, as before.
      const [full] = (await store.childrenOfMany(tenant, [parent.id], 100, ['Collection'])).children;
      expect(full.map((c) => c.id)).to.deep.equal([branch.id, a.id, b.id, d.id]);
      expect(full[1].props).to.deep.equal({ n: 'a', inCollection: parent.id });
      const page = await store.treeChildren(tenant, parent.id, 'datasets', { limit: 10 }, ['Collection'], { leaveOut: ['inCollection'] });
      expect(page.map((c) => [c.id, c.props])).to.deep.equal([[a.id, { n: 'a' }], [b.id, { n: 'b' }], [d.id, { n: 'd' }]]);
    });

    it('gives the keys of the branch types\' children only, and of the last child read of an object cut short', async () => {
      const whole = await store.childrenOfMany(tenant, [parent.id, empty.id], 100, ['Collection'], lean);
      expect(whole.complete).to.equal(2);
      expect(whole.children[0].map((c) => c.id)).to.deep.equal([branch.id, null, null, null]);
      // Cut after each of the datasets: the last one read carries its key.
      for (const [total, last] of [[2, a], [3, b], [4, d]] as const) {
        const { children: [cut], complete } = await store.childrenOfMany(tenant, [parent.id, empty.id], total, ['Collection'], lean);
        expect(complete, `${total}`).to.equal(0);
        expect(cut.map((c) => c.id), `${total}`).to.deep.equal([branch.id, ...Array(total - 2).fill(null), last.id]);
        // The rest of its list follows on from it.
        const rest = await store.treeChildren(tenant, parent.id, 'datasets', { limit: 10, after: { label: last.label, id: cut[total - 1].id! } });
        expect(rest.map((c) => c.id), `${total}`).to.deep.equal([a, b, d].slice([a, b, d].indexOf(last) + 1).map((c) => c.id));
      }
    });

    it('goes on after the label of a last child deleted before its key was read (the nil key)', async () => {
      // The store's statements through a knex that deletes `b` just before the statement reading its key runs.
      const schema = schemaOf(db);
      const deleting = new Proxy(knex, {
        get(target, name, receiver) {
          if (name !== 'raw') return Reflect.get(target, name, receiver);
          return async (sql: string, bindings: Knex.RawBinding[]) => {
            if (/^select id from .* and label = \?$/.test(sql)) await target.raw(`delete from ${schema}.objects where id = ?`, [b.id]);
            return target.raw(sql, bindings);
          };
        },
      });
      const { children: [cut], complete } = await new ObjectStore(deleting, db).childrenOfMany(tenant, [parent.id, empty.id], 3, ['Collection'], lean);
      expect(complete).to.equal(0);
      expect(cut.map((c) => c.id)).to.deep.equal([branch.id, null, '00000000-0000-0000-0000-000000000000']);
      const rest = await store.treeChildren(tenant, parent.id, 'datasets', { limit: 10, after: { label: 'b', id: cut[2].id! } });
      expect(rest.map((c) => c.id)).to.deep.equal([d.id]);
    });
  });

  it('tells which types the tenant has objects of (typesPresent)', async () => {
    expect(await store.typesPresent(tenant, ['Classifier', 'Collection', 'Usage'])).to.deep.equal(new Set(['Collection']));
    expect(await store.typesPresent(tenant, [])).to.deep.equal(new Set());
    expect(await store.typesPresent(randomUUID(), ['Collection'])).to.deep.equal(new Set());
  });

  it('orders the rows by the objects\' places without a sort of the rows', async () => {
    let sql = '';
    let bindings: unknown[] = [];
    const listener = (q: { sql: string; bindings: unknown[] }) => {
      if (/with ordinality/.test(q.sql)) ({ sql, bindings } = q);
    };
    knex.on('query', listener);
    try {
      await store.childrenOfMany(tenant, [first.id, third.id], 5);
    } finally {
      knex.off('query', listener);
    }
    const explained = await knex.raw(`explain ${sql.replace(/\$\d+/g, '?')}`, bindings as Knex.RawBinding[]);
    const plan = (explained.rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']);
    // The limit takes the rows of the nested loop as they come: nothing sorts them in between.
    const loop = plan.findIndex((line) => /Nested Loop/.test(line));
    expect(loop, plan.join('\n')).to.be.greaterThan(0);
    expect(plan.slice(0, loop).join('\n'), plan.join('\n')).not.to.match(/Sort/);
    expect(plan[loop + 1], plan.join('\n')).to.match(/Function Scan on unnest v/);
  });
});
