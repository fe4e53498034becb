/**
 * The views a statement may read (`GET /api/<db>/queries/views`), for the
 * query console's completion and list: every generated view with its
 * columns in order; administrators only.
 */
import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryFixture, rows, type QueryFixture } from './fixtures.ts';

describe('Query interface: the list of views', function () {
  this.timeout(120_000);
  let t: TestService;
  let f: QueryFixture;

  before(async () => {
    t = await startService();
    f = await queryFixture(t);
  });
  after(() => t?.close());

  it('lists the views by name with their columns in order, as a statement reads them', async () => {
    const r = await t.request(`/api/${f.db}/queries/views`, { auth: f.admin });
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).to.equal(200);
    const names = body.views.map((v: { name: string }) => v.name);
    expect(names).to.include.members(['scheme_view', 'attribute_view', 'customproperties_view']);
    expect(names).to.deep.equal([...names].sort());
    const scheme = body.views.find((v: { name: string }) => v.name === 'scheme_view');
    const columns = scheme.columns.map((c: { name: string }) => c.name);
    expect(columns).to.include('label');
    for (const c of scheme.columns) expect(c.type).to.be.a('string').and.not.equal('');
    // The same columns in the same order as `select *` answers them.
    const [row] = await rows(t, f.db, 'select * from scheme_view limit 1', { auth: f.admin });
    expect(columns).to.deep.equal(Object.keys(row));
  });

  it('refuses editors, readers and anonymous callers', async () => {
    for (const auth of [f.editor, f.reader]) expect((await t.request(`/api/${f.db}/queries/views`, { auth })).status).to.equal(403);
    expect((await t.request(`/api/${f.db}/queries/views`, { auth: null })).status).to.equal(401);
  });
});
