/**
 * `GET /api/<db>/metamodel`: the metamodel laid over with the standard
 * profiles and the tenant's own, in the caller's language; who may read it;
 * one tenant's annotations stay its own; the ETag changes with an upload
 * and answers 304 otherwise; no secret is ever in it.
 */
import { expect } from 'chai';
import { ADMIN, createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { createTenant, createUser, secret, type Credentials } from '../../auth/fixtures.ts';
import { resolveMetamodelFor, type Layer } from '../../../plugins/profiles/resolved.ts';
import { resolveMetamodel } from '../../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../../runtime/metamodel/standard.ts';
import { upload } from './fixtures.ts';

type Json = Record<string, any>;

const ANNOTATIONS = `theme:
  name: Musterbank Blau
Classifier:
  label: Geschäftsobjekt
  labelEn: Business object
  groups:
    governance: { label: Steuerung, labelEn: Governance, order: 5 }
  properties:
    title:
      label: Fachlicher Name
      labelEn: Business name
      title: Der Name im Glossar
      group: governance
      order: 1
      mandatory: true
    description:
      hidden: true
    status:
      literals:
        FINAL: { label: Freigegeben, labelEn: Released }
  customProperties:
    stereotyp:
      label: Stereotyp
      labelEn: Stereotype
      baseType: STRING
      mandatory: true
      group: governance
      order: 2
      literals:
        Entität: { label: Entität, labelEn: Entity }
        Referenzdaten: {}
`;

describe('profiles: GET /api/<db>/metamodel', () => {
  let t: TestService;
  let db: string;
  let reader: Credentials;

  const get = (o: { as?: Credentials | null; tenant?: string; language?: string; query?: string; etag?: string } = {}) => {
    const headers: Record<string, string> = {};
    if (o.tenant) headers['service-tenant'] = o.tenant;
    if (o.language) headers['accept-language'] = o.language;
    if (o.etag) headers['if-none-match'] = o.etag;
    return t.request(`/api/${db}/metamodel${o.query ?? ''}`, { headers, auth: o.as === undefined ? undefined : o.as });
  };
  const property = (type: Json, name: string) => (type.properties as Json[]).find((p) => p.name === name)!;

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createTenant(t, db, 'Nordlicht');
    reader = { loginId: 'leserin', password: secret('leserin-geheim-42') };
    await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
  });
  after(() => t?.close());

  it('lists every standard type with its properties, lists and data types', async () => {
    const r = await get();
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    const body = await r.json() as Json;
    expect(body.language).to.equal('en');
    const classifier = body.types.Classifier;
    expect(classifier).to.include({ name: 'Classifier', supertype: 'Asset', abstract: false, plural: 'classifiers', root: false });
    expect(classifier.owner).to.equal(undefined);
    expect(body.types.BusinessAttribute.owner).to.deep.equal({ property: 'hasDomain', type: 'Classifier' });
    expect(property(body.types.BusinessAttribute, 'hasDomain')).to.include({ dataType: 'REFERENCE', range: 'Classifier', owner: true });
    expect(property(body.types.BusinessAttribute, 'cardinality')).to.include({ default: 'ONE' });
    expect(classifier.supertypes).to.deep.equal(['Asset', 'Resource']);
    expect(property(classifier, 'label')).to.include({ dataType: 'STRING', custom: false, required: true, mandatory: true, label: 'Label' });
    expect(property(classifier, 'label').labels).to.deep.equal({ de: 'Name', en: 'Label' });
    expect(property(classifier, 'label').limits).to.include({ maxLength: 1000, minLength: 1 });
    const status = property(classifier, 'status');
    expect(status).to.include({ dataType: 'ENUMERATION', range: 'Status' });
    expect(status.literals.map((l: Json) => l.value)).to.include.members(['WORKING', 'FINAL']);
    expect(property(classifier, 'specializes')).to.include({ dataType: 'REFERENCE', range: 'Classifier', owner: false });
    expect(classifier.lists.map((l: Json) => l.name)).to.include('attributes');
    expect(classifier.lists.find((l: Json) => l.name === 'attributes')).to.include({ itemType: 'BusinessAttribute', inverse: false });
    expect(classifier.groups.map((g: Json) => g.name)).to.include.members(['general', 'system']);
    expect(body.types.Asset).to.include({ abstract: true });
    expect(body.types.Asset.concreteTypes).to.include('Classifier');
    expect(body.types.Scheme).to.include({ root: true });
    expect(property(body.types.User, 'password')).to.include({ writeOnly: true });
  });

  it('shows what the tenant uploaded: labels, groups, hidden, custom properties, literals, in German on request', async () => {
    expect((await upload(t, db, 'annotations', Buffer.from(ANNOTATIONS))).status).to.equal(200);
    const de = await (await get({ language: 'de' })).json() as Json;
    expect(de.language).to.equal('de');
    expect(de.settings).to.deep.equal({ theme: { name: 'Musterbank Blau' } });
    const classifier = de.types.Classifier;
    expect(classifier).to.include({ label: 'Geschäftsobjekt' });
    expect(classifier.labels).to.deep.equal({ de: 'Geschäftsobjekt', en: 'Business object' });
    expect(classifier.groups[0]).to.include({ name: 'governance', label: 'Steuerung', order: 5 });
    // Display order: the annotated order puts title and the custom property first.
    expect(classifier.properties.slice(0, 2).map((p: Json) => p.name)).to.deep.equal(['title', 'stereotyp']);
    const title = property(classifier, 'title');
    expect(title).to.include({ label: 'Fachlicher Name', description: 'Der Name im Glossar', group: 'governance', order: 1, mandatory: true, required: false, hidden: false });
    expect(title.labels).to.deep.equal({ de: 'Fachlicher Name', en: 'Business name' });
    expect(property(classifier, 'description')).to.include({ hidden: true });
    expect(property(classifier, 'status').literals.find((l: Json) => l.value === 'FINAL')).to.include({ label: 'Freigegeben' });
    const stereotyp = property(classifier, 'stereotyp');
    expect(stereotyp).to.include({ custom: true, baseType: 'STRING', mandatory: true, label: 'Stereotyp', group: 'governance', declaredBy: 'Classifier' });
    expect(stereotyp.literals.map((l: Json) => [l.value, l.label])).to.deep.equal([['Entität', 'Entität'], ['Referenzdaten', 'Referenzdaten']]);
    expect(stereotyp.limits).to.deep.equal({ maxLength: 1000 });

    const en = await (await get({ query: '?language=en', language: 'de' })).json() as Json;
    expect(property(en.types.Classifier, 'title')).to.include({ label: 'Business name' });
    expect(property(en.types.Classifier, 'stereotyp')).to.include({ label: 'Stereotype' });
    // Other types keep the standard labels; the subtype sees nothing of Classifier's.
    expect(property(en.types.Scheme, 'stereotyp')).to.equal(undefined);
  });

  it('is the same for a READ_ONLY user of the tenant, and another tenant sees none of it', async () => {
    const asReader = await get({ as: reader, language: 'de' });
    expect(asReader.status).to.equal(200);
    expect(property((await asReader.json() as Json).types.Classifier, 'title')).to.include({ label: 'Fachlicher Name' });
    const other = await get({ tenant: 'Nordlicht', language: 'de' });
    expect(other.status).to.equal(200);
    const text = await other.text();
    for (const leaked of ['Fachlicher Name', '"stereotyp"', 'Musterbank', 'Steuerung']) expect(text).not.to.contain(leaked);
    expect(JSON.parse(text).settings).to.deep.equal({});
    // A user of the other tenant reads its own; naming this tenant gets nothing of it.
    const northReader = { loginId: 'nordleser', password: secret('nordleser-geheim-7') };
    await createUser(t, db, { ...northReader, tenant: 'Nordlicht' });
    const own = await get({ as: northReader, language: 'de' });
    expect(own.status).to.equal(200);
    expect(await own.text()).not.to.contain('Fachlicher Name');
    const defaultTenant = (await (await t.request(`/rest/${db}/tenants`)).json() as Json)._embedded.tenants.find((x: Json) => x.label !== 'Nordlicht').label;
    const foreign = await get({ as: northReader, tenant: defaultTenant, language: 'de' });
    expect(foreign.status).to.be.oneOf([401, 403]);
    expect(await foreign.text()).not.to.contain('Fachlicher Name');
  });

  it('refuses callers without credentials, or with wrong ones, and a language it does not speak', async () => {
    expect((await get({ as: null })).status).to.equal(401);
    expect((await get({ as: { loginId: 'leserin', password: 'falsch' } })).status).to.equal(401);
    const r = await get({ query: '?language=fr' });
    expect(r.status).to.equal(400);
    expect((await r.json() as Json).violations[0]).to.include({ path: 'language' });
    expect((await get({ query: '?language=de&language=en' })).status).to.equal(400);
    expect((await t.request('/api/keinedatenbank/metamodel')).status).to.equal(404);
  });

  it('answers 304 to its ETag, and the ETag changes with an upload and with the language', async () => {
    const first = await get();
    const etag = first.headers.get('etag')!;
    expect(etag).to.match(/^W\/".+"$/);
    const again = await get({ etag });
    expect(again.status).to.equal(304);
    expect(again.headers.get('etag')).to.equal(etag);
    expect((await get({ etag: `"anders", ${etag}` })).status).to.equal(304);
    const german = await get({ language: 'de' });
    expect(german.headers.get('etag')).not.to.equal(etag);
    expect((await get({ tenant: 'Nordlicht' })).headers.get('etag')).not.to.equal(etag);

    expect((await upload(t, db, 'annotations', Buffer.from(ANNOTATIONS.replace('Fachlicher Name', 'Fachname')))).status).to.equal(200);
    const changed = await get({ etag });
    expect(changed.status).to.equal(200);
    expect(changed.headers.get('etag')).not.to.equal(etag);
    expect(property((await changed.json() as Json).types.Classifier, 'title').labels.de).to.equal('Fachname');

    // The tenant's profile places things too, over the annotations.
    const before = (await get()).headers.get('etag');
    const profile = 'Classifier:\n  properties:\n    title: { order: 99, hidden: true }\n  customProperties:\n    stereotyp: { labelEn: Kind }\n';
    expect((await upload(t, db, 'profile', Buffer.from(profile))).status).to.equal(200);
    const placed = await get();
    expect(placed.headers.get('etag')).not.to.equal(before);
    const classifier = (await placed.json() as Json).types.Classifier;
    expect(property(classifier, 'title')).to.include({ order: 99, hidden: true });
    expect(property(classifier, 'stereotyp')).to.include({ label: 'Kind', custom: true });
  });

  it('holds no secret: a user\'s password is only marked write-only', async () => {
    const text = await (await get({ as: ADMIN })).text();
    for (const s of [ADMIN.password, reader.password, '$argon2']) expect(text).not.to.contain(s);
    const r = await t.request(`/rest/${db}/users/leserin`);
    expect(r.status).to.equal(200);
  });

  it('hands on annotation keys it does not know, and nests literal-specific custom properties', () => {
    const model = resolveMetamodel(readStandardMetamodel());
    const layers: Layer[] = [{
      kind: 'annotations',
      document: {
        Classifier: {
          icon: 'table',
          farbe: 'blau',
          properties: { title: { width: 40, placeholder: 'z. B. Kunde', tooltip: 'oben' }, status: { literals: { FINAL: { customProperties: { freigabe: { baseType: 'DATETIME' } } } } } },
          customProperties: { art: { baseType: 'STRING', literals: { Tabelle: { customProperties: { zeilen: { baseType: 'INTEGER' } } } } } },
        },
      },
    }];
    const resolved = resolveMetamodelFor(model, layers, {}, 'de') as Json;
    const classifier = resolved.types.Classifier;
    expect(classifier.annotations).to.deep.equal({ farbe: 'blau' });
    expect(classifier.icon).to.equal('table');
    expect(property(classifier, 'title').annotations).to.deep.equal({ tooltip: 'oben' });
    expect(property(classifier, 'title')).to.include({ width: 40, placeholder: 'z. B. Kunde' });
    expect(property(classifier, 'freigabe')).to.include({ custom: true, baseType: 'DATETIME' });
    expect(property(classifier, 'freigabe').when).to.deep.equal({ property: 'status', literal: 'FINAL' });
    expect(property(classifier, 'zeilen').when).to.deep.equal({ property: 'art', literal: 'Tabelle' });
    expect(property(classifier, 'zeilen').limits).to.include({ maximum: Number.MAX_SAFE_INTEGER });
  });

  it('lets the nearest declaration of a custom property win, and the tenant\'s layer win over the standard one', () => {
    const model = resolveMetamodel(readStandardMetamodel());
    const layers: Layer[] = [
      { kind: 'annotations', document: { Classifier: { properties: { title: { label: 'Standard', group: 'general' } } } } },
      {
        kind: 'annotations',
        document: {
          Asset: { properties: { title: { label: 'Mandant' } }, customProperties: { art: { baseType: 'STRING' } } },
          Classifier: { customProperties: { art: { baseType: 'INTEGER' } } },
        },
      },
    ];
    const types = (resolveMetamodelFor(model, layers, {}, 'de') as Json).types;
    expect(property(types.Classifier, 'art')).to.include({ baseType: 'INTEGER', declaredBy: 'Classifier' });
    expect(property(types.BusinessAttribute, 'art')).to.include({ baseType: 'STRING', declaredBy: 'Asset' });
    expect(types.Classifier.properties.filter((p: Json) => p.name === 'art')).to.have.length(1);
    expect(property(types.Classifier, 'title')).to.include({ label: 'Mandant', group: 'general' });
  });
});
