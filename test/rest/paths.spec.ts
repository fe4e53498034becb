import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

type Json = Record<string, any>;

/** Reads the body and checks the status, showing the body when the status is not the expected one. */
async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

describe('REST interface: paths', () => {
  let t: TestService;
  let db: string;
  const created: Record<string, Json> = {};
  const post = async (path: string, json: Json) => expectStatus(await t.request(`/rest/${db}/${path}`, { method: 'POST', json }), 201);
  const get = async (path: string, status = 200) => expectStatus(await t.request(`/rest/${db}/${path}`), status);

  /** scheme › collection › collection › classifier › attribute, with labels that need encoding. */
  const deepPath = 'schemes/Sales%20Model/collections/Kern%20Daten/collections/Gr%C3%B6%C3%9Fen%20%26%20Ma%C3%9Fe'
    + '/classifiers/Kunde%2FPartner/attributes/Name%20100%25';

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    created.scheme = await post('schemes', { _type: 'Scheme', label: 'Sales Model' });
    created.core = await post('schemes/Sales%20Model/collections', { _type: 'Collection', label: 'Kern Daten' });
    created.sizes = await post('schemes/Sales%20Model/collections/Kern%20Daten/collections', { _type: 'Collection', label: 'Größen & Maße' });
    created.customer = await post(`collections/${created.sizes.id}/classifiers`, { _type: 'Classifier', label: 'Kunde/Partner' });
    created.name = await post(`classifiers/${created.customer.id}/attributes`, { _type: 'BusinessAttribute', label: 'Name 100%' });
    created.fullName = await post(`classifiers/${created.customer.id}/attributes`, { _type: 'BusinessAttribute', label: 'Full Name' });
    created.load = await post('schemes/Sales%20Model/processings', { _type: 'Processing', label: 'Nightly Load' });
    created.acme = await post('organizations', { _type: 'Organization', label: 'ACME' });
    created.beta = await post('organizations', { _type: 'Organization', label: 'Beta GmbH' });
    created.erika = await post('organizations/ACME/persons', { _type: 'Person', givenName: 'Erika', familyName: 'Mustermann' });
    created.max = await post('persons', { _type: 'Person', givenName: 'Max', familyName: 'Müller', agentOf: created.beta.id });
  });
  after(() => t.close());

  describe('technical-key paths', () => {
    it('reaches a processing through its own type and every supertype', async () => {
      for (const plural of ['processings', 'activities', 'assets']) {
        const o = await get(`${plural}/${created.load.id}`);
        expect(o, plural).to.include({ _type: 'Processing', id: created.load.id, label: 'Nightly Load' });
        expect(o._links.self.href).to.equal(`${t.url}/rest/${db}/processings/${created.load.id}`);
      }
    });

    it('reaches any metadata object through assets, and no object through an unrelated type', async () => {
      for (const key of ['scheme', 'core', 'customer', 'name', 'erika', 'acme']) {
        expect((await get(`assets/${created[key].id}`)).id).to.equal(created[key].id);
      }
      await get(`classifiers/${created.load.id}`, 404);
      await get(`activities/${created.scheme.id}`, 404);
    });

    it('accepts a technical key in upper case and in the middle of a business-key path', async () => {
      expect((await get(`processings/${created.load.id.toUpperCase()}`)).id).to.equal(created.load.id);
      const o = await get(`schemes/${created.scheme.id}/collections/Kern%20Daten/collections/${created.sizes.id}/classifiers/Kunde%2FPartner`);
      expect(o.id).to.equal(created.customer.id);
    });

    it('does not find a technical key under a parent it does not belong to', async () => {
      await get(`schemes/Sales%20Model/classifiers/${created.customer.id}`, 404);
    });
  });

  describe('business-key paths', () => {
    it('follows five levels of lists with blanks, umlauts, & and % in the labels', async () => {
      const o = await get(deepPath);
      expect(o).to.include({ id: created.name.id, label: 'Name 100%', hasDomain: created.customer.id, modelId: created.scheme.id });
    });

    it('reads a label containing a slash sent as %2F, in upper and lower case', async () => {
      expect((await get('schemes/Sales%20Model/collections/Kern%20Daten/collections/Gr%C3%B6%C3%9Fen%20%26%20Ma%C3%9Fe/classifiers/Kunde%2fPartner')).id)
        .to.equal(created.customer.id);
    });

    it('keeps a plus sign a plus sign', async () => {
      await post('schemes', { _type: 'Scheme', label: 'C++ Types' });
      expect((await get('schemes/C++%20Types')).label).to.equal('C++ Types');
    });

    it('answers 404 for a label that does not exist at some depth, naming it', async () => {
      const body = await get('schemes/Sales%20Model/collections/Kern%20Daten/collections/Nope/classifiers/Kunde%2FPartner', 404);
      expect(body.message).to.equal('The Collection Nope was not found.');
    });

    it('answers 404 for a list name the object type does not have', async () => {
      await get('schemes/Sales%20Model/attributes', 404);
      await get('schemes/Sales%20Model/nothing/x', 404);
      await get('nothing', 404);
    });
  });

  describe('lists', () => {
    it('lists all persons of all organizations at the top level', async () => {
      const list = await get('persons');
      expect(list.total).to.equal(2);
      expect(list._embedded.persons.map((p: Json) => p.label).sort()).to.deep.equal(['Erika Mustermann', 'Max Müller']);
      expect((await get('organizations/Beta%20GmbH/persons/Max%20M%C3%BCller')).id).to.equal(created.max.id);
      expect((await get('organizations/ACME/persons')).total).to.equal(1);
    });

    it('holds an attribution of a person in the attributedTo list of a scheme', async () => {
      const attribution = await post('schemes/Sales%20Model/attributedTo', { _type: 'Attribution', attributedTo: created.erika.id, role: 'Owner' });
      expect(attribution).to.include({ attributionFor: created.scheme.id, attributedTo: created.erika.id, role: 'Owner' });
      const list = await get('schemes/Sales%20Model/attributedTo');
      expect(list.total).to.equal(1);
      const [item] = list._embedded.attributedTo;
      expect(item).to.include({ id: attribution.id, attributionFor: created.scheme.id, attributedTo: created.erika.id });
      expect(item._links.self.href).to.equal(`${t.url}/rest/${db}/attributions/${attribution.id}`);
      expect((await get(`schemes/Sales%20Model/attributedTo/${attribution.id}`)).id).to.equal(attribution.id);
      expect((await get(`processings/${created.load.id}/attributedTo`)).total).to.equal(0);
    });

    it('lists a derivation in derivedTo of its source and in the inverse list derivedFrom of its target', async () => {
      const derivation = await post(`attributes/${created.name.id}/derivedTo`, { _type: 'Derivation', derivedTo: created.fullName.id });
      expect(derivation).to.include({ derivedFrom: created.name.id, derivedTo: created.fullName.id });
      const to = await get(`${deepPath}/derivedTo`);
      expect(to.total).to.equal(1);
      expect(to._embedded.derivedTo[0].id).to.equal(derivation.id);
      const from = await get(`attributes/${created.fullName.id}/derivedFrom`);
      expect(from.total).to.equal(1);
      expect(from._embedded.derivedFrom[0]).to.include({ id: derivation.id, derivedFrom: created.name.id });
      expect((await get(`attributes/${created.name.id}/derivedFrom`)).total).to.equal(0);
      expect((await get(`attributes/${created.fullName.id}/derivedFrom/${derivation.id}`)).id).to.equal(derivation.id);
    });

    it('refuses writes to the read-only inverse list', async () => {
      const r = await t.request(`/rest/${db}/attributes/${created.fullName.id}/derivedFrom`, { method: 'POST', json: { _type: 'Derivation', derivedTo: created.name.id } });
      expect(r.status).to.equal(405);
    });
  });
});
