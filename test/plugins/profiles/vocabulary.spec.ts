/**
 * Annotation files in the original product's vocabulary (decisions §7.5)
 * over HTTP: two real-sized files of two tenants upload unchanged, download
 * byte for byte, and their custom properties take effect on the REST
 * interface (omitted and ID/ENUM base types, `extends`, literal-specific
 * properties); the metamodel call shows the new keys in their defined shape.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { createTenant } from '../../auth/fixtures.ts';
import { download, edited, fixture, lineOf, upload } from './fixtures.ts';
import { metamodel } from '../../../generated/metamodel.gen.ts';
import { readProfile } from '../../../plugins/profiles/document.ts';
import { CompiledAnnotations, STEREOTYPE_PROPERTY } from '../../../plugins/profiles/rules.ts';
import { KNOWN_LATER_TYPES } from '../../../plugins/profiles/vocabulary.ts';

type Json = Record<string, any>;

const UTILITY = 'annotations-stadtwerke.yaml';
const OFFICE = 'annotations-landesamt.yaml';

describe('profiles: annotation files in the original product\'s vocabulary', () => {
  let t: TestService;
  let db: string;

  const inTenant = (tenant: string) => ({ 'service-tenant': tenant });

  async function send(tenant: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: Json }> {
    const r = await t.request(`/rest/${db}${path}`, { method, json, headers: inTenant(tenant) });
    return { status: r.status, body: r.status === 204 ? {} : await r.json() };
  }

  /** The violations of a refused write as `path key-ish message`. */
  function refusal(r: { status: number; body: Json }): { path: string; message: string }[] {
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    return r.body.violations;
  }

  const created = (r: { status: number; body: Json }) => expect(r.status, JSON.stringify(r.body)).to.equal(201);

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createTenant(t, db, 'Stadtwerke');
    await createTenant(t, db, 'Landesamt');
  });
  after(() => t.close());

  describe('upload and download', () => {
    for (const [file, tenant] of [[UTILITY, 'Stadtwerke'], [OFFICE, 'Landesamt']]) {
      it(`${file}: uploads unchanged (true, then false) and downloads byte for byte`, async () => {
        const bytes = fixture(file);
        expect(bytes.toString().split('\n').length).to.be.above(400);
        let r = await upload(t, db, 'annotations', bytes, { tenant, filename: file });
        expect(r.status, await r.clone().text()).to.equal(200);
        expect(await r.json()).to.equal(true);
        r = await upload(t, db, 'annotations', bytes, { tenant, filename: file });
        expect(r.status).to.equal(200);
        expect(await r.json()).to.equal(false);
        r = await download(t, db, 'annotations', { tenant });
        expect(r.status).to.equal(200);
        expect(r.headers.get('content-disposition')).to.equal(`attachment; filename="${file}"`);
        expect(Buffer.from(await r.arrayBuffer()).equals(bytes)).to.equal(true);
      });
    }

    it('refuses a file with one wrong value of a known key, naming its line and column, and keeps the file before', async () => {
      const bytes = edited(fixture(UTILITY), '      width: 160\n      default: WORKING\n', '      width: 160\n      default: ENTWURF\n');
      const r = await upload(t, db, 'annotations', bytes, { tenant: 'Stadtwerke', language: 'de' });
      expect(r.status).to.equal(400);
      const [v] = (await r.json()).violations;
      expect(v.path).to.equal('Asset.properties.status.default');
      expect(v.message).to.equal(`Zeile ${lineOf(bytes, 'default: ENTWURF')}, Spalte 16: ENTWURF ist kein Wert dieser Eigenschaft (ENUMERATION, und eines ihrer Literale, wo sie welche hat).`);
      const kept = await download(t, db, 'annotations', { tenant: 'Stadtwerke' });
      expect(Buffer.from(await kept.arrayBuffer()).equals(fixture(UTILITY))).to.equal(true);
    });

    it('refuses a setting that differs from a type by one letter, and one that holds properties', async () => {
      let bytes = edited(fixture(OFFICE), '\nNavigation:\n', '\nScheme_:\n');
      let r = await upload(t, db, 'annotations', bytes, { tenant: 'Landesamt' });
      expect(r.status).to.equal(400);
      let [v] = (await r.json()).violations;
      expect(v.path).to.equal('Scheme_');
      expect(v.message).to.equal(`Line ${lineOf(bytes, 'Scheme_:')}, column 1: Scheme_ is not a type; did you mean Scheme? A setting must not differ from a type name by one letter only.`);
      bytes = edited(fixture(OFFICE), '\nProcessing:\n', '\nAufbereitung:\n');
      r = await upload(t, db, 'annotations', bytes, { tenant: 'Landesamt' });
      expect(r.status).to.equal(400);
      [v] = (await r.json()).violations;
      expect(v.path).to.equal('Aufbereitung');
      expect(v.message).to.match(new RegExp(`^Line ${lineOf(bytes, 'Aufbereitung:')}, column 1: the type Aufbereitung is unknown \\(it holds properties or customProperties`));
    });
  });

  describe('the custom properties take effect (Stadtwerke)', () => {
    const tenant = 'Stadtwerke';

    before(async () => {
      expect((await upload(t, db, 'annotations', fixture(UTILITY), { tenant })).status).to.equal(200);
      created(await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Netzbetrieb Strom', customProperties: { modellkürzel: 'NB-STROM', sparte: ['Strom'], gültigAb: '2024-01-01' } }));
    });

    it('ENUM: one of the literals, in the cardinality declared', async () => {
      created(await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Wasser und Bäder', customProperties: { sparte: ['Wasser', 'Abwasser', 'Bäder'] } }));
      let [v] = refusal(await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Kohle', customProperties: { sparte: ['Kohle'] } }));
      expect(v.path).to.equal('customProperties.sparte');
      expect(v.message).to.contain('Strom, Gas, Wärme, Wasser, Abwasser, Bäder');
      [v] = refusal(await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Gas allein', customProperties: { sparte: 'Gas' } }));
      expect(v.path).to.equal('customProperties.sparte');
    });

    it('no base type: text, nothing else', async () => {
      created(await send(tenant, 'POST', '/schemes/Netzbetrieb Strom/classifiers', { _type: 'Classifier', label: 'Zählpunkt', customProperties: { kurzbeschreibung: 'Messstelle im Netz', fachbegriffe: ['Marktlokation', 'Messlokation'] } }));
      const [v] = refusal(await send(tenant, 'POST', '/schemes/Netzbetrieb Strom/classifiers', { _type: 'Classifier', label: 'Zähler', customProperties: { kurzbeschreibung: 42 } }));
      expect(v).to.deep.include({ path: 'customProperties.kurzbeschreibung', message: 'The value must be text of at most 1000 characters.' });
    });

    it('ID: unique among the objects of the declaring type, on create, change and within one list write', async () => {
      const path = '/schemes/Netzbetrieb Strom/classifiers';
      const first = await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Netzanschluss', customProperties: { objektkennung: 'GO-0001' } });
      created(first);
      let [v] = refusal(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Hausanschluss', customProperties: { objektkennung: 'GO-0001' } }));
      expect(v).to.deep.include({ path: 'customProperties.objektkennung', message: 'Another object of this type has the identifier GO-0001 already.' });
      // Another value is free; taking the first's value by a change is refused; the first keeps its own.
      const second = await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Hausanschluss', customProperties: { objektkennung: 'GO-0002' } });
      created(second);
      [v] = refusal(await send(tenant, 'PATCH', `/classifiers/${second.body.id}`, { customProperties: { objektkennung: 'GO-0001' } }));
      expect(v.path).to.equal('customProperties.objektkennung');
      expect((await send(tenant, 'PATCH', `/classifiers/${first.body.id}`, { customProperties: { objektkennung: 'GO-0001', kurzbeschreibung: 'geändert' } })).status).to.equal(200);
      // An identifier is not blank.
      [v] = refusal(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Leer', customProperties: { objektkennung: '  ' } }));
      expect(v.path).to.equal('customProperties.objektkennung');
      // Two objects of one write.
      await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Liste' });
      const r = await send(tenant, 'PUT', '/schemes/Liste/classifiers', [
        { _type: 'Classifier', label: 'A', customProperties: { objektkennung: 'GO-0100' } },
        { _type: 'Classifier', label: 'B', customProperties: { objektkennung: 'GO-0100' } },
      ]);
      expect(refusal(r).map((x) => x.path)).to.deep.equal(['1.customProperties.objektkennung']);
      expect((await send(tenant, 'GET', '/schemes/Liste/classifiers')).body.total ?? 0).to.equal(0);
      // A list write of many looks its IDs up at once.
      const items = Array.from({ length: 300 }, (_, i) => ({ _type: 'Classifier', label: `Objekt ${i}`, customProperties: { objektkennung: `GO-${1000 + i}` } }));
      const queries: string[] = [];
      const listen = (q: { sql: string }) => queries.push(q.sql);
      t.service.storage.knex.on('query', listen);
      try {
        expect((await send(tenant, 'PUT', '/schemes/Liste/classifiers', items)).status).to.equal(200);
      } finally {
        t.service.storage.knex.off('query', listen);
      }
      expect(queries.filter((q) => q.includes('custom->>')), 'lookups of ID values').to.have.length(1);
      items[299].customProperties.objektkennung = 'GO-0001';
      expect(refusal(await send(tenant, 'PUT', '/schemes/Liste/classifiers', items)).map((x) => x.path)).to.deep.equal(['299.customProperties.objektkennung']);
      // Unique within the tenant: another tenant's objects do not count.
      expect((await upload(t, db, 'annotations', fixture(UTILITY), { tenant: 'Landesamt', filename: 'leihweise.yaml' })).status).to.equal(200);
      created(await send('Landesamt', 'POST', '/schemes', { _type: 'Scheme', label: 'Leihweise', customProperties: { modellkürzel: 'NB-STROM' } }));
      expect((await upload(t, db, 'annotations', fixture(OFFICE), { tenant: 'Landesamt', filename: OFFICE })).status).to.equal(200);
    });

    it('extends: a code list takes the business objects\' custom properties, its ID unique among code lists', async () => {
      const path = '/schemes/Netzbetrieb Strom/enumerations';
      created(await send(tenant, 'POST', path, { _type: 'Enumeration', label: 'Zählertyp', customProperties: { objektkennung: 'GO-0001', pflegendeStelle: 'Messstellenbetrieb', externeQuelle: 'BDEW', schutzbedarf: 'normal' } }));
      let [v] = refusal(await send(tenant, 'POST', path, { _type: 'Enumeration', label: 'Tarifart', customProperties: { objektkennung: 'GO-0001' } }));
      expect(v.path).to.equal('customProperties.objektkennung');
      [v] = refusal(await send(tenant, 'POST', path, { _type: 'Enumeration', label: 'Tarifart', customProperties: { externeQuelle: 'VDE' } }));
      expect(v.path).to.equal('customProperties.externeQuelle');
      // A custom property of the code list is none of the business object.
      [v] = refusal(await send(tenant, 'POST', '/schemes/Netzbetrieb Strom/classifiers', { _type: 'Classifier', label: 'Tarif', customProperties: { pflegendeStelle: 'Vertrieb' } }));
      expect(v.path).to.equal('customProperties.pflegendeStelle');
    });

    it('literal-specific properties under an ENUM, and stereotypes, which need the stereotype property of §7.1', async () => {
      const path = '/schemes/Netzbetrieb Strom/classifiers';
      let [v] = refusal(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Kundendaten', customProperties: { schutzbedarf: 'hoch' } }));
      expect(v).to.deep.include({ path: 'customProperties.schutzbegründung' });
      created(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Kundendaten', customProperties: { schutzbedarf: 'hoch', schutzbegründung: 'Bankverbindungen', personenbezug: true } }));
      [v] = refusal(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Leitstelle', customProperties: { schutzbedarf: 'mittel' } }));
      expect(v.path).to.equal('customProperties.schutzbedarf');
      [v] = refusal(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Leitstelle', customProperties: { aggregatwurzel: true } }));
      expect(v.path).to.equal('customProperties.aggregatwurzel');
    });

    it('a stereotype\'s custom properties apply while the object has that stereotype (§7.1 stereotype)', async () => {
      const path = '/schemes/Netzbetrieb Strom/classifiers';
      const entity = await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Messlokation', stereotype: 'Entität', customProperties: { aggregatwurzel: true, schlüsselattribut: 'MeLo-ID' } });
      created(entity);
      expect(entity.body).to.deep.include({ stereotype: 'Entität', customProperties: { aggregatwurzel: true, schlüsselattribut: 'MeLo-ID' } });
      // Another stereotype's property is none of this one's, nor of an object without one.
      let [v] = refusal(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Zählwert', stereotype: 'Wertobjekt', customProperties: { aggregatwurzel: true } }));
      expect(v.path).to.equal('customProperties.aggregatwurzel');
      created(await send(tenant, 'POST', path, { _type: 'Classifier', label: 'Zählwert', stereotype: 'Wertobjekt', customProperties: { unveränderlich: true } }));
      // Changing the stereotype away leaves a property that no longer applies: refused until it goes too.
      [v] = refusal(await send(tenant, 'PATCH', `/classifiers/${entity.body.id}`, { stereotype: 'Ereignis' }));
      expect(v.path).to.equal('customProperties.aggregatwurzel');
      const changed = await send(tenant, 'PATCH', `/classifiers/${entity.body.id}`, { stereotype: 'Ereignis', customProperties: { auslöser: 'Zählerwechsel' } });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      expect(changed.body).to.deep.include({ stereotype: 'Ereignis', customProperties: { auslöser: 'Zählerwechsel' } });
    });
  });

  describe('the custom properties take effect (Landesamt)', () => {
    const tenant = 'Landesamt';

    before(async () => {
      expect((await upload(t, db, 'annotations', fixture(OFFICE), { tenant, filename: OFFICE })).status).to.equal(200);
      created(await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Bevölkerung', customProperties: { modellnummer: 'M-001', berichtsjahr: 2022, statistikgeheimnis: 'offen' } }));
    });

    it('extends: a survey takes the model\'s properties; a working group the organisational unit\'s', async () => {
      created(await send(tenant, 'POST', '/schemes/Bevölkerung/collections', { _type: 'Collection', label: 'Zensus 2022', customProperties: { erhebungskennung: '12111', modellnummer: 'M-001', periodizität: 'einmalig' } }));
      let [v] = refusal(await send(tenant, 'POST', '/schemes/Bevölkerung/collections', { _type: 'Collection', label: 'Mikrozensus', customProperties: { erhebungskennung: '12111' } }));
      expect(v.path).to.equal('customProperties.erhebungskennung');
      [v] = refusal(await send(tenant, 'POST', '/schemes/Bevölkerung/collections', { _type: 'Collection', label: 'Mikrozensus', customProperties: { periodizität: 'täglich' } }));
      expect(v.path).to.equal('customProperties.periodizität');
      const unit = await send(tenant, 'POST', '/organizations', { _type: 'Organization', label: 'Referat 14', customProperties: { referatsnummer: '14', dienstsitz: 'Kiel' } });
      created(unit);
      created(await send(tenant, 'POST', `/organizations/${unit.body.id}/groups`, { _type: 'Group', label: 'AG Metadaten', customProperties: { referatsnummer: '14', dienstsitz: 'Lübeck' } }));
      [v] = refusal(await send(tenant, 'POST', `/organizations/${unit.body.id}/groups`, { _type: 'Group', label: 'AG Zensus', customProperties: { dienstsitz: 'Hamburg' } }));
      expect(v.path).to.equal('customProperties.dienstsitz');
    });

    it('a value of an ENUM with a literal-specific mandatory property', async () => {
      const [v] = refusal(await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Steuern', customProperties: { statistikgeheimnis: 'gesperrt' } }));
      expect(v.path).to.equal('customProperties.sperrgrund');
      created(await send(tenant, 'POST', '/schemes', { _type: 'Scheme', label: 'Steuern', customProperties: { statistikgeheimnis: 'gesperrt', sperrgrund: 'Einzelangaben nach § 30 AO' } }));
    });
  });

  describe('GET /api/<db>/metamodel shows the vocabulary', () => {
    let utility: Json;
    let office: Json;

    before(async () => {
      expect((await upload(t, db, 'annotations', fixture(UTILITY), { tenant: 'Stadtwerke', filename: UTILITY })).status).to.equal(200);
      expect((await upload(t, db, 'annotations', fixture(OFFICE), { tenant: 'Landesamt', filename: OFFICE })).status).to.equal(200);
      const get = async (tenant: string) => {
        const r = await t.request(`/api/${db}/metamodel?language=de`, { headers: inTenant(tenant) });
        expect(r.status).to.equal(200);
        return r.json();
      };
      utility = await get('Stadtwerke');
      office = await get('Landesamt');
    });

    const property = (type: Json, name: string) => type.properties.find((p: Json) => p.name === name);

    it('answers in the shape the OpenAPI document declares (no key beyond it)', () => {
      const document = JSON.parse(readFileSync(new URL('../../../generated/openapi.gen.json', import.meta.url), 'utf8'));
      const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
      ajv.addSchema({ ...document, $id: 'openapi' });
      const validate = ajv.getSchema('openapi#/components/schemas/ResolvedMetamodel')!;
      for (const body of [utility, office]) expect(validate(body), JSON.stringify(validate.errors?.slice(0, 5))).to.equal(true);
    });

    it('type level: plural labels, gender, icon, order, extends; unknown keys under annotations', () => {
      const classifier = utility.types.Classifier;
      expect(classifier).to.deep.include({ label: 'Geschäftsobjekt', pluralLabel: 'Geschäftsobjekte', pluralLabels: { de: 'Geschäftsobjekte', en: 'Business objects' }, gender: 'n', icon: 'fa-cube', order: 3, plural: 'classifiers' });
      expect(classifier.annotations).to.deep.equal({ sortierung: 'label' });
      const enumeration = utility.types.Enumeration;
      expect(enumeration).to.deep.include({ extends: 'Classifier', label: 'Werteliste', icon: 'fa-list-ol', gender: 'f' });
      expect(property(enumeration, 'objektkennung')).to.deep.include({ custom: true, baseType: 'ID', declaredBy: 'Classifier', width: 120, placeholder: 'GO-0000' });
      // Groups of Asset, from the tenant's annotations (among the standard profile's), in their order.
      expect(utility.types.Group.groups.map((g: Json) => g.name).filter((n: string) => ['stammdaten', 'verantwortung', 'betrieb', 'dokumentation'].includes(n)))
        .to.deep.equal(['stammdaten', 'verantwortung', 'betrieb', 'dokumentation']);
      expect(utility.types.Asset.groups.find((g: Json) => g.name === 'stammdaten')).to.deep.include({ label: 'Stammdaten', icon: 'fa-id-card', order: 10 });
    });

    it('stereotypes with labels, icons, how they show properties, and their custom properties (when stereotype is …)', () => {
      // Without `order`, in the order of the stored document (whose mappings PostgreSQL's jsonb keeps by key length).
      const stereotypes = [...utility.types.Classifier.stereotypes].sort((a: Json, b: Json) => ['Entität', 'Wertobjekt', 'Ereignis', 'Referenzdaten'].indexOf(a.name) - ['Entität', 'Wertobjekt', 'Ereignis', 'Referenzdaten'].indexOf(b.name));
      expect(stereotypes.map((s: Json) => [s.name, s.label, s.icon])).to.deep.equal([
        ['Entität', 'Entität', 'fa-cube'], ['Wertobjekt', 'Wertobjekt', 'fa-gem'], ['Ereignis', 'Fachliches Ereignis', 'fa-bolt'], ['Referenzdaten', 'Referenzdaten', 'fa-book'],
      ]);
      expect(stereotypes[0].properties.title).to.deep.equal({ label: 'Name der Entität', labels: { de: 'Name der Entität', en: 'Name der Entität' }, placeholder: 'z. B. Zählpunkt', annotations: {} });
      expect(stereotypes[3].annotations).to.deep.equal({ farbe: '#8cc63f' });
      expect(property(utility.types.Classifier, 'aggregatwurzel')).to.deep.include({ baseType: 'BOOLEAN', default: false, when: { property: 'stereotype', literal: 'Entität' } });
    });

    it('fields: width, placeholder, default; literals with group, order and icon; omitted base type is STRING', () => {
      const classifier = utility.types.Classifier;
      expect(property(classifier, 'title')).to.deep.include({ width: 400, placeholder: 'Name, wie ihn die Fachabteilung verwendet' });
      expect(property(classifier, 'description')).to.deep.include({ width: '100%', annotations: { darstellung: 'markdown' } });
      const status = property(classifier, 'status');
      expect(status).to.deep.include({ default: 'WORKING', width: 160 });
      expect(status.literals.find((l: Json) => l.value === 'FINAL')).to.deep.include({ label: 'Freigegeben', group: 'abgeschlossen', order: 5, icon: 'fa-check' });
      expect(property(classifier, 'kurzbeschreibung')).to.deep.include({ baseType: 'STRING', limits: { maxLength: 1000 } });
      const schutzbedarf = property(classifier, 'schutzbedarf');
      expect(schutzbedarf).to.deep.include({ baseType: 'ENUM', default: 'normal', width: 180 });
      expect(schutzbedarf.literals.map((l: Json) => [l.value, l.group])).to.deep.equal([['normal', 'Grundschutz'], ['hoch', 'erhöht'], ['sehrHoch', 'erhöht']]);
      expect(property(classifier, 'aufbewahrungJahre')).to.deep.include({ baseType: 'INTEGER', default: 10, width: 80, placeholder: '10' });
    });

    it('settings in any case; the model kinds known later are kept in the file but neither types nor settings here', () => {
      expect(Object.keys(utility.settings)).to.have.members(['Theme', 'startseite', 'menü', 'suche']);
      expect(utility.settings.Theme.primärfarbe).to.equal('#00773c');
      expect(Object.keys(office.settings)).to.have.members(['theme', 'Startseite', 'Navigation', 'exportformate', 'sprache']);
      // The model kinds are known later; the types of §7.1 are types now, annotated like any other.
      expect(office.types.DataCatalog).to.equal(undefined);
      expect(office.types.Dataset).to.deep.include({ label: 'Datensatz', icon: 'fa-table' });
      expect(property(office.types.Dataset, 'datensatzkennung')).to.deep.include({ baseType: 'ID', declaredBy: 'Dataset' });
      expect(office.types.Collection).to.deep.include({ extends: 'Scheme', label: 'Erhebung' });
      expect(property(office.types.Collection, 'modellnummer')).to.deep.include({ baseType: 'ID', declaredBy: 'Scheme' });
    });
  });
});

describe('profiles: the rules compiled from annotations in the original product\'s vocabulary', () => {
  function compiled(file: string): CompiledAnnotations {
    const r = readProfile('annotations', fixture(file), metamodel);
    if (!r.ok) throw new Error(JSON.stringify(r.violations));
    return new CompiledAnnotations(r.document, metamodel);
  }

  it('an omitted base type is STRING; an ID is unique within the declaring type, or within the extending one', () => {
    const rules = compiled(UTILITY);
    expect(rules.rulesOf('Classifier').always.get('kurzbeschreibung')).to.include({ baseType: 'STRING', many: false });
    expect(rules.rulesOf('Classifier').always.get('fachbegriffe')).to.include({ baseType: 'STRING', many: true });
    expect(rules.rulesOf('Classifier').always.get('objektkennung')!.scope).to.deep.equal(['Classifier']);
    // A reference object is an enumeration: one scope.
    expect(rules.rulesOf('Enumeration').always.get('objektkennung')!.scope).to.deep.equal(['Enumeration', 'ReferenceObject']);
    // Declared at Asset: unique among all its concrete types.
    expect(rules.rulesOf('Scheme').always.get('quellsystem')!.scope).to.include.members(['Scheme', 'Classifier', 'Processing']);
    expect(rules.rulesOf('Enumeration').always.get('externeQuelle')!.literals).to.deep.equal(new Set(['BDEW', 'EDI@Energy', 'DVGW', 'intern']));
  });

  it('a stereotype\'s custom properties apply while the object\'s stereotype is that one', () => {
    const byStereotype = compiled(UTILITY).rulesOf('Classifier').byProperty.get(STEREOTYPE_PROPERTY)!;
    expect([...byStereotype.keys()]).to.have.members(['Entität', 'Wertobjekt', 'Ereignis']);
    expect(byStereotype.get('Entität')!.map((r) => [r.name, r.baseType])).to.have.deep.members([['schlüsselattribut', 'STRING'], ['aggregatwurzel', 'BOOLEAN']]);
    // The metamodel has the property on every asset: its effect over REST is tested above (§7.1 stereotype).
    expect(metamodel.types.Classifier.properties.some((p) => p.name === STEREOTYPE_PROPERTY)).to.equal(true);
  });

  it('applies a model kind\'s entry to schemes of that kind only, on top of Scheme\'s; the kinds are no types of the metamodel', () => {
    const rules = compiled(OFFICE);
    expect(rules.rulesOf('DataDomainModel').always.size).to.equal(0);
    expect(rules.rulesOf('Scheme', 'DataDomainModel').always.get('domäne')).to.include({ baseType: 'ENUM' });
    expect(rules.rulesOf('Scheme', 'DataCatalog').always.has('domäne')).to.equal(false);
    expect(rules.rulesOf('Scheme').always.has('domäne')).to.equal(false);
    // What Scheme declares applies to every kind.
    for (const name of rules.rulesOf('Scheme').always.keys()) expect(rules.rulesOf('Scheme', 'DataDomainModel').always.has(name)).to.equal(true);
    expect([...rules.rulesOf('Dataset').always.keys()]).to.include.members(['datensatzkennung', 'lizenz']);
    for (const name of KNOWN_LATER_TYPES) expect(Object.hasOwn(metamodel.types, name), `${name} is in the metamodel now: remove it from KNOWN_LATER_TYPES`).to.equal(false);
  });
});
