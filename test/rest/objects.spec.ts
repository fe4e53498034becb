import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

describe('REST interface: objects', () => {
  let t: TestService;
  let db: string;
  before(async () => {
    t = await startService();
    db = await createDatabase(t);
  });
  after(() => t.close());

  it('creates a scheme, a classifier and an attribute and reads the attribute by its business-key path', async () => {
    let r = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Sales Model' } });
    expect(r.status).to.equal(201);
    const scheme = await r.json();
    expect(r.headers.get('location')).to.match(new RegExp(`/rest/${db}/schemes/${scheme.id}$`));
    r = await t.request(`/rest/${db}/schemes/Sales%20Model/classifiers`, { method: 'POST', json: { _type: 'Classifier', label: 'Kunde Ä' } });
    expect(r.status).to.equal(201);
    r = await t.request(`/rest/${db}/schemes/Sales%20Model/classifiers/Kunde%20%C3%84/attributes`, { method: 'POST', json: { _type: 'BusinessAttribute', label: 'Name', identifying: true } });
    expect(r.status).to.equal(201);
    const created = await r.json();
    r = await t.request(`/rest/${db}/schemes/Sales%20Model/classifiers/Kunde%20%C3%84/attributes/Name`);
    expect(r.status).to.equal(200);
    const attribute = await r.json();
    expect(attribute).to.include({ _type: 'BusinessAttribute', id: created.id, label: 'Name', status: 'WORKING', required: 'OPTIONAL', cardinality: 'ONE', identifying: true, _version: 1, db });
    expect(attribute.hasDomain).to.equal(attribute.parentId);
    expect(attribute.modelId).to.equal(scheme.id);
    expect(attribute._links.self.href).to.equal(`${t.url}/rest/${db}/attributes/${created.id}`);
    expect(attribute._links.hasDomain.href).to.equal(`${t.url}/rest/${db}/classifiers/${attribute.hasDomain}`);
    // Its lists are empty: no links to them (decisions §7.3).
    expect(attribute._links).to.not.have.any.keys('derivedTo', 'derivedFrom', 'attributedTo');
    expect(r.headers.get('etag')).to.equal('W/"1"');
  });

  it('answers 404 saying the scheme was not found', async () => {
    const r = await t.request(`/rest/${db}/schemes/Nope`);
    expect(r.status).to.equal(404);
    const body = await r.json();
    expect(body).to.deep.equal({ statusCode: 404, method: 'GET', message: 'The Scheme Nope was not found.', _links: { self: `${t.url}/rest/${db}/schemes/Nope` } });
  });

  it('refuses a person without givenName and agentOf with violations on exactly those paths, in en and de', async () => {
    let r = await t.request(`/rest/${db}/persons`, { method: 'POST', json: { _type: 'Person', familyName: 'Muster' } });
    expect(r.status).to.equal(400);
    let body = await r.json();
    expect(body.message).to.equal('The Person cannot be created.');
    expect(body.violations.map((v: { path: string }) => v.path)).to.deep.equal(['agentOf', 'givenName']);
    expect(body.violations[0].message).to.equal('The property is mandatory.');
    r = await t.request(`/rest/${db}/persons`, { method: 'POST', json: { _type: 'Person' }, headers: { 'Accept-Language': 'de-DE,de;q=0.9' } });
    body = await r.json();
    expect(body.violations[0].message).to.equal('Die Eigenschaft ist ein Pflichtfeld.');
  });
});

type Json = Record<string, any>;

async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

describe('REST interface: single objects', () => {
  let t: TestService;
  let db: string;
  let scheme: Json;
  const call = async (method: string, path: string, status: number, json?: unknown, headers: Record<string, string> = {}) =>
    expectStatus(await t.request(`/rest/${db}/${path}`, { method, json, headers }), status);
  const post = (path: string, json: Json) => call('POST', path, 201, json);

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    scheme = await post('schemes', { _type: 'Scheme', label: 'Objects' });
  });
  after(() => t.close());

  describe('PUT', () => {
    it('creates a missing object at a business-key path (201, Location) and replaces it afterwards (200)', async () => {
      const r = await t.request(`/rest/${db}/schemes/Objects/classifiers/Vertrag`, { method: 'PUT', json: { _type: 'Classifier', title: 'Contract', abstract: true } });
      const created = await expectStatus(r, 201);
      expect(created).to.include({ label: 'Vertrag', title: 'Contract', abstract: true, parentId: scheme.id, _version: 1 });
      expect(r.headers.get('location')).to.equal(`${t.url}/rest/${db}/classifiers/${created.id}`);
      const replaced = await call('PUT', 'schemes/Objects/classifiers/Vertrag', 200, { _type: 'Classifier', label: 'Vertrag', description: 'A contract' });
      expect(replaced).to.include({ id: created.id, description: 'A contract', _version: 2 });
      // Full replacement: what the payload does not give is gone.
      expect(replaced).not.to.have.any.keys('title', 'abstract');
    });

    it('creates a missing object at a technical-key path with that key', async () => {
      const id = '0b5f3a52-8c1e-4f0e-9d7e-5a1c7f0e2b11';
      const created = await call('PUT', `schemes/Objects/classifiers/${id}`, 201, { _type: 'Classifier', label: 'By Key' });
      expect(created.id).to.equal(id);
      expect((await call('GET', `classifiers/${id}`, 200)).label).to.equal('By Key');
    });

    it('resets unspecified properties to their defaults', async () => {
      const classifier = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Defaults' });
      const a = await post(`classifiers/${classifier.id}/attributes`, { _type: 'BusinessAttribute', label: 'A', required: 'MANDATORY', status: 'FINAL', identifying: true, minCardinality: 1 });
      const replaced = await call('PUT', `attributes/${a.id}`, 200, { _type: 'BusinessAttribute', label: 'A' });
      expect(replaced).to.include({ required: 'OPTIONAL', status: 'WORKING', cardinality: 'ONE', hasDomain: classifier.id, parentId: classifier.id });
      expect(replaced).not.to.have.any.keys('identifying', 'minCardinality');
    });

    it('keeps the label given by the business-key path when the payload leaves it out', async () => {
      await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Kept', title: 'x' });
      const replaced = await call('PUT', 'schemes/Objects/classifiers/Kept', 200, { _type: 'Classifier' });
      expect(replaced.label).to.equal('Kept');
      expect(replaced).not.to.have.key('title');
    });

    it('renames an object when the payload gives another label', async () => {
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Old Name' });
      const renamed = await call('PUT', 'schemes/Objects/classifiers/Old%20Name', 200, { _type: 'Classifier', label: 'New Name' });
      expect(renamed).to.include({ id: c.id, label: 'New Name' });
      await call('GET', 'schemes/Objects/classifiers/Old%20Name', 404);
    });

    it('moves a person to another organization when agentOf changes through a top-level path, and keeps it otherwise', async () => {
      const a = await post('organizations', { _type: 'Organization', label: 'Move From' });
      const b = await post('organizations', { _type: 'Organization', label: 'Move To' });
      const p = await post('organizations/Move%20From/persons', { _type: 'Person', givenName: 'Mo', familyName: 'Ver' });
      const kept = await call('PUT', `persons/${p.id}`, 200, { _type: 'Person', givenName: 'Mo', familyName: 'Ver', label: 'Mo Ver' });
      expect(kept).to.include({ agentOf: a.id, parentId: a.id });
      const moved = await call('PATCH', `persons/${p.id}`, 200, { agentOf: b.id });
      expect(moved).to.include({ agentOf: b.id, parentId: b.id, modelId: b.id });
      expect((await call('GET', 'organizations/Move%20To/persons', 200)).total).to.equal(1);
      expect((await call('GET', 'organizations/Move%20From/persons', 200)).total).to.equal(0);
    });
  });

  describe('PATCH', () => {
    it('sets the given properties and keeps the others; null removes one', async () => {
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Patched', title: 'T', abstract: true });
      const patched = await call('PATCH', `classifiers/${c.id}`, 200, { description: 'D', abstract: null });
      expect(patched).to.include({ label: 'Patched', title: 'T', description: 'D', _version: 2 });
      expect(patched).not.to.have.key('abstract');
    });

    it('creates a missing object (201)', async () => {
      const r = await t.request(`/rest/${db}/schemes/Objects/enumerations/Colours`, { method: 'PATCH', json: { _type: 'Enumeration' } });
      const created = await expectStatus(r, 201);
      expect(created).to.include({ label: 'Colours', parentId: scheme.id });
      expect(r.headers.get('location')).to.equal(`${t.url}/rest/${db}/enumerations/${created.id}`);
    });
  });

  describe('DELETE', () => {
    it('answers 204 without a body and removes the object with all its descendants', async () => {
      const s = await post('schemes', { _type: 'Scheme', label: 'Doomed' });
      const col = await post('schemes/Doomed/collections', { _type: 'Collection', label: 'C' });
      const cls = await post('schemes/Doomed/collections/C/classifiers', { _type: 'Classifier', label: 'K' });
      const attr = await post(`classifiers/${cls.id}/attributes`, { _type: 'BusinessAttribute', label: 'A' });
      const other = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Survivor' });
      const r = await t.request(`/rest/${db}/schemes/Doomed`, { method: 'DELETE' });
      expect(r.status).to.equal(204);
      expect(await r.text()).to.equal('');
      for (const o of [s, col, cls, attr]) await call('GET', `assets/${o.id}`, 404);
      await call('GET', `assets/${other.id}`, 200);
      await call('DELETE', 'schemes/Doomed', 404);
    });

    it('removes relations that point at a removed object, so no reference dangles', async () => {
      const org = await post('organizations', { _type: 'Organization', label: 'Leaving' });
      const p = await post('organizations/Leaving/persons', { _type: 'Person', givenName: 'Lea', familyName: 'Ving' });
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Owned' });
      await post(`classifiers/${c.id}/attributedTo`, { _type: 'Attribution', attributedTo: p.id });
      await call('DELETE', `organizations/${org.id}`, 204);
      expect((await call('GET', `classifiers/${c.id}/attributedTo`, 200)).total).to.equal(0);
    });

    it('removes a whole tree in one transaction: a concurrent reader sees all of it or nothing', async function () {
      await post('schemes', { _type: 'Scheme', label: 'Big Tree' });
      const items = Array.from({ length: 60 }, (_, i) => ({ _type: 'Classifier', label: `K${i}` }));
      await call('PUT', 'schemes/Big%20Tree/classifiers', 200, items);
      const before = (await call('GET', 'classifiers', 200)).total;
      const deleting = t.request(`/rest/${db}/schemes/Big%20Tree`, { method: 'DELETE' });
      const seen = new Set<number>();
      for (let i = 0; i < 10; i++) seen.add((await call('GET', 'classifiers', 200)).total);
      expect((await deleting).status).to.equal(204);
      seen.add((await call('GET', 'classifiers', 200)).total);
      expect([...seen].every((n) => n === before || n === before - 60), [...seen].join(',')).to.equal(true);
      expect(seen.has(before - 60)).to.equal(true);
    });
  });

  describe('HAL', () => {
    it('renders an object with its properties, _type, a self link and one link per reference, per list that holds something and to the parent', async () => {
      const cls = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Hal' });
      const en = await post('schemes/Objects/enumerations', { _type: 'Enumeration', label: 'Hal Values' });
      const a = await post(`classifiers/${cls.id}/attributes`, { _type: 'BusinessAttribute', label: 'Kind', hasRange: en.id });
      const base = `${t.url}/rest/${db}`;
      expect(a._links).to.deep.equal({
        self: { href: `${base}/attributes/${a.id}` },
        parent: { href: `${base}/assets/${cls.id}` },
        hasDomain: { href: `${base}/classifiers/${cls.id}` },
        hasRange: { href: `${base}/assets/${en.id}` },
      });
      expect((await call('GET', `classifiers/${cls.id}`, 200))._links).to.deep.equal({
        self: { href: `${base}/classifiers/${cls.id}` },
        parent: { href: `${base}/assets/${cls.parentId}` },
        inScheme: { href: `${base}/schemes/${cls.parentId}` },
        attributes: { href: `${base}/classifiers/${cls.id}/attributes` },
      });
      expect(a).to.include({ _type: 'BusinessAttribute', id: a.id, db, label: 'Kind', hasDomain: cls.id, hasRange: en.id, _version: 1 });
      expect(a).to.have.keys('_type', 'id', '_version', 'tenant', 'createdBy', 'dateCreated', 'modifiedBy', 'dateModified', 'db',
        'label', 'status', 'modelId', 'parentId', 'hasDomain', 'hasRange', 'required', 'cardinality', 'href', '_links');
      expect(a.href).to.equal(`${t.url}/web/${db}/attributes/${a.id}`);
      expect(a.createdBy).to.equal('admin');
      expect(a.dateCreated).to.be.a('number');
      for (const link of Object.values(a._links) as { href: string }[]) {
        expect((await t.request(link.href.slice(t.url.length))).status, link.href).to.equal(200);
      }
    });

    it('renders a list with total, a self link and the items under _embedded.<list name>, each with a self link', async () => {
      const list = await call('GET', 'schemes/Objects/enumerations', 200);
      expect(list).to.have.keys('total', '_links', '_embedded');
      expect(list._links.self.href).to.equal(`${t.url}/rest/${db}/schemes/Objects/enumerations`);
      expect(list._embedded).to.have.keys('enumerations');
      expect(list.total).to.equal(list._embedded.enumerations.length);
      for (const item of list._embedded.enumerations) expect(item._links.self.href).to.equal(`${t.url}/rest/${db}/enumerations/${item.id}`);
    });

    it('takes a read object back unchanged: HAL and read-only properties are ignored, nothing changes', async () => {
      const cls = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Round Trip', title: 'T', abstract: false });
      await post(`classifiers/${cls.id}/attributes`, { _type: 'BusinessAttribute', label: 'X', identifying: true, minCardinality: 0 });
      const read = await call('GET', `classifiers/${cls.id}/attributes/X`, 200);
      const written = await call('PUT', `classifiers/${cls.id}/attributes/X`, 200, read);
      expect(written).to.deep.equal(read);
      expect(await call('PATCH', `attributes/${read.id}`, 200, read)).to.deep.equal(read);
      const list = await call('GET', `classifiers/${cls.id}/attributes`, 200);
      expect(await call('PUT', `classifiers/${cls.id}/attributes`, 200, list._embedded.attributes)).to.deep.equal(list);
    });

    it('ignores read-only properties with other values in a write payload', async () => {
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Read Only', id: 'not-a-uuid', _version: 99, tenant: 'x', createdBy: 'mallory', dateCreated: 1, parentId: 'y', modelId: 'z', href: 'h', db: 'other', _links: { self: { href: 'x' } }, _embedded: {} });
      expect(c).to.include({ _version: 1, createdBy: 'admin', parentId: scheme.id, modelId: scheme.id, db });
      expect(c.tenant).to.match(/^[0-9a-f-]{36}$/);
    });
  });

  describe('versions and ETag', () => {
    it('starts _version at 1, grows it by one with every change and sends it as a weak ETag', async () => {
      let r = await t.request(`/rest/${db}/schemes/Objects/classifiers`, { method: 'POST', json: { _type: 'Classifier', label: 'Tagged' } });
      expect(r.headers.get('etag')).to.equal('W/"1"');
      const c = await r.json();
      r = await t.request(`/rest/${db}/classifiers/${c.id}`, { method: 'PATCH', json: { title: 'one' } });
      expect(r.headers.get('etag')).to.equal('W/"2"');
      expect((await r.json())._version).to.equal(2);
      r = await t.request(`/rest/${db}/classifiers/${c.id}`, { method: 'PUT', json: { _type: 'Classifier', label: 'Tagged', title: 'two' } });
      expect(r.headers.get('etag')).to.equal('W/"3"');
      r = await t.request(`/rest/${db}/classifiers/${c.id}`);
      expect(r.headers.get('etag')).to.equal('W/"3"');
    });

    it('keeps _version when a write changes nothing', async () => {
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Unchanged', title: 'same' });
      const again = await call('PATCH', `classifiers/${c.id}`, 200, { title: 'same' });
      expect(again._version).to.equal(1);
    });

    it('answers 412 to PUT, PATCH and DELETE with a stale If-Match, and changes nothing', async () => {
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Guarded' });
      await call('PATCH', `classifiers/${c.id}`, 200, { title: 'changed' }, { 'If-Match': 'W/"1"' });
      const stale = { 'If-Match': 'W/"1"' };
      const body = await call('PUT', `classifiers/${c.id}`, 412, { _type: 'Classifier', label: 'Guarded' }, stale);
      expect(body).to.include({ statusCode: 412, method: 'PUT' });
      await call('PATCH', `classifiers/${c.id}`, 412, { title: 'lost update' }, stale);
      await call('DELETE', `classifiers/${c.id}`, 412, undefined, stale);
      expect(await call('GET', `classifiers/${c.id}`, 200)).to.include({ _version: 2, title: 'changed' });
      await call('PATCH', `classifiers/${c.id}`, 200, { title: 'fresh' }, { 'If-Match': '"2"' });
      await call('DELETE', `classifiers/${c.id}`, 204, undefined, { 'If-Match': 'W/"3"' });
    });

    it('continues the version count of a deleted object created again under its technical key', async () => {
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Phoenix' });
      await call('PATCH', `classifiers/${c.id}`, 200, { title: 'changed' });
      await call('DELETE', `classifiers/${c.id}`, 204);
      const again = await call('PUT', `schemes/Objects/classifiers/${c.id}`, 201, { _type: 'Classifier', label: 'Phoenix' });
      expect(again).to.include({ id: c.id, _version: 4 });
    });

    it('applies concurrent changes of an object one after another: each is 200 and raises the version by one', async () => {
      const c = await post('schemes/Objects/classifiers', { _type: 'Classifier', label: 'Contested' });
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        t.request(`/rest/${db}/classifiers/${c.id}`, { method: 'PATCH', json: { title: `writer ${i}` } })));
      const bodies = await Promise.all(answers.map((r) => r.json()));
      expect(answers.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
      expect(bodies.map((b) => b._version).sort((a, b) => a - b)).to.deep.equal([2, 3, 4, 5, 6, 7, 8, 9]);
      expect((await call('GET', `classifiers/${c.id}`, 200))._version).to.equal(9);
    });

    it('creates only one of concurrent objects with the same label; the others get 409 on label', async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, () =>
        t.request(`/rest/${db}/schemes/Objects/classifiers`, { method: 'POST', json: { _type: 'Classifier', label: 'Raced' } })));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses, statuses.join()).to.deep.equal([201, 409, 409, 409, 409, 409, 409, 409]);
      for (const r of answers.filter((x) => x.status === 409)) expect((await r.json()).violations.map((v: Json) => v.path)).to.deep.equal(['label']);
    });

    it('answers 412 to If-Match on an object that does not exist', async () => {
      await call('PUT', 'schemes/Objects/classifiers/Ghost', 412, { _type: 'Classifier' }, { 'If-Match': 'W/"1"' });
      await call('GET', 'schemes/Objects/classifiers/Ghost', 404);
    });
  });
});
