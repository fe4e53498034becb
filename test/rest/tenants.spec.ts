import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

type Json = Record<string, any>;

async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

describe('REST interface: tenants', () => {
  let t: TestService;
  let db: string;
  const second = { 'service-tenant': 'Second' };
  const inSecond: Record<string, Json> = {};
  const inDefault: Record<string, Json> = {};
  const call = async (method: string, path: string, status: number, json?: unknown, headers: Record<string, string> = {}) =>
    expectStatus(await t.request(`/rest/${db}/${path}`, { method, json, headers }), status);

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await call('POST', 'tenants', 201, { _type: 'Tenant', label: 'Second' });
    inSecond.scheme = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Shared Name' }, second);
    inSecond.classifier = await call('POST', 'schemes/Shared%20Name/classifiers', 201, { _type: 'Classifier', label: 'Secret' }, second);
    inSecond.org = await call('POST', 'organizations', 201, { _type: 'Organization', label: 'Hidden Org' }, second);
    inSecond.person = await call('POST', 'organizations/Hidden%20Org/persons', 201, { _type: 'Person', givenName: 'Hidden' }, second);
    inDefault.scheme = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Shared Name' });
    inDefault.org = await call('POST', 'organizations', 201, { _type: 'Organization', label: 'Visible Org' });
  });
  after(() => t.close());

  it('keeps the objects of another tenant in that tenant', async () => {
    expect(inSecond.scheme.tenant).not.to.equal(inDefault.scheme.tenant);
    expect((await call('GET', `schemes/${inSecond.scheme.id}`, 200, undefined, second)).label).to.equal('Shared Name');
  });

  it('answers 404 to another tenant\'s objects by technical key, through any type', async () => {
    for (const [plural, key] of [['schemes', 'scheme'], ['assets', 'scheme'], ['classifiers', 'classifier'], ['assets', 'classifier'], ['persons', 'person'], ['organizations', 'org']]) {
      const body = await call('GET', `${plural}/${inSecond[key].id}`, 404);
      expect(body.statusCode).to.equal(404);
    }
  });

  it('answers 404 to another tenant\'s objects by business key, even when a label exists in both', async () => {
    await call('GET', 'organizations/Hidden%20Org', 404);
    await call('GET', 'schemes/Shared%20Name/classifiers/Secret', 404);
    expect((await call('GET', 'schemes/Shared%20Name', 200)).id).to.equal(inDefault.scheme.id);
  });

  it('leaves another tenant\'s objects out of every list', async () => {
    const ids = (list: Json, name: string) => list._embedded[name].map((o: Json) => o.id);
    expect(ids(await call('GET', 'schemes', 200), 'schemes')).to.deep.equal([inDefault.scheme.id]);
    expect(ids(await call('GET', 'organizations', 200), 'organizations')).to.deep.equal([inDefault.org.id]);
    expect((await call('GET', 'persons', 200)).total).to.equal(0);
    expect((await call('GET', 'classifiers', 200)).total).to.equal(0);
    expect(ids(await call('GET', 'assets?limit=100', 200), 'assets')).to.have.members([inDefault.scheme.id, inDefault.org.id]);
    expect((await call('GET', 'persons', 200, undefined, second)).total).to.equal(1);
  });

  it('does not let writes reach another tenant\'s objects', async () => {
    // A classifier may be created by PUT/PATCH on its technical key (it names its parent, decisions §7.1): a PATCH of another
    // tenant's is a create here, refused without a parent and a label; that classifier stays as it was (below).
    const refused = await call('PATCH', `classifiers/${inSecond.classifier.id}`, 400, { title: 'hijacked' });
    expect(refused.violations.map((v: Json) => v.path)).to.deep.equal(['inCollection', 'label']);
    const named = await call('PUT', `classifiers/${inSecond.classifier.id}`, 409, { _type: 'Classifier', label: 'Hijacked', inScheme: inDefault.scheme.id });
    expect(named.violations.map((v: Json) => v.path)).to.deep.equal(['id']);
    // Nor can an object be moved under another tenant's (decisions §7.1): the parent reference names nothing here.
    const own = await call('POST', 'schemes/Shared%20Name/classifiers', 201, { _type: 'Classifier', label: 'Own' });
    const moved = await call('PATCH', `classifiers/${own.id}`, 400, { inScheme: inSecond.scheme.id });
    expect(moved.violations.map((v: Json) => v.path)).to.deep.equal(['inScheme']);
    expect((await call('GET', 'schemes/Shared%20Name/classifiers', 200, undefined, second)).total).to.equal(1);
    await call('DELETE', `classifiers/${own.id}`, 204);
    await call('DELETE', `schemes/${inSecond.scheme.id}`, 404);
    await call('PUT', `persons/${inSecond.person.id}`, 409, { _type: 'Person', givenName: 'Hijacked', agentOf: inDefault.org.id });
    await call('POST', `organizations/${inDefault.org.id}/persons`, 400, { _type: 'Person', givenName: 'X', agentOf: inSecond.org.id });
    const body = await call('POST', 'schemes/Shared%20Name/attributedTo', 400, { _type: 'Attribution', attributedTo: inSecond.person.id });
    expect(body.violations.map((v: Json) => v.path)).to.deep.equal(['attributedTo']);
    // Replacing the default tenant's list leaves the other tenant's list as it was.
    await call('PUT', 'schemes', 200, [{ _type: 'Scheme', label: 'Shared Name' }]);
    await call('DELETE', 'persons', 204);
    expect(await call('GET', `classifiers/${inSecond.classifier.id}`, 200, undefined, second)).to.include({ _version: 1 });
    expect((await call('GET', 'persons', 200, undefined, second)).total).to.equal(1);
  });

  it('does not show another tenant\'s objects as of an earlier time', async () => {
    const at = Date.now();
    await call('GET', `schemes/${inSecond.scheme.id}?version=${at}`, 404);
    expect((await call('GET', `classifiers?version=${at}`, 200)).total).to.equal(0);
  });
});
