/**
 * Links of objects (decisions §7.3): the parent also under the name of the
 * relation that holds the object; a link to each of the object's lists only
 * while the list holds something, as integrations of the original product
 * test emptiness by the links; as of a time, as they were then; a user's
 * `accessKeys` and a tenant's `accessRules` for callers who may read them.
 */
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createUser, secret } from '../auth/fixtures.ts';

type Json = Record<string, any>;

describe('REST interface: links of objects', () => {
  let t: TestService;
  let db: string;
  let base: string;
  const call = async (method: string, path: string, status: number, json?: unknown, auth?: { loginId: string; password: string }): Promise<Json> => {
    const r = await t.request(`/rest/${db}/${path}`, { method, json, ...(auth ? { auth } : {}) });
    const text = await r.text();
    expect(r.status, `${method} ${path}: ${text}`).to.equal(status);
    return text ? JSON.parse(text) : {};
  };
  const post = (path: string, json: Json) => call('POST', path, 201, json);
  const get = (path: string) => call('GET', path, 200);
  const names = (o: Json) => Object.keys(o._links).sort();
  /** Every link leads somewhere that answers 200. */
  const followAll = async (o: Json, auth?: { loginId: string; password: string }) => {
    for (const [name, link] of Object.entries(o._links) as [string, { href: string }][]) {
      const r = await t.request(link.href.slice(t.url.length), auth ? { auth } : {});
      expect(r.status, `${name}: ${link.href}`).to.equal(200);
    }
  };

  let scheme: Json;
  let top: Json;
  let inner: Json;
  let cls: Json;
  let en: Json;
  let literal: Json;
  let a1: Json;
  let a2: Json;
  let org: Json;
  let person: Json;
  let group: Json;

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    base = `${t.url}/rest/${db}`;
    scheme = await post('schemes', { _type: 'Scheme', label: 'Links' });
    top = await post('schemes/Links/collections', { _type: 'Collection', label: 'Top' });
    inner = await post(`collections/${top.id}/collections`, { _type: 'Collection', label: 'Inner' });
    cls = await post(`collections/${inner.id}/classifiers`, { _type: 'Classifier', label: 'Kunde' });
    en = await post('schemes/Links/enumerations', { _type: 'Enumeration', label: 'Farben' });
    literal = await post(`enumerations/${en.id}/literals`, { _type: 'Literal', label: 'Rot' });
    a1 = await post(`classifiers/${cls.id}/attributes`, { _type: 'BusinessAttribute', label: 'Name' });
    a2 = await post(`classifiers/${cls.id}/attributes`, { _type: 'BusinessAttribute', label: 'Kurzname' });
    org = await post('organizations', { _type: 'Organization', label: 'Amt' });
    person = await post(`organizations/${org.id}/persons`, { _type: 'Person', givenName: 'Erika', familyName: 'Muster' });
    group = await post(`organizations/${org.id}/groups`, { _type: 'Group', label: 'Redaktion' });
  });
  after(() => t.close());

  describe('the parent, named after the relation that holds the object', () => {
    it('is inScheme, inCollection, literalOf or inOrganization after the relation that holds it, besides parent', async () => {
      const cases: [Json, string, string][] = [
        [top, 'inScheme', `schemes/${scheme.id}`],
        [inner, 'inCollection', `collections/${top.id}`],
        [cls, 'inCollection', `collections/${inner.id}`],
        [en, 'inScheme', `schemes/${scheme.id}`],
        [literal, 'literalOf', `enumerations/${en.id}`],
        [group, 'inOrganization', `organizations/${org.id}`],
      ];
      for (const [o, relation, target] of cases) {
        const read = await get(`assets/${o.id}`);
        expect(read._links[relation], `${o._type} ${o.label}`).to.deep.equal({ href: `${base}/${target}` });
        expect(read._links.parent).to.deep.equal({ href: `${base}/assets/${read.parentId}` });
        await followAll(read);
      }
    });

    it('is the owner reference where the metamodel gives one (hasDomain, agentOf, attributionFor)', async () => {
      const attribute = await get(`attributes/${a1.id}`);
      expect(names(attribute)).to.deep.equal(['hasDomain', 'parent', 'self']);
      expect(attribute._links.hasDomain.href).to.equal(`${base}/classifiers/${cls.id}`);
      const erika = await get(`persons/${person.id}`);
      expect(names(erika)).to.deep.equal(['agentOf', 'parent', 'self']);
      expect(erika._links.agentOf.href).to.equal(`${base}/organizations/${org.id}`);
      const attribution = await post(`classifiers/${cls.id}/attributedTo`, { _type: 'Attribution', attributedTo: person.id, role: 'Owner' });
      expect(names(attribution)).to.deep.equal(['attributedTo', 'attributionFor', 'parent', 'self']);
      await followAll(attribution);
      await call('DELETE', `attributions/${attribution.id}`, 204);
    });

    it('is absent, like parent, for objects at the top level', async () => {
      expect(names(await get(`schemes/${scheme.id}`))).to.not.include.members(['parent', 'inScheme']);
      expect(Object.keys((await get('organizations/Amt'))._links)).to.not.include('parent');
    });
  });

  describe('lists, linked only while they hold something', () => {
    it('links a child list once it has an object and no longer once it is empty again', async () => {
      const s = await post('schemes', { _type: 'Scheme', label: 'Empty' });
      expect(names(s)).to.deep.equal(['self']);
      expect(names(await get(`schemes/${s.id}`))).to.deep.equal(['self']);
      const c = await post('schemes/Empty/classifiers', { _type: 'Classifier', label: 'Only' });
      const read = await get(`schemes/${s.id}`);
      expect(names(read)).to.deep.equal(['classifiers', 'self']);
      expect(read._links.classifiers.href).to.equal(`${base}/schemes/${s.id}/classifiers`);
      await followAll(read);
      // By label and through a path too.
      expect(names(await get('schemes/Empty'))).to.deep.equal(['classifiers', 'self']);
      expect(names(await get('schemes/Empty/classifiers/Only'))).to.deep.equal(['inScheme', 'parent', 'self']);
      await call('DELETE', `classifiers/${c.id}`, 204);
      expect(names(await get(`schemes/${s.id}`))).to.deep.equal(['self']);
    });

    it('links each list that holds something, and only those, for objects with several lists', async () => {
      const read = await get(`collections/${top.id}`);
      expect(names(read)).to.deep.equal(['collections', 'inScheme', 'parent', 'self']);
      const deep = await get(`schemes/Links/collections/Top/collections/Inner`);
      expect(names(deep)).to.deep.equal(['classifiers', 'inCollection', 'parent', 'self']);
      expect(names(await get(`schemes/${scheme.id}`))).to.deep.equal(['collections', 'enumerations', 'self']);
      expect(names(await get(`classifiers/${cls.id}`))).to.deep.equal(['attributes', 'inCollection', 'parent', 'self']);
      expect(names(await get(`enumerations/${en.id}`))).to.deep.equal(['inScheme', 'literals', 'parent', 'self']);
      expect(names(await get(`organizations/${org.id}`))).to.deep.equal(['groups', 'persons', 'self']);
    });

    it('links relation lists: attributedTo, derivedTo and the inverse derivedFrom, while a relation names the object', async () => {
      const derivation = await post(`attributes/${a1.id}/derivedTo`, { _type: 'Derivation', derivedTo: a2.id });
      const from = await get(`attributes/${a1.id}`);
      const to = await get(`attributes/${a2.id}`);
      expect(names(from)).to.deep.equal(['derivedTo', 'hasDomain', 'parent', 'self']);
      expect(names(to)).to.deep.equal(['derivedFrom', 'hasDomain', 'parent', 'self']);
      expect(to._links.derivedFrom.href).to.equal(`${base}/attributes/${a2.id}/derivedFrom`);
      expect((await get(`attributes/${a2.id}/derivedFrom`)).total).to.equal(1);
      await followAll(from);
      await followAll(to);
      const attribution = await post(`attributes/${a2.id}/attributedTo`, { _type: 'Attribution', attributedTo: group.id });
      expect(names(await get(`attributes/${a2.id}`))).to.deep.equal(['attributedTo', 'derivedFrom', 'hasDomain', 'parent', 'self']);
      await call('DELETE', `attributions/${attribution.id}`, 204);
      await call('DELETE', `derivations/${derivation.id}`, 204);
      expect(names(await get(`attributes/${a1.id}`))).to.deep.equal(['hasDomain', 'parent', 'self']);
      expect(names(await get(`attributes/${a2.id}`))).to.deep.equal(['hasDomain', 'parent', 'self']);
    });

    it('does not count another tenant\'s relations', async () => {
      await post('tenants', { _type: 'Tenant', label: 'Fremd' });
      const other = { loginId: 'fremd-admin', password: secret('fremd-Passwort-123') };
      await createUser(t, db, { ...other, accessLevel: 'ADMINISTRATOR', tenant: 'Fremd' });
      const s = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Fremd' }, other);
      const c = await call('POST', `schemes/${s.id}/classifiers`, 201, { _type: 'Classifier', label: 'K' }, other);
      const x = await call('POST', `classifiers/${c.id}/attributes`, 201, { _type: 'BusinessAttribute', label: 'x' }, other);
      // A derivation in the other tenant naming an attribute of this one is refused or stays its own: this one links nothing.
      await t.request(`/rest/${db}/attributes/${x.id}/derivedTo`, { method: 'POST', auth: other, json: { _type: 'Derivation', derivedTo: a2.id } });
      expect(names(await get(`attributes/${a2.id}`))).to.deep.equal(['hasDomain', 'parent', 'self']);
    });

    it('renders the links of every item of a list page and of a streamed list by the same rule', async () => {
      const paged = await get(`schemes/${scheme.id}/collections?limit=10`);
      expect(paged._embedded.collections.map(names)).to.deep.equal([['collections', 'inScheme', 'parent', 'self']]);
      const streamed = await get('collections');
      const byLabel = Object.fromEntries(streamed._embedded.collections.map((c: Json) => [c.label, names(c)]));
      expect(byLabel.Top).to.deep.equal(['collections', 'inScheme', 'parent', 'self']);
      expect(byLabel.Inner).to.deep.equal(['classifiers', 'inCollection', 'parent', 'self']);
      const attributes = (await get(`classifiers/${cls.id}/attributes`))._embedded.attributes;
      expect(attributes.map(names)).to.deep.equal([['hasDomain', 'parent', 'self'], ['hasDomain', 'parent', 'self']]);
    });

    it('answers a write with the links as the write left the object', async () => {
      const s = await call('PUT', 'schemes/Written', 201, { _type: 'Scheme', label: 'Written' });
      expect(names(s)).to.deep.equal(['self']);
      await post('schemes/Written/processings', { _type: 'Processing', label: 'Job' });
      const again = await call('PATCH', `schemes/${s.id}`, 200, { description: 'now with a processing' });
      expect(names(again)).to.deep.equal(['processings', 'self']);
      const list = await call('PUT', 'schemes/Written/processings', 200, [{ _type: 'Processing', label: 'Job' }, { _type: 'Processing', label: 'Job 2' }]);
      expect(list._embedded.processings.map(names)).to.deep.equal([['inScheme', 'parent', 'self'], ['inScheme', 'parent', 'self']]);
    });
  });

  describe('as of a time', () => {
    it('gives the links as they were then: lists that held something then, the parent then', async () => {
      const s = await post('schemes', { _type: 'Scheme', label: 'Zeit' });
      const c1 = await post(`schemes/${s.id}/collections`, { _type: 'Collection', label: 'C1' });
      const c2 = await post(`schemes/${s.id}/collections`, { _type: 'Collection', label: 'C2' });
      const empty = (await get(`collections/${c1.id}`)).dateModified;
      await new Promise((r) => setTimeout(r, 5));
      const k = await post(`collections/${c1.id}/classifiers`, { _type: 'Classifier', label: 'K' });
      const held = k.dateModified;
      await new Promise((r) => setTimeout(r, 5));
      // Moved to C2 by a list write there (PUT replaces C1's list by nothing, so delete and re-create under C2).
      await call('DELETE', `classifiers/${k.id}`, 204);
      await post(`collections/${c2.id}/classifiers`, { _type: 'Classifier', label: 'K' });
      expect(names(await get(`collections/${c1.id}`))).to.deep.equal(['inScheme', 'parent', 'self']);
      expect(names(await get(`collections/${c1.id}?version=${held}`))).to.deep.equal(['classifiers', 'inScheme', 'parent', 'self']);
      expect(names(await get(`collections/${c1.id}?version=${empty}`))).to.deep.equal(['inScheme', 'parent', 'self']);
      const list = await get(`schemes/${s.id}/collections?version=${held}`);
      expect(list._embedded.collections.map((c: Json) => [c.label, names(c)])).to.deep.equal([
        ['C1', ['classifiers', 'inScheme', 'parent', 'self']],
        ['C2', ['inScheme', 'parent', 'self']],
      ]);
      // The classifier as of then, though deleted now, names its parent by its relation.
      const old = await get(`classifiers/${k.id}?version=${held}`);
      expect(old._links.inCollection.href).to.equal(`${base}/collections/${c1.id}`);
    });

    it('gives each version in an object\'s history the links it had when it was written', async () => {
      const s = await post('schemes', { _type: 'Scheme', label: 'Geschichte' });
      await new Promise((r) => setTimeout(r, 5));
      await post(`schemes/${s.id}/enumerations`, { _type: 'Enumeration', label: 'E' });
      await call('PATCH', `schemes/${s.id}`, 200, { description: 'zwei' });
      const history = (await get(`schemes/${s.id}/history`))._embedded.history;
      expect(history.map((h: Json) => [h.version, names(h.object)])).to.deep.equal([[2, ['enumerations', 'self']], [1, ['self']]]);
    });
  });

  describe('lists the access plugin serves', () => {
    const admin = { loginId: 'links-admin', password: secret('links-admin-Passwort-1') };
    const editor = { loginId: 'links-editor', password: secret('links-editor-Passwort-1') };
    let adminUser: Json;
    let defaultTenant: string;

    before(async () => {
      adminUser = await createUser(t, db, { ...admin, accessLevel: 'ADMINISTRATOR' });
      await createUser(t, db, { ...editor, accessLevel: 'EDITOR' });
      defaultTenant = (await t.service.databases.get(db))!.defaultTenant;
    });

    it('links a user\'s accessKeys for a tenant administrator and a system administrator, and the link answers 200', async () => {
      for (const auth of [admin, undefined]) {
        const user = await call('GET', `users/${adminUser.id}`, 200, undefined, auth);
        expect(user._links.accessKeys, JSON.stringify(auth?.loginId)).to.deep.equal({ href: `${base}/users/${adminUser.id}/accessKeys` });
        await followAll(user, auth);
      }
      const list = await get('users');
      for (const u of list._embedded.users) expect(u._links.accessKeys.href).to.equal(`${base}/users/${u.id}/accessKeys`);
    });

    it('links a tenant\'s accessRules for its administrators and system administrators, not for an editor, whom the list refuses', async () => {
      for (const auth of [admin, undefined]) {
        const tenant = await call('GET', `tenants/${defaultTenant}`, 200, undefined, auth);
        expect(tenant._links.accessRules).to.deep.equal({ href: `${base}/tenants/${defaultTenant}/accessRules` });
        await followAll(tenant, auth);
      }
      const seen = await call('GET', `tenants/${defaultTenant}`, 200, undefined, editor);
      expect(names(seen)).to.deep.equal(['self']);
      expect((await t.request(`/rest/${db}/tenants/${defaultTenant}/accessRules`, { auth: editor })).status).to.equal(403);
      // Another tenant's administrator never sees this tenant, nor its rules.
      const other = { loginId: 'fremd-admin', password: 'fremd-Passwort-123' };
      expect((await t.request(`/rest/${db}/tenants/${defaultTenant}`, { auth: other })).status).to.equal(404);
    });
  });
});
