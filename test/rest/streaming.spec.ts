import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

describe('REST interface: whole lists are streamed', () => {
  let t: TestService;
  let db: string;
  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'S' } });
    await t.request(`/rest/${db}/schemes/S/enumerations`, { method: 'POST', json: { _type: 'Enumeration', label: 'Big' } });
    const literals = Array.from({ length: 2500 }, (_, i) => ({ _type: 'Literal', label: `L${String(i).padStart(5, '0')}`, order: i }));
    const r = await t.request(`/rest/${db}/schemes/S/enumerations/Big/literals`, { method: 'PUT', json: literals });
    expect(r.status).to.equal(200);
  });
  after(() => t.close());

  it('sends a list longer than one chunk in chunks, every object once, with its total', async () => {
    const r = await t.request(`/rest/${db}/schemes/S/enumerations/Big/literals`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('transfer-encoding')).to.equal('chunked');
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    const list = await r.json();
    expect(list.total).to.equal(2500);
    expect(list._links.self.href).to.equal(`${t.url}/rest/${db}/schemes/S/enumerations/Big/literals`);
    const labels = list._embedded.literals.map((l: { label: string }) => l.label);
    expect(labels).to.have.length(2500);
    expect(new Set(labels).size).to.equal(2500);
    expect(labels).to.deep.equal([...labels].sort());
    expect(list._embedded.literals[0]._links.self.href).to.match(/\/rest\/.+\/literals\/[0-9a-f-]{36}$/);
  });

  it('streams an empty list as a valid list', async () => {
    const r = await t.request(`/rest/${db}/schemes/S/classifiers`);
    expect(await r.json()).to.deep.equal({ _links: { self: { href: `${t.url}/rest/${db}/schemes/S/classifiers` } }, _embedded: { classifiers: [] }, total: 0 });
  });
});
