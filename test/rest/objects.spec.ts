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
    expect(attribute._links.derivedTo.href).to.equal(`${t.url}/rest/${db}/attributes/${created.id}/derivedTo`);
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
