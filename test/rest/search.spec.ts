import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createTenant, createUser, inTenant, secret } from '../auth/fixtures.ts';
import { migrateDatabase, schemaOf } from '../../runtime/storage/migrations.ts';

type Json = Record<string, any>;

async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

const labelsOf = (page: Json): string[] => page._embedded.results.map((h: Json) => h.label);

describe('REST interface: search', () => {
  let t: TestService;
  let db: string;
  const reader = { loginId: 'search-reader', password: secret('search-reader-1') };
  const editor = { loginId: 'search-editor', password: secret('search-editor-1') };
  const stranger = { loginId: 'search-stranger', password: secret('search-stranger-1') };
  const post = async (path: string, json: Json, headers: Record<string, string> = {}) =>
    expectStatus(await t.request(`/rest/${db}/${path}`, { method: 'POST', json, headers }), 201);
  const search = async (query: string, status = 200, auth?: { loginId: string; password: string } | null) =>
    expectStatus(await t.request(`/rest/${db}/search?${query}`, auth === undefined ? {} : { auth }), status);

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    const scheme = await post('schemes', { _type: 'Scheme', label: 'Orders' });
    const customer = await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Customer', description: 'A person or company that buys from us.' });
    await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Customs Office' });
    await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Order Line', title: 'Line of a customer order' });
    await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Invoice', description: 'Sent to the CUSTOMER at the end of each month, with the taxes.' });
    await post(`classifiers/${customer.id}/attributes`, { _type: 'BusinessAttribute', label: 'customer number' });
    await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: "50% off_sale/o'clock \\ \"x\"" });
    await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: '5000 offers' });
    await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Größe Café' });
    await createTenant(t, db, 'Other');
    await post('schemes', { _type: 'Scheme', label: 'Secret Customer Data' }, inTenant('Other'));
    await createUser(t, db, { loginId: reader.loginId, password: reader.password, accessLevel: 'READ_ONLY' });
    await createUser(t, db, { loginId: editor.loginId, password: editor.password, accessLevel: 'EDITOR' });
    await createUser(t, db, { loginId: stranger.loginId, password: stranger.password, accessLevel: 'ADMINISTRATOR', tenant: 'Other' });
  });
  after(() => t.close());

  it('finds by label prefix, exact label first, with type, business-key path, ancestors and links', async () => {
    const page = await search('q=customer');
    const labels = labelsOf(page);
    expect(labels[0]).to.equal('Customer');
    expect(labels).to.include.members(['customer number', 'Order Line', 'Invoice']);
    expect(labels).not.to.include('Secret Customer Data');
    const [hit] = page._embedded.results;
    expect(hit).to.include({ _type: 'Classifier', label: 'Customer', path: '/schemes/Orders/classifiers/Customer' });
    expect(hit.ancestors).to.deep.equal([{ _type: 'Scheme', id: hit.ancestors[0].id, label: 'Orders' }]);
    expect(hit._links.self.href).to.equal(`${t.url}/rest/${db}/classifiers/${hit.id}`);
    expect(hit.href).to.equal(`${t.url}/web/${db}/classifiers/${hit.id}`);
    const attribute = page._embedded.results.find((h: Json) => h.label === 'customer number');
    expect(attribute.path).to.equal('/schemes/Orders/classifiers/Customer/attributes/customer%20number');
    // the path is one the REST interface resolves
    expect((await expectStatus(await t.request(`/rest/${db}${attribute.path}`), 200)).id).to.equal(attribute.id);
    // a label prefix ranks before a match inside the title or the description
    expect(labels.indexOf('customer number')).to.be.lessThan(labels.indexOf('Order Line'));
    expect(labels.indexOf('customer number')).to.be.lessThan(labels.indexOf('Invoice'));
  });

  it('finds by the first three characters, case and accents aside', async () => {
    expect(labelsOf(await search('q=CUS'))).to.include.members(['Customer', 'Customs Office', 'customer number']);
    expect(labelsOf(await search('q=Gro'))).to.include('Größe Café');
    expect(labelsOf(await search(`q=${encodeURIComponent('cafe')}`))).to.include('Größe Café');
  });

  it('finds despite a typo: Custmer finds Customer', async () => {
    const labels = labelsOf(await search('q=Custmer'));
    expect(labels).to.include('Customer');
    expect(labels).not.to.include('Secret Customer Data');
  });

  it('gives an excerpt of the description where it matched', async () => {
    const invoice = (await search('q=taxes'))._embedded.results.find((h: Json) => h.label === 'Invoice');
    expect(invoice.excerpt).to.contain('with the taxes');
    const customer = (await search('q=Customer'))._embedded.results.find((h: Json) => h.label === 'Customer');
    expect(customer).not.to.have.property('excerpt');
  });

  it('filters by type; an abstract type includes its subtypes', async () => {
    expect(labelsOf(await search('q=customer&types=BusinessAttribute'))).to.deep.equal(['customer number']);
    expect(labelsOf(await search('q=customer&types=Scheme,BusinessAttribute'))).to.deep.equal(['customer number']);
    expect(labelsOf(await search('q=orders&types=Scheme'))).to.deep.equal(['Orders']);
    const abstract = labelsOf(await search('q=customer&types=Asset'));
    expect(abstract).to.include.members(['Customer', 'customer number', 'Order Line', 'Invoice']);
    expect(labelsOf(await search('q=orders&types=Activity'))).to.deep.equal([]);
  });

  it('gives a page that the best tiers fill in the order of the full ranking', async () => {
    // Labels that start with "pre" (some with titles, letter case mixed) and one that only contains it:
    // pages of one and two are read from the prefix tiers alone, the whole list ranks everything.
    const scheme = await post('schemes', { _type: 'Scheme', label: 'Prefixes' });
    for (const [label, title] of [['prelude', null], ['Pre', 'title after'], ['PREAMBLE', null], ['pre', null], ['Prepaid', 'x'], ['prefix b', null], ['prefix a', null]] as const) {
      await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label, ...(title ? { title } : {}) });
    }
    await post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'a compressed file' });
    const all = labelsOf(await search('q=pre&limit=100&types=Classifier'));
    expect(all.slice(0, 2).sort()).to.deep.equal(['Pre', 'pre']);
    expect(all.at(-1)).to.equal('a compressed file');
    expect(all.slice(2, -1)).to.deep.equal(['PREAMBLE', 'prefix a', 'prefix b', 'prelude', 'Prepaid']);
    for (const limit of [1, 2, 3, 7]) {
      const seen: string[] = [];
      let next: string | undefined = `/rest/${db}/search?q=pre&types=Classifier&limit=${limit}`;
      while (next) {
        const page = await expectStatus(await t.request(next), 200);
        seen.push(...labelsOf(page));
        next = page._links.next?.href.slice(t.url.length);
      }
      expect(seen, `limit ${limit}`).to.deep.equal(all);
    }
  });

  it('pages with a cursor until every hit was seen once', async () => {
    const all = labelsOf(await search('q=cus&limit=100'));
    expect(all.length).to.be.greaterThan(2);
    const seen: string[] = [];
    let next: string | undefined = `/rest/${db}/search?q=cus&limit=2`;
    while (next) {
      const page = await expectStatus(await t.request(next), 200);
      expect(page._embedded.results.length).to.be.at.most(2);
      seen.push(...labelsOf(page));
      next = page._links.next?.href.slice(t.url.length);
    }
    expect(seen).to.deep.equal(all);
  });

  it('never finds another tenant\'s objects, and the other tenant never finds ours', async () => {
    expect(labelsOf(await search('q=Secret'))).to.deep.equal([]);
    const theirs = await search('q=customer', 200, stranger);
    expect(labelsOf(theirs)).to.deep.equal(['Secret Customer Data']);
    expect(labelsOf(await search('q=Orders', 200, stranger))).to.deep.equal([]);
    expect(labelsOf(await search('q=search-reader&types=User', 200, stranger))).not.to.include('search-reader');
  });

  it('lets READ_ONLY search, without users; users only from ADMINISTRATOR on', async () => {
    expect(labelsOf(await search('q=Customer', 200, reader))[0]).to.equal('Customer');
    expect(labelsOf(await search('q=search-', 200, reader))).to.deep.equal([]);
    expect(labelsOf(await search('q=search-', 200, editor))).to.deep.equal([]);
    await search('q=search-&types=User', 403, reader);
    expect(labelsOf(await search('q=search-&types=User'))).to.include.members(['search-reader', 'search-editor']);
    expect(labelsOf(await search('q=search-&types=User'))).not.to.include('search-stranger');
  });

  it('comes to a database made before it at the next start: its migration adds the index to existing objects', async () => {
    const knex = t.service.storage.knex;
    const schema = `"${schemaOf(db)}"`;
    // As before search: the migration's index and functions are absent, and the ledger does not count it.
    await knex.raw(`alter table ${schema}.objects drop column search_label, drop column search_description; drop function ${schema}.search_fold(text)`);
    await knex.raw(`delete from ${schema}.schema_migrations where version = 2`);
    await migrateDatabase(knex, db);
    const indexes = await knex.raw(`select indexname, indexdef from pg_indexes where schemaname = ? and indexname like 'objects_search%' order by indexname`, [schemaOf(db)]);
    expect(indexes.rows.map((r: Json) => r.indexname)).to.deep.equal(['objects_search_description', 'objects_search_label']);
    for (const r of indexes.rows) expect(r.indexdef).to.match(/USING gin .*gin_trgm_ops/);
    expect(labelsOf(await search('q=Custmer'))).to.include('Customer');
  });

  it('refuses callers without credentials (401)', async () => {
    await search('q=Customer', 401, null);
  });

  it('refuses bad parameters with 400 naming them', async () => {
    const empty = await search('q=%20%20', 400);
    expect(empty.violations).to.deep.equal([{ path: 'q', message: empty.violations[0].message }]);
    await search('', 400);
    await search(`q=${'x'.repeat(201)}`, 400);
    expect((await search(`q=${'x'.repeat(200)}`)).total).to.equal(undefined);
    await search('q=a&q=b', 400);
    const unknown = await search('q=Customer&types=Classifier,Nonsense', 400);
    expect(unknown.violations[0].message).to.contain('Nonsense');
    await search('q=Customer&types=__proto__', 400);
    await search('q=Customer&types=,', 400);
    for (const limit of ['0', '101', '-1', '1.5', 'ten']) await search(`q=Customer&limit=${limit}`, 400);
    for (const cursor of ['garbage', 'eyJhZnRlciI6LTF9', Buffer.from('{"after":"1"}').toString('base64url'), Buffer.from('[1]').toString('base64url')]) {
      await search(`q=Customer&cursor=${cursor}`, 400);
    }
    await search('q=Customer&other=1', 400);
    await expectStatus(await t.request(`/rest/${db}/search?q=x`, { method: 'DELETE' }), 405);
  });

  it('takes %, _, quotes, slashes and backslashes literally', async () => {
    // '5000 offers' may follow as a near miss, never as a match of the wildcard
    expect(labelsOf(await search(`q=${encodeURIComponent('50%')}`))[0]).to.equal("50% off_sale/o'clock \\ \"x\"");
    expect(labelsOf(await search(`q=${encodeURIComponent('%')}`))).to.deep.equal(["50% off_sale/o'clock \\ \"x\""]);
    expect(labelsOf(await search(`q=${encodeURIComponent("o'clock")}`))).to.deep.equal(["50% off_sale/o'clock \\ \"x\""]);
    expect(labelsOf(await search(`q=${encodeURIComponent('off_sale/o\'clock \\ "x"')}`))).to.include("50% off_sale/o'clock \\ \"x\"");
    expect(labelsOf(await search(`q=${encodeURIComponent('_')}`))).to.deep.equal(["50% off_sale/o'clock \\ \"x\""]);
    for (const q of ["'; drop table objects; --", '\\', '%', '"', '$$', '\u00e4\u0000']) {
      const r = await t.request(`/rest/${db}/search?q=${encodeURIComponent(q)}`);
      expect(r.status, q).to.be.oneOf([200, 400]);
    }
    const hit = (await search(`q=${encodeURIComponent('50%')}`))._embedded.results[0];
    expect((await expectStatus(await t.request(`/rest/${db}${hit.path}`), 200)).id).to.equal(hit.id);
    expect(labelsOf(await search('q=Customer'))[0]).to.equal('Customer');
  });
});
