/**
 * Issue 19's proof: a small client that behaves like the open-source
 * synchronisation client of a cantonal administration that was run against
 * the service (decisions §7). It speaks only HTTP, as that client does: it
 * finds objects by label through the REST interface, writes with PUT and
 * PATCH, retries nothing, sets the original product's workflow statuses,
 * names the original's query schema in its reports and reads `_type`,
 * `in_collection` and `stereotype` in them. Every step must succeed.
 */
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createUser, secret, type Credentials } from '../auth/fixtures.ts';
import { multipart } from '../plugins/profiles/fixtures.ts';

type Json = Record<string, any>;

/** The annotations the administration keeps: organisational units are collections of a stereotype with their own custom properties. */
const ANNOTATIONS = `# Annotationen der Verwaltung (Auszug)
Theme:
  primaryColor: "#004f9f"
Collection:
  label: Sammlung
  labelEn: Collection
  stereotypes:
    organizationalUnit:
      label: Organisationseinheit
      labelEn: Organisational unit
      icon: sitemap
      customProperties:
        kurzzeichen:
          label: Kurzzeichen
          labelEn: Short code
          baseType: ID
        kostenstelle:
          label: Kostenstelle
          baseType: INTEGER
Dataset:
  plural: Datensätze
  customProperties:
    ogdFreigabe:
      label: OGD-Freigabe
      baseType: BOOLEAN
`;

/** What the client knows of the service: where it is, who it is, and its report schema. */
class SyncClient {
  constructor(private t: TestService, private db: string, private auth: Credentials, private schema: string) {}

  private async call(method: string, path: string, json?: unknown): Promise<Json> {
    const r = await this.t.request(path, { method, json, auth: this.auth });
    const text = await r.text();
    expect(r.status, `${method} ${path} → ${r.status} ${text}`).to.be.within(200, 299);
    return text ? JSON.parse(text) : {};
  }

  rest(method: string, path: string, json?: unknown): Promise<Json> {
    return this.call(method, `/rest/${this.db}/${path}`, json);
  }

  /** The items of a list, by label: the client looks objects up this way before it writes. */
  async items(path: string): Promise<Map<string, Json>> {
    const list = await this.rest('GET', `${path}?limit=1000`);
    const name = Object.keys(list._embedded ?? {})[0];
    return new Map((name ? list._embedded[name] : []).map((o: Json) => [o.label, o]));
  }

  /** Creates or updates by label under a list: PUT of the business key, as the client does. */
  upsert(path: string, body: Json): Promise<Json> {
    return this.rest('PUT', `${path}/${encodeURIComponent(body.label)}`, body);
  }

  async uploadAnnotations(text: string): Promise<boolean> {
    const { body, contentType } = multipart([{ headers: ['Content-Disposition: form-data; name="file"; filename="annotationen.yaml"'], body: text }]);
    const r = await this.t.request(`/api/${this.db}/profiles/annotations/upload`, { method: 'PUT', body, headers: { 'content-type': contentType }, auth: this.auth });
    const answer = await r.text();
    expect(r.status, answer).to.equal(200);
    return JSON.parse(answer);
  }

  /** A check as an SQL report on the query interface, views named with the original product's schema. */
  async report(sql: string): Promise<Json[]> {
    const r = await this.t.request(`/api/${this.db}/queries/download?format=JSON`, { method: 'PUT', json: { sql: sql.replaceAll('$schema', this.schema) }, auth: this.auth });
    const text = await r.text();
    expect(r.status, `${sql}\n→ ${text}`).to.equal(200);
    return JSON.parse(text);
  }
}

describe('a synchronisation client of the original product (issue 19)', function () {
  this.timeout(180_000);
  let t: TestService;
  let client: SyncClient;
  const o: Record<string, Json> = {};

  before(async () => {
    t = await startService({ SERVICE_QUERY_SCHEMA: 'dataspot', SERVICE_DEFAULT_TENANT: 'Mandant' });
    const db = await createDatabase(t);
    const sync = { loginId: 'sync', password: secret('sync-Passwort-1') };
    await createUser(t, db, { ...sync, accessLevel: 'ADMINISTRATOR' });
    client = new SyncClient(t, db, sync, 'dataspot');
  });
  after(() => t?.close());

  it('uploads its annotations unchanged', async () => {
    expect(await client.uploadAnnotations(ANNOTATIONS)).to.equal(true);
  });

  it('creates a dataset with two distributions in a collection of a data catalog', async () => {
    o.catalog = await client.upsert('schemes', { _type: 'Scheme', label: 'Datenkatalog', modelType: 'DataCatalog' });
    o.statistik = await client.upsert('schemes/Datenkatalog/collections', { _type: 'Collection', label: 'Statistik' });
    o.dataset = await client.upsert('schemes/Datenkatalog/collections/Statistik/datasets', {
      _type: 'Dataset', label: 'Steuerpflichtige', accrualPeriodicity: 'jährlich', spatial: 'Kanton', customProperties: { ogdFreigabe: true }, tags: ['Steuern'],
    });
    for (const format of ['CSV', 'JSON']) {
      await client.upsert(`datasets/${o.dataset.id}/distributions`, { _type: 'Distribution', label: format, format, downloadURL: `https://daten.example/steuerpflichtige.${format.toLowerCase()}` });
    }
    expect([...(await client.items(`datasets/${o.dataset.id}/distributions`)).keys()].sort()).to.deep.equal(['CSV', 'JSON']);
    // An integration tests "is this collection empty" by its links.
    expect(Object.keys((await client.rest('GET', `collections/${o.statistik.id}`))._links)).to.include('datasets');
  });

  it('keeps an organisation chart as collections of units, and moves a unit to another parent', async () => {
    o.org = await client.upsert('schemes', { _type: 'Scheme', label: 'Organigramm', modelType: 'BusinessDataModel' });
    const unit = (label: string, kurzzeichen: string, kostenstelle: number) => ({ _type: 'Collection', label, stereotype: 'organizationalUnit', customProperties: { kurzzeichen, kostenstelle } });
    o.dep = await client.upsert('schemes/Organigramm/collections', unit('Finanzdepartement', 'FD', 1000));
    o.bau = await client.upsert('schemes/Organigramm/collections', unit('Baudepartement', 'BD', 2000));
    o.steuer = await client.upsert('schemes/Organigramm/collections/Finanzdepartement/collections', unit('Steueramt', 'STA', 1100));
    o.geo = await client.upsert('schemes/Organigramm/collections/Finanzdepartement/collections', unit('Geoinformation', 'GEO', 1200));
    expect(o.geo).to.include({ inCollection: o.dep.id });
    expect(o.geo.customProperties).to.deep.equal({ kurzzeichen: 'GEO', kostenstelle: 1200 });
    // Reorganisation: the unit moves to the other department by its parent reference.
    const moved = await client.rest('PATCH', `collections/${o.geo.id}`, { inCollection: o.bau.id, customProperties: { kurzzeichen: 'GEO', kostenstelle: 2100 } });
    expect(moved).to.include({ inCollection: o.bau.id, parentId: o.bau.id });
    expect(moved.customProperties.kostenstelle).to.equal(2100);
    expect([...(await client.items('schemes/Organigramm/collections/Baudepartement/collections')).keys()]).to.deep.equal(['Geoinformation']);
    expect([...(await client.items('schemes/Organigramm/collections/Finanzdepartement/collections')).keys()]).to.deep.equal(['Steueramt']);
  });

  it('maintains a law as a reference object with values carrying time series, marks one for deletion and deletes it', async () => {
    await client.upsert('schemes', { _type: 'Scheme', label: 'Rechtsgrundlagen', modelType: 'ReferenceDataModel' });
    o.law = await client.upsert('schemes/Rechtsgrundlagen/enumerations', { _type: 'ReferenceObject', label: 'Steuergesetz', stereotype: 'Gesetz' });
    const value = (label: string, code: string) => ({
      _type: 'ReferenceValue', label, timeSeries: [
        { code, shortText: `${label} (alt)`, validFrom: Date.UTC(2001, 0, 1), validTo: Date.UTC(2019, 11, 31) },
        { code, shortText: label, validFrom: Date.UTC(2020, 0, 1) },
      ],
    });
    o.art1 = await client.upsert(`enumerations/${o.law.id}/literals`, value('Art. 1 Gegenstand', 'StG-1'));
    o.art2 = await client.upsert(`enumerations/${o.law.id}/literals`, value('Art. 2 Steuerhoheit', 'StG-2'));
    expect(o.art1.timeSeries).to.have.length(2);
    expect(o.art2).to.include({ literalOf: o.law.id });
    // The safe-delete path: mark first, delete after.
    const marked = await client.rest('PATCH', `literals/${o.art2.id}`, { status: 'DELETENEW' });
    expect(marked.status).to.equal('DELETENEW');
    await client.rest('DELETE', `literals/${o.art2.id}`);
    expect([...(await client.items(`enumerations/${o.law.id}/literals`)).keys()]).to.deep.equal(['Art. 1 Gegenstand']);
  });

  it('links a processing to the dataset through a usage', async () => {
    o.processing = await client.upsert('schemes/Datenkatalog/processings', { _type: 'Processing', label: 'Steuerstatistik' });
    o.usage = await client.rest('POST', `processings/${o.processing.id}/usages`, { _type: 'Usage', usageOf: o.dataset.id, qualifier: 'liest' });
    expect(o.usage).to.include({ usedBy: o.processing.id, usageOf: o.dataset.id });
  });

  it('reads persons with their posts', async () => {
    await client.upsert('organizations', { _type: 'Organization', label: 'Kantonale Verwaltung' });
    o.post = await client.upsert('organizations/Kantonale Verwaltung/posts', { _type: 'Post', label: 'Datenverantwortliche' });
    o.person = await client.rest('POST', 'organizations/Kantonale Verwaltung/persons', { _type: 'Person', givenName: 'Vreni', familyName: 'Keller', additionalName: 'M.' });
    await client.rest('POST', `persons/${o.person.id}/holdsPost`, { _type: 'HoldsPost', holdsPost: o.post.id });
    const persons = await client.items('organizations/Kantonale Verwaltung/persons');
    const vreni = persons.get('Vreni Keller')!;
    const posts = await client.rest('GET', `persons/${vreni.id}/holdsPost`);
    expect(posts._embedded.holdsPost.map((h: Json) => h.holdsPost)).to.deep.equal([o.post.id]);
  });

  it('runs its checks as SQL reports with _type, in_collection, stereotype and the schema-qualified views', async () => {
    const units = await client.report(`select u.label, p.label as parent, u._type, u.stereotype
      from $schema.collection_view u join $schema.collection_view p on p.id = u.in_collection
      where u.stereotype = 'organizationalUnit' order by u.label`);
    expect(units).to.deep.equal([
      { label: 'Geoinformation', parent: 'Baudepartement', _type: 'Collection', stereotype: 'organizationalUnit' },
      { label: 'Steueramt', parent: 'Finanzdepartement', _type: 'Collection', stereotype: 'organizationalUnit' },
    ]);
    const datasets = await client.report(`select d.label, c.label as collection, count(x.id) as distributions
      from $schema.dataset_view d join $schema.collection_view c on c.id = d.in_collection
      left join $schema.distribution_view x on x.parent_id = d.id
      where d._type = 'Dataset' group by d.label, c.label`);
    expect(datasets).to.deep.equal([{ label: 'Steuerpflichtige', collection: 'Statistik', distributions: 2 }]);
    const values = await client.report(`select v.label, e.code from $schema.referencevalue_view v, lateral unnest(array['x']) as dummy(x)
      cross join lateral (select 'StG-1' as code) e where v.literal_of = '${o.law.id}' and v.status not in ('DELETENEW', 'ARCHIVED')`);
    expect(values).to.deep.equal([{ label: 'Art. 1 Gegenstand', code: 'StG-1' }]);
    const used = await client.report(`select p.label as processing, d.label as dataset from $schema.usage_view u
      join $schema.processing_view p on p.id = u.used_by join $schema.dataset_view d on d.id = u.usage_of`);
    expect(used).to.deep.equal([{ processing: 'Steuerstatistik', dataset: 'Steuerpflichtige' }]);
    const posts = await client.report(`select pe.label as person, po.label as post from $schema.person_view pe
      join $schema.holdspost_view h on h.held_by = pe.id join $schema.post_view po on po.id = h.holds_post`);
    expect(posts).to.deep.equal([{ person: 'Vreni Keller', post: 'Datenverantwortliche' }]);
  });
});
