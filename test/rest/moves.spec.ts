/**
 * Writable parent references (decisions §7.1, §7.3, §7.4; issue 19): an
 * object names its parent by the reference for that kind of parent
 * (`inScheme`, `inCollection`, `inSystem`, `literalOf`, `hasDomain`), given
 * on create instead of the path or in agreement with it, and written on an
 * update to move the object with everything below it; the kind of a scheme
 * (`modelType`) decides what it may hold.
 */
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { rows } from '../plugins/query/fixtures.ts';

type Json = Record<string, any>;

describe('writable parent references and moves (decisions §7.1)', function () {
  this.timeout(120_000);
  let t: TestService;
  let db: string;
  let rest: string;
  const o: Record<string, Json> = {};
  /** A time before the first move (epoch ms). */
  let movedAt = 0;

  async function send(method: string, path: string, json?: unknown): Promise<{ status: number; body: Json }> {
    const r = await t.request(`${rest}/${path}`, { method, json });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : {} };
  }
  async function ok(method: string, path: string, json?: unknown): Promise<Json> {
    const r = await send(method, path, json);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).to.be.within(200, 299);
    return r.body;
  }
  /** The violations of a refused write, with the status expected. */
  async function refused(method: string, path: string, json: unknown, status = 400): Promise<{ path: string; message: string }[]> {
    const r = await send(method, path, json);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).to.equal(status);
    return r.body.violations;
  }
  const labels = async (path: string) => Object.values<Json[]>((await ok('GET', path))._embedded ?? {}).flat().map((x) => x.label).sort();

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    rest = `/rest/${db}`;
    o.s1 = await ok('POST', 'schemes', { _type: 'Scheme', label: 'Eins' });
    o.s2 = await ok('POST', 'schemes', { _type: 'Scheme', label: 'Zwei' });
    o.catalog = await ok('POST', 'schemes', { _type: 'Scheme', label: 'Katalog', modelType: 'DataCatalog' });
    o.systems = await ok('POST', 'schemes', { _type: 'Scheme', label: 'Systeme', modelType: 'SystemCatalog' });
  });
  after(() => t?.close());

  describe('create', () => {
    it('takes the parent reference instead of the path, in the flat list of the type', async () => {
      o.folder = await ok('POST', 'collections', { _type: 'Collection', label: 'Ordner', inScheme: o.s1.id });
      expect(o.folder).to.include({ inScheme: o.s1.id, parentId: o.s1.id, modelId: o.s1.id });
      expect(o.folder).to.not.have.property('inCollection');
      o.inner = await ok('POST', 'collections', { _type: 'Collection', label: 'Innen', inCollection: o.folder.id });
      expect(o.inner).to.include({ inCollection: o.folder.id, parentId: o.folder.id, modelId: o.s1.id });
      expect((await ok('GET', 'schemes/Eins/collections/Ordner/collections/Innen')).id).to.equal(o.inner.id);
      o.customer = await ok('POST', 'classifiers', { _type: 'Classifier', label: 'Kunde', inScheme: o.s1.id });
      o.name = await ok('POST', `classifiers/${o.customer.id}/attributes`, { _type: 'BusinessAttribute', label: 'Name' });
      o.colours = await ok('POST', 'enumerations', { _type: 'Enumeration', label: 'Farben', inScheme: o.s1.id });
      o.red = await ok('POST', 'literals', { _type: 'Literal', label: 'Rot', literalOf: o.colours.id });
      expect(o.red).to.include({ literalOf: o.colours.id, parentId: o.colours.id });
    });

    it('takes it beside the path when they agree, and refuses a disagreement on that property', async () => {
      const agreed = await ok('POST', 'schemes/Eins/classifiers', { _type: 'Classifier', label: 'Vertrag', inScheme: o.s1.id });
      expect(agreed).to.include({ inScheme: o.s1.id, parentId: o.s1.id });
      expect((await refused('POST', 'schemes/Eins/classifiers', { _type: 'Classifier', label: 'X', inScheme: o.s2.id })).map((v) => v.path)).to.deep.equal(['inScheme']);
      expect((await refused('POST', 'schemes/Eins/classifiers', { _type: 'Classifier', label: 'X', inCollection: o.folder.id })).map((v) => v.path)).to.deep.equal(['inCollection']);
      expect((await refused('POST', 'classifiers/' + o.customer.id + '/attributes', { _type: 'BusinessAttribute', label: 'X', hasDomain: agreed.id })).map((v) => v.path)).to.deep.equal(['hasDomain']);
    });

    it('refuses two references naming different parents, and none where the path names none', async () => {
      const [both] = await refused('POST', 'classifiers', { _type: 'Classifier', label: 'X', inScheme: o.s1.id, inCollection: o.folder.id });
      expect(both.path).to.equal('inScheme');
      expect(both.message).to.contain('inCollection, inScheme');
      const [none] = await refused('POST', 'classifiers', { _type: 'Classifier', label: 'X' });
      expect(none.path).to.equal('inCollection');
      expect(none.message).to.contain('inCollection, inScheme');
    });

    it('refuses a parent of a type that cannot hold the object, and a key that names nothing', async () => {
      const [wrong] = await refused('POST', 'literals', { _type: 'Literal', label: 'X', literalOf: o.customer.id });
      expect(wrong).to.deep.include({ path: 'literalOf' });
      expect(wrong.message).to.contain('Classifier');
      expect((await refused('POST', 'collections', { _type: 'Collection', label: 'X', inScheme: o.folder.id }))[0].path).to.equal('inScheme');
      expect((await refused('POST', 'collections', { _type: 'Collection', label: 'X', inScheme: '00000000-0000-4000-8000-000000000000' }))[0].path).to.equal('inScheme');
    });
  });

  describe('moves', () => {
    it('moves an object when its parent reference is written, from one list to another', async () => {
      const before = Date.now();
      await new Promise((r) => setTimeout(r, 5));
      movedAt = before;
      const moved = await ok('PATCH', `classifiers/${o.customer.id}`, { inCollection: o.inner.id });
      expect(moved).to.include({ inCollection: o.inner.id, parentId: o.inner.id, modelId: o.s1.id, _version: o.customer._version + 1 });
      expect(moved).to.not.have.property('inScheme');
      expect(await labels('schemes/Eins/classifiers')).to.not.include('Kunde');
      expect(await labels('schemes/Eins/collections/Ordner/collections/Innen/classifiers')).to.deep.equal(['Kunde']);
      // Its attribute went with it.
      expect((await ok('GET', 'schemes/Eins/collections/Ordner/collections/Innen/classifiers/Kunde/attributes/Name')).id).to.equal(o.name.id);
      // Linked under the relation that now holds it, not the one before (decisions §7.3).
      expect(moved._links.inCollection.href).to.match(new RegExp(`/collections/${o.inner.id}$`));
      expect(moved._links).to.not.have.property('inScheme');
    });

    it('moves back with PUT on the business-key path, the reference written back as read', async () => {
      const read = await ok('GET', 'schemes/Eins/collections/Ordner/collections/Innen/classifiers/Kunde');
      const { inCollection: _gone, ...rest } = read;
      const back = await ok('PUT', 'schemes/Eins/collections/Ordner/collections/Innen/classifiers/Kunde', { ...rest, inScheme: o.s1.id });
      expect(back).to.include({ inScheme: o.s1.id, parentId: o.s1.id });
      expect(await labels('schemes/Eins/classifiers')).to.include('Kunde');
      // Written back unchanged, it stays and keeps its version.
      const again = await ok('PUT', `classifiers/${o.customer.id}`, back);
      expect(again).to.include({ _version: back._version, parentId: o.s1.id });
    });

    it('records the move in the history; as of before, the object stands under its old parent', async () => {
      const history = (await ok('GET', `classifiers/${o.customer.id}/history`))._embedded.history;
      const move = history.find((h: Json) => h.object.inCollection === o.inner.id);
      expect(move.changes).to.include.members(['inCollection', 'inScheme', 'parentId']);
      const then = await ok('GET', `classifiers/${o.customer.id}?version=${movedAt}`);
      expect(then).to.include({ inScheme: o.s1.id, parentId: o.s1.id });
      expect(then._links.inScheme.href).to.match(new RegExp(`/schemes/${o.s1.id}$`));
      const moved = history.find((h: Json) => h.object.inCollection === o.inner.id);
      const during = await ok('GET', `schemes/Eins/collections/Ordner/collections/Innen/classifiers?version=${moved.validFrom}`);
      expect(during._embedded.classifiers.map((c: Json) => c.label)).to.deep.equal(['Kunde']);
      expect((await ok('GET', `schemes/Eins/collections/Ordner/collections/Innen/classifiers?version=${movedAt}`)).total).to.equal(0);
    });

    it('moves a subtree to another scheme: the model of everything below follows, in one write', async () => {
      const versions = (await ok('GET', `attributes/${o.name.id}`))._version;
      const moved = await ok('PATCH', `collections/${o.folder.id}`, { inScheme: o.s2.id });
      expect(moved).to.include({ parentId: o.s2.id, modelId: o.s2.id });
      expect((await ok('GET', `collections/${o.inner.id}`)).modelId).to.equal(o.s2.id);
      expect((await ok('GET', `schemes/Zwei/collections/Ordner/collections/Innen`)).id).to.equal(o.inner.id);
      // The attribute below the classifier that stood in Innen before moved back: still in Eins.
      const attribute = await ok('GET', `attributes/${o.name.id}`);
      expect(attribute).to.include({ modelId: o.s1.id, _version: versions });
      await ok('PATCH', `classifiers/${o.customer.id}`, { inCollection: o.inner.id });
      expect(await ok('GET', `attributes/${o.name.id}`)).to.include({ modelId: o.s2.id, _version: versions + 1 });
      // Back to Eins, all of it.
      await ok('PATCH', `collections/${o.folder.id}`, { inScheme: o.s1.id });
      for (const id of [o.inner.id, o.customer.id]) expect((await ok('GET', `assets/${id}`)).modelId).to.equal(o.s1.id);
      expect((await ok('GET', `attributes/${o.name.id}`)).modelId).to.equal(o.s1.id);
    });

    it('refuses a move into the object itself or below it (400 on the reference), and changes nothing', async () => {
      expect((await refused('PATCH', `collections/${o.folder.id}`, { inCollection: o.folder.id }))[0].path).to.equal('inCollection');
      const [below] = await refused('PATCH', `collections/${o.folder.id}`, { inCollection: o.inner.id });
      expect(below.path).to.equal('inCollection');
      expect(below.message).to.match(/itself/);
      expect((await ok('GET', `collections/${o.folder.id}`)).parentId).to.equal(o.s1.id);
    });

    it('refuses a move onto a sibling\'s label with 409 on label', async () => {
      await ok('POST', 'schemes/Zwei/classifiers', { _type: 'Classifier', label: 'Kunde' });
      const r = await send('PATCH', `classifiers/${o.customer.id}`, { inScheme: o.s2.id });
      expect(r.status, JSON.stringify(r.body)).to.equal(409);
      expect(r.body.violations.map((v: Json) => v.path)).to.deep.equal(['label']);
      expect((await ok('GET', `classifiers/${o.customer.id}`)).parentId).not.to.equal(o.s2.id);
    });

    it('refuses a parent of a type that cannot hold the object, and two references that disagree', async () => {
      expect((await refused('PATCH', `literals/${o.red.id}`, { literalOf: o.customer.id }))[0].path).to.equal('literalOf');
      expect((await refused('PATCH', `collections/${o.inner.id}`, { inCollection: o.customer.id }))[0].path).to.equal('inCollection');
      expect((await refused('PATCH', `classifiers/${o.customer.id}`, { inScheme: o.s2.id, inCollection: o.folder.id }))[0].path).to.equal('inScheme');
    });
  });

  describe('links and views', () => {
    it('links literals by literalOf and subsystems by inSystem (decisions §7.3)', async () => {
      expect((await ok('GET', `literals/${o.red.id}`))._links.literalOf.href).to.match(new RegExp(`/enumerations/${o.colours.id}$`));
      o.portal = await ok('POST', 'schemes/Systeme/systems', { _type: 'System', label: 'Portal' });
      o.database = await ok('POST', `systems/${o.portal.id}/systems`, { _type: 'System', label: 'Datenbank' });
      expect(o.database).to.include({ inSystem: o.portal.id });
      const read = await ok('GET', `systems/${o.database.id}`);
      expect(read._links.inSystem.href).to.match(new RegExp(`/systems/${o.portal.id}$`));
      expect(read._links.parent.href).to.match(new RegExp(`/assets/${o.portal.id}$`));
    });

    it('has a column per parent reference in the views, beside parent_id (decisions §7.4)', async () => {
      const classifiers = await rows(t, db, `select label, in_scheme, in_collection, parent_id from classifier_view where id = '${o.customer.id}'`);
      expect(classifiers).to.have.length(1);
      const [c] = classifiers;
      expect(c.parent_id).to.equal(c.in_scheme ?? c.in_collection);
      expect([c.in_scheme, c.in_collection].filter((x) => x !== null && x !== '')).to.have.length(1);
      expect(await rows(t, db, `select literal_of, parent_id from literal_view where id = '${o.red.id}'`)).to.deep.equal([{ literal_of: o.colours.id, parent_id: o.colours.id }]);
      expect(await rows(t, db, `select in_system, in_scheme from system_view where id = '${o.database.id}'`)).to.deep.equal([{ in_system: o.portal.id, in_scheme: null }]);
      expect(await rows(t, db, `select has_domain from attribute_view where id = '${o.name.id}'`)).to.deep.equal([{ has_domain: o.customer.id }]);
      // As of before the first move, the version view shows the old parent.
      expect(await rows(t, db, `select in_scheme, in_collection from classifier_version_view where id = '${o.customer.id}'`, { params: { version: String(movedAt) } }))
        .to.deep.equal([{ in_scheme: o.s1.id, in_collection: null }]);
      // The original product's view names (holdspost_view) beside the snake-case ones.
      for (const view of ['holdspost_view', 'holds_post_view', 'dataobject_view', 'data_object_view', 'holdspost_version_view']) {
        expect(await rows(t, db, `select count(*)::int as n from ${view}`), view).to.deep.equal([{ n: 0 }]);
      }
    });
  });

  describe('kinds of model', () => {
    it('refuses a create into a scheme of a kind that cannot hold the type, naming the kind', async () => {
      const [v] = await refused('POST', 'schemes/Eins/systems', { _type: 'System', label: 'X' });
      expect(v.path).to.equal('_type');
      expect(v.message).to.contain('BusinessDataModel').and.contain('SystemCatalog');
      expect((await refused('POST', 'systems', { _type: 'System', label: 'X', inScheme: o.s1.id }))[0].message).to.contain('BusinessDataModel');
      await ok('POST', 'schemes/Katalog/collections', { _type: 'Collection', label: 'Statistik' });
      o.dataset = await ok('POST', 'schemes/Katalog/collections/Statistik/datasets', { _type: 'Dataset', label: 'Bevölkerung' });
      expect((await refused('POST', 'schemes/Eins/collections/Ordner/datasets', { _type: 'Dataset', label: 'X' }))[0].message).to.contain('DataCatalog');
      // Collections and classifiers stand in every kind.
      await ok('POST', 'schemes/Systeme/classifiers', { _type: 'Classifier', label: 'Schnittstelle' });
    });

    it('refuses a move into such a scheme, also for what stands below the object moved', async () => {
      expect((await refused('PATCH', `systems/${o.portal.id}`, { inScheme: o.s1.id }))[0].path).to.equal('inScheme');
      const folder = (await ok('GET', 'schemes/Katalog/collections/Statistik')).id;
      const [v] = await refused('PATCH', `collections/${folder}`, { inScheme: o.s1.id });
      expect(v.path).to.equal('inScheme');
      expect(v.message).to.contain('Dataset');
      expect((await ok('GET', `datasets/${o.dataset.id}`)).modelId).to.equal(o.catalog.id);
    });

    it('refuses a change of kind that what the scheme holds does not suit', async () => {
      const [v] = await refused('PATCH', `schemes/${o.systems.id}`, { modelType: 'BusinessDataModel' });
      expect(v.path).to.equal('modelType');
      expect(v.message).to.contain('System');
      await ok('PATCH', `schemes/${o.s2.id}`, { modelType: 'ProcessingDirectory' });
    });
  });
});
