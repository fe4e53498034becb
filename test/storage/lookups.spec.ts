/**
 * The look-ups of a bulk write's checks (ObjectStore.keyUses, labelClashes)
 * run in parts of `lookupPart` objects (the embedded database's bulk writes
 * use small parts): whatever the parts, the answers are the same, and a
 * clash is reported at its place in the whole batch.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ObjectStore, type StoredObject } from '../../runtime/storage/objects.ts';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

describe('object store: look-ups of bulk checks in parts', () => {
  const tenant = randomUUID();
  let t: TestService;
  let db: string;
  const object = (parentId: string | null, list: string, label: string): StoredObject => ({
    id: randomUUID(), type: 'Collection', tenant, parentId, list, label, title: null, description: null, status: null, modelId: null,
    version: 1, createdBy: 'test', dateCreated: 0, modifiedBy: 'test', dateModified: 0, props: {}, custom: {},
  });
  const root = object(null, 'schemes', 'Lookups');
  const stored = ['a', 'b', 'c', 'd', 'e'].map((l) => object(root.id, 'collections', l));

  before(async function () {
    this.timeout(300_000);
    t = await startService();
    db = await createDatabase(t);
    await new ObjectStore(t.service.storage.knex, db).insert([root, ...stored], () => ({}), 'test');
  });
  after(() => t?.close());

  it('gives the same key uses and label clashes in parts of one, two and 5,000 objects', async () => {
    // New objects, some taking labels the stored ones have; and keys that exist, that do not.
    const written = ['x', 'b', 'y', 'z', 'e', 'd', 'w'].map((l) => object(root.id, 'collections', l));
    const ids = [stored[1].id, randomUUID(), stored[4].id, randomUUID(), root.id];
    const answers = [];
    for (const part of [1, 2, 5000]) {
      const store = new ObjectStore(t.service.storage.knex, db, part);
      const uses = await store.keyUses(ids);
      answers.push({
        uses: ids.map((id) => uses.get(id)).map((u) => u && { liveTenant: u.liveTenant, tenants: [...u.tenants], lastVersion: u.lastVersion }),
        clashes: await store.labelClashes(written, written.map((o) => o.id)),
        // An object leaving gives its label up.
        freed: await store.labelClashes(written, [stored[3].id, ...written.map((o) => o.id)]),
      });
    }
    expect(answers[0].clashes).to.deep.equal([1, 4, 5]);
    expect(answers[0].freed).to.deep.equal([1, 4]);
    expect(answers[0].uses.map((u) => u?.liveTenant)).to.deep.equal([tenant, undefined, tenant, undefined, tenant]);
    expect(answers[1]).to.deep.equal(answers[0]);
    expect(answers[2]).to.deep.equal(answers[0]);
  });
});
