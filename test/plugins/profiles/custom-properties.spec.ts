/**
 * What a tenant's annotations change on the REST interface: custom
 * properties are accepted only as declared (for the type, its supertypes,
 * or a literal the object has), checked by base type, cardinality, literals
 * and the mandatory flag, stored in one form, shown in HAL and in
 * `customproperties_view`; and what happens to stored values when the
 * annotations change later.
 */
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { createTenant } from '../../auth/fixtures.ts';
import { schemaOf } from '../../../runtime/storage/migrations.ts';
import { ProfileStore } from '../../../plugins/profiles/store.ts';
import { BANK, fixture, INSURER, upload } from './fixtures.ts';

type Json = Record<string, unknown>;

describe('profiles: custom properties on the REST interface', () => {
  let t: TestService;
  let db: string;
  let organization: Json;
  let person: Json;
  let northOrganization: Json;

  const inTenant = (tenant?: string): Record<string, string> => (tenant ? { 'service-tenant': tenant } : {});

  async function send(method: string, path: string, json: unknown, tenant?: string): Promise<{ status: number; body: Json }> {
    const r = await t.request(`/rest/${db}${path}`, { method, json, headers: inTenant(tenant) });
    return { status: r.status, body: r.status === 204 ? {} : await r.json() };
  }

  async function annotate(tenant: string, yaml: string) {
    const r = await upload(t, db, 'annotations', Buffer.from(yaml), { tenant });
    expect(r.status, await r.clone().text()).to.equal(200);
  }

  /** The violations of a refused write, as `path: message`. */
  function refusal(r: { status: number; body: Json }): string[] {
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    return (r.body.violations as { path: string; message: string }[]).map((v) => `${v.path}: ${v.message}`);
  }

  async function viewRows(objectId: string, tenantId: string): Promise<{ name: string; value: string }[]> {
    return t.service.storage.knex.transaction(async (trx) => {
      await trx.raw(`select set_config('service.tenants', ?, true)`, [tenantId]);
      const r = await trx.raw(`select name, value from "${schemaOf(db)}".customproperties_view where resource_id = ? order by name`, [objectId]);
      return r.rows;
    });
  }

  let counter = 0;
  const unique = (prefix: string) => `${prefix} ${++counter}`;

  /** A classifier of the bank with its mandatory stereotype, plus the given custom properties. */
  function classifier(custom: Json, extra: Json = {}): Json {
    return { _type: 'Classifier', label: unique('Geschäftsobjekt'), ...extra, customProperties: { stereotyp: 'Referenzdaten', ...custom } };
  }

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createTenant(t, db, 'Nordlicht');
    await createTenant(t, db, 'Labor');
    expect((await upload(t, db, 'annotations', fixture(BANK))).status).to.equal(200);
    expect((await upload(t, db, 'annotations', fixture(INSURER), { tenant: 'Nordlicht' })).status).to.equal(200);
    expect((await send('POST', '/schemes', { _type: 'Scheme', label: 'Kernbank', customProperties: { modellversion: '2.1', gültigAb: '2024-01-01' } })).status).to.equal(201);
    organization = (await send('POST', '/organizations', { _type: 'Organization', label: 'Musterbank AG', customProperties: { kostenstelle: 'KST-100', mitarbeiterzahl: 5400 } })).body;
    person = (await send('POST', `/organizations/${organization.id}/persons`, {
      _type: 'Person', givenName: 'Erika', familyName: 'Mustermann', customProperties: { eintrittsdatum: '2015-04-01', datenschutzbeauftragt: true },
    })).body;
    expect(person.id).to.be.a('string');
    northOrganization = (await send('POST', '/organizations', { _type: 'Organization', label: 'Nordlicht VVaG' }, 'Nordlicht')).body;
    expect((await send('POST', '/schemes', { _type: 'Scheme', label: 'Leben', customProperties: { sparte: ['Leben'] } }, 'Nordlicht')).status).to.equal(201);
  });
  after(() => t.close());

  describe('values by base type', () => {
    it('accepts every base type, stores one form, and shows it in HAL and in customproperties_view', async () => {
      const custom = {
        stereotyp: 'Entität',
        aggregatwurzel: true,
        lebenszyklus: 'langlebig',
        anzahlDatensätze: 120000,
        quellsysteme: ['SAP FI', 'Kernbanksystem „Kredo"'],
        datenmodellierer: [String(person.id).toUpperCase()],
        dokumentation: 'Ein Kunde ist eine natürliche oder juristische Person.\nSiehe Glossar „Kunde".',
        gepflegtSeit: 1717164000000,
        prüfdatum: '2025-01-31',
        qualitätsindex: 0.87,
        vertraulichkeit: 'intern',
        schlagworte: ['Kunde', 'Stammdaten'],
      };
      const created = await send('POST', '/schemes/Kernbank/classifiers', { _type: 'Classifier', label: 'Kunde', customProperties: custom });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const expected = { ...custom, gepflegtSeit: '2024-05-31T14:00:00.000Z', datenmodellierer: [person.id] };
      expect(created.body.customProperties).to.deep.equal(expected);
      const read = await t.request(`/rest/${db}/schemes/Kernbank/classifiers/Kunde`);
      expect((await read.json()).customProperties).to.deep.equal(expected);
      const rows = await viewRows(String(created.body.id), String(created.body.tenant));
      expect(Object.fromEntries(rows.map((r) => [r.name, r.value]))).to.deep.equal({
        aggregatwurzel: 'true',
        anzahlDatensätze: '120000',
        datenmodellierer: JSON.stringify([person.id]),
        dokumentation: custom.dokumentation,
        gepflegtSeit: '2024-05-31T14:00:00.000Z',
        lebenszyklus: 'langlebig',
        prüfdatum: '2025-01-31',
        qualitätsindex: '0.87',
        quellsysteme: '["SAP FI", "Kernbanksystem „Kredo\\""]',
        schlagworte: '["Kunde", "Stammdaten"]',
        stereotyp: 'Entität',
        vertraulichkeit: 'intern',
      });
      // Another tenant sees none of it.
      expect(await viewRows(String(created.body.id), String(northOrganization.tenant))).to.deep.equal([]);
    });

    it('takes DATETIME as ISO 8601 with a zone or as epoch milliseconds, and stores UTC', async () => {
      for (const [given, stored] of [
        ['2024-05-31T16:00:00+02:00', '2024-05-31T14:00:00.000Z'],
        ['2024-05-31T14:00Z', '2024-05-31T14:00:00.000Z'],
        ['2024-02-29T23:59:59.123456Z', '2024-02-29T23:59:59.123Z'],
        [0, '1970-01-01T00:00:00.000Z'],
      ] as const) {
        const r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ gepflegtSeit: given }));
        expect(r.status, String(given)).to.equal(201);
        expect((r.body.customProperties as Json).gepflegtSeit).to.equal(stored);
      }
    });

    it('refuses a wrong value with a violation on customProperties.<name>, naming what is expected', async () => {
      const cases: [Json, string][] = [
        [{ lebenszyklus: 42, stereotyp: 'Entität' }, 'customProperties.lebenszyklus: The value must be text of at most 1000 characters.'],
        [{ anzahlDatensätze: 1.5 }, 'customProperties.anzahlDatensätze: The value must be a whole number.'],
        [{ anzahlDatensätze: '12' }, 'customProperties.anzahlDatensätze: The value must be a whole number.'],
        [{ anzahlDatensätze: 2 ** 60 }, 'customProperties.anzahlDatensätze: The value must be a whole number.'],
        [{ qualitätsindex: 'hoch' }, 'customProperties.qualitätsindex: The value must be a number.'],
        [{ aggregatwurzel: 'ja', stereotyp: 'Entität' }, 'customProperties.aggregatwurzel: The value must be true or false.'],
        [{ prüfdatum: '2025-02-29' }, 'customProperties.prüfdatum: The value must be a date in the form YYYY-MM-DD.'],
        [{ prüfdatum: '31.01.2025' }, 'customProperties.prüfdatum: The value must be a date in the form YYYY-MM-DD.'],
        [{ gepflegtSeit: '2024-05-31 14:00' }, 'customProperties.gepflegtSeit: The value must be a time in ISO 8601 with a time zone (e.g. 2024-05-31T14:30:00Z) or in epoch milliseconds.'],
        [{ gepflegtSeit: '2024-05-31T14:00:00' }, 'customProperties.gepflegtSeit: The value must be a time in ISO 8601 with a time zone (e.g. 2024-05-31T14:30:00Z) or in epoch milliseconds.'],
        [{ gepflegtSeit: '2024-13-01T00:00:00Z' }, 'customProperties.gepflegtSeit: The value must be a time in ISO 8601 with a time zone (e.g. 2024-05-31T14:30:00Z) or in epoch milliseconds.'],
        [{ datenmodellierer: ['Erika'] }, 'customProperties.datenmodellierer: The value must be the technical key (UUID) of an object.'],
        [{ datenmodellierer: ['6f1c2b9e-0000-4000-8000-000000000000'] }, 'customProperties.datenmodellierer: No object with the technical key 6f1c2b9e-0000-4000-8000-000000000000 exists in this tenant.'],
        [{ datenmodellierer: String(person.id) }, 'customProperties.datenmodellierer: The custom property holds several values: send an array.'],
        [{ dokumentation: ['a', 'b'] }, 'customProperties.dokumentation: The custom property holds one value, not an array.'],
        [{ dokumentation: 'x'.repeat(100_001) }, 'customProperties.dokumentation: The value must be text of at most 100000 characters.'],
        [{ vertraulichkeit: 'geheim' }, 'customProperties.vertraulichkeit: The value is not allowed; allowed: öffentlich, intern, vertraulich, streng vertraulich.'],
        [{ quellsysteme: ['SAP FI', 'Excel'] }, 'customProperties.quellsysteme: The value is not allowed; allowed: SAP FI, SAP CO, Salesforce, Kernbanksystem „Kredo", Eigenentwicklung.'],
        [{ stereotyp: 'Entity' }, 'customProperties.stereotyp: The value is not allowed; allowed: Entität, Wertobjekt, Referenzdaten.'],
        [{ dokumentation: 'a\u0000b' }, 'customProperties.dokumentation: The text holds a character that cannot be stored (NUL, or half of a surrogate pair).'],
        [{ schlagworte: ['ok', '\uDC00'] }, 'customProperties.schlagworte: The text holds a character that cannot be stored (NUL, or half of a surrogate pair).'],
      ];
      for (const [custom, message] of cases) {
        const r = await send('POST', '/schemes/Kernbank/classifiers', classifier(custom));
        expect(refusal(r), JSON.stringify(custom)).to.deep.equal([message]);
      }
    });

    it('compares literals of numbers as numbers', async () => {
      const cases: [unknown, number][] = [[90, 201], [3650, 201], [91, 400], ['90', 400]];
      for (const [value, status] of cases) {
        const r = await send('POST', '/schemes/Kernbank/classifiers/Kunde/attributes', { _type: 'BusinessAttribute', label: unique('Attribut'), customProperties: { personenbezogen: false, löschfristTage: value, genauigkeit: 0.001 } });
        expect(r.status, String(value)).to.equal(status);
      }
    });

    it('refuses a reference to an object of another tenant as not found', async () => {
      const r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ datenmodellierer: [northOrganization.id] }));
      expect(refusal(r)).to.deep.equal([`customProperties.datenmodellierer: No object with the technical key ${northOrganization.id} exists in this tenant.`]);
    });

    it('answers in the caller\'s language', async () => {
      const r = await t.request(`/rest/${db}/schemes/Kernbank/classifiers`, { method: 'POST', json: classifier({ prüfdatum: 'morgen' }), headers: { 'accept-language': 'de' } });
      const body = await r.json();
      expect(body.violations).to.deep.equal([{ message: 'Der Wert muss ein Datum der Form JJJJ-MM-TT sein.', path: 'customProperties.prüfdatum' }]);
    });
  });

  describe('declared where', () => {
    it('refuses a custom property the annotations do not declare for the type: typos, and those of other types', async () => {
      let r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ stereotype: 'Entität' }));
      expect(refusal(r)).to.deep.equal(['customProperties.stereotype: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.']);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ kostenstelle: 'KST-1' }));
      expect(refusal(r)).to.deep.equal(['customProperties.kostenstelle: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.']);
      r = await send('POST', '/organizations', { _type: 'Organization', label: unique('Org'), customProperties: { stereotyp: 'Entität' } });
      expect(refusal(r)).to.deep.equal(['customProperties.stereotyp: The custom property is not declared for the type Organization in the annotations of this tenant nor in the profiles its scheme names.']);
    });

    it('lets every type have what its supertypes declare (Processing ⊂ Activity ⊂ Asset), and no more', async () => {
      const processing = {
        _type: 'Processing', label: unique('Monatsabschluss'),
        customProperties: {
          rechtsgrundlage: 'Rechtspflicht', turnus: 'monatlich', letzterLauf: '2024-05-31T22:00:00Z', laufzeitMinuten: 42.5, automatisiert: true,
          verantwortlicheStelle: organization.id,
          vertraulichkeit: 'intern', schlagworte: ['HGB'],
        },
      };
      let r = await send('POST', '/schemes/Kernbank/processings', processing);
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      r = await send('GET', `/activities/${r.body.id}`, undefined);
      expect((r.body.customProperties as Json).verantwortlicheStelle).to.equal(organization.id);
      // A classifier is an asset, but not an activity or a processing.
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ turnus: 'täglich', verantwortlicheStelle: organization.id, vertraulichkeit: 'intern' }));
      expect(refusal(r)).to.deep.equal([
        'customProperties.turnus: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.',
        'customProperties.verantwortlicheStelle: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.',
      ]);
      // A processing without its mandatory legal basis.
      r = await send('POST', '/schemes/Kernbank/processings', { _type: 'Processing', label: unique('Lauf') });
      expect(refusal(r)).to.deep.equal(['customProperties.rechtsgrundlage: The property is mandatory.']);
    });

    it('lets a custom property\'s literal bring custom properties of its own, nested', async () => {
      // Entität: aggregatwurzel and lebenszyklus; Wertobjekt: unveränderlich (mandatory) instead.
      let r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ stereotyp: 'Entität', aggregatwurzel: true }));
      expect(r.status).to.equal(201);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ stereotyp: 'Wertobjekt', aggregatwurzel: true }));
      expect(refusal(r)).to.deep.equal([
        'customProperties.aggregatwurzel: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.',
        'customProperties.unveränderlich: The property is mandatory.',
      ]);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ stereotyp: 'Wertobjekt', unveränderlich: true }));
      expect(r.status).to.equal(201);
      // Entität → lebenszyklus archiviert → archivort, mandatory.
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ stereotyp: 'Entität', lebenszyklus: 'archiviert' }));
      expect(refusal(r)).to.deep.equal(['customProperties.archivort: The property is mandatory.']);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ stereotyp: 'Entität', lebenszyklus: 'archiviert', archivort: 'Archiv Frankfurt, Regal 7' }));
      expect(r.status).to.equal(201);
      // Alternatives under two literals of one property: vertraulich and streng vertraulich both need a reason.
      for (const level of ['vertraulich', 'streng vertraulich']) {
        r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ vertraulichkeit: level }));
        expect(refusal(r), level).to.deep.equal(['customProperties.schutzbedarfsbegründung: The property is mandatory.']);
      }
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ vertraulichkeit: 'streng vertraulich', schutzbedarfsbegründung: 'Kundendaten', freigabeGremium: 'Vorstand' }));
      expect(r.status).to.equal(201);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ vertraulichkeit: 'vertraulich', schutzbedarfsbegründung: 'Kundendaten', freigabeGremium: 'Vorstand' }));
      expect(refusal(r)).to.deep.equal(['customProperties.freigabeGremium: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.']);
    });

    it('lets a literal of a standard property bring custom properties: status FINAL needs who and when', async () => {
      let r = await send('POST', '/schemes/Kernbank/classifiers', classifier({}, { status: 'FINAL' }));
      expect(refusal(r)).to.deep.equal(['customProperties.freigabezeitpunkt: The property is mandatory.']);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ freigabezeitpunkt: '2024-06-01T08:00:00Z', freigegebenVon: person.id }, { status: 'FINAL' }));
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ freigegebenVon: person.id }, { status: 'WORKING' }));
      expect(refusal(r)).to.deep.equal(['customProperties.freigegebenVon: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.']);
      // A standard property's literal on a BusinessAttribute: required MANDATORY brings ersatzwert.
      r = await send('POST', '/schemes/Kernbank/classifiers/Kunde/attributes', { _type: 'BusinessAttribute', label: unique('IBAN'), required: 'MANDATORY', customProperties: { personenbezogen: true, ersatzwert: 'unbekannt' } });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      r = await send('POST', '/schemes/Kernbank/classifiers/Kunde/attributes', { _type: 'BusinessAttribute', label: unique('BIC'), customProperties: { personenbezogen: false, ersatzwert: 'unbekannt' } });
      expect(refusal(r)).to.deep.equal(['customProperties.ersatzwert: The custom property is not declared for the type BusinessAttribute in the annotations of this tenant nor in the profiles its scheme names.']);
    });

    it('applies each tenant\'s own annotations', async () => {
      // The insurer's protection level is a number, and a literal of it brings a mandatory flag.
      let r = await send('POST', '/schemes/Leben/classifiers', { _type: 'Classifier', label: 'Vertrag', customProperties: { vertraulichkeit: 'intern' } }, 'Nordlicht');
      expect(refusal(r)).to.deep.equal(['customProperties.vertraulichkeit: The value must be a whole number.']);
      r = await send('POST', '/schemes/Leben/classifiers', { _type: 'Classifier', label: 'Vertrag', customProperties: { vertraulichkeit: 4 } }, 'Nordlicht');
      expect(refusal(r)).to.deep.equal(['customProperties.bafinMeldepflichtig: The property is mandatory.']);
      r = await send('POST', '/schemes/Leben/classifiers', { _type: 'Classifier', label: 'Vertrag', customProperties: { vertraulichkeit: 4, bafinMeldepflichtig: true, beitragsvolumen: 12.75, stichtag: '2023-12-31' } }, 'Nordlicht');
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      // The bank's stereotype means nothing there, and the insurer's system means nothing at the bank.
      r = await send('POST', '/schemes/Leben/classifiers', { _type: 'Classifier', label: 'Schaden', customProperties: { stereotyp: 'Entität' } }, 'Nordlicht');
      expect(refusal(r)).to.have.length(1);
      r = await send('POST', '/schemes/Kernbank/classifiers', classifier({ bestandssystem: 'VIVA' }));
      expect(refusal(r)).to.have.length(1);
      // The Labor tenant has no annotations: no custom property at all.
      expect((await send('POST', '/schemes', { _type: 'Scheme', label: 'Versuch' }, 'Labor')).status).to.equal(201);
      r = await send('POST', '/schemes', { _type: 'Scheme', label: 'Versuch 2', customProperties: { modellversion: '1' } }, 'Labor');
      expect(refusal(r)).to.have.length(1);
    });
  });

  describe('writes', () => {
    it('PUT and POST state all custom properties: the mandatory ones are needed; PATCH without them keeps what is stored', async () => {
      const created = await send('POST', '/schemes/Kernbank/classifiers', classifier({ dokumentation: 'alt' }));
      const path = `/classifiers/${created.body.id}`;
      let r = await send('PUT', path, { _type: 'Classifier', label: created.body.label });
      expect(refusal(r)).to.deep.equal(['customProperties.stereotyp: The property is mandatory.']);
      r = await send('PATCH', path, { title: 'Nur der Titel' });
      expect(r.status).to.equal(200);
      expect(r.body.customProperties).to.deep.equal({ stereotyp: 'Referenzdaten', dokumentation: 'alt' });
      // PATCH with customProperties replaces the whole set, as one property.
      r = await send('PATCH', path, { customProperties: { stereotyp: 'Referenzdaten', pflegendeStelle: organization.id } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.customProperties).to.deep.equal({ stereotyp: 'Referenzdaten', pflegendeStelle: organization.id });
      // null and {} state "none": the mandatory stereotype is missing then.
      for (const none of [null, {}]) {
        r = await send('PATCH', path, { customProperties: none });
        expect(refusal(r)).to.deep.equal(['customProperties.stereotyp: The property is mandatory.']);
      }
      // A value set to null is left out.
      r = await send('PATCH', path, { customProperties: { stereotyp: 'Referenzdaten', pflegendeStelle: null } });
      expect(r.body.customProperties).to.deep.equal({ stereotyp: 'Referenzdaten' });
    });

    it('checks a PATCH that creates an object as whole, on a single object and in a list', async () => {
      let r = await send('PATCH', '/schemes/Kernbank/classifiers', [{ _type: 'Classifier', label: unique('Neu') }]);
      expect(refusal(r)).to.deep.equal(['0.customProperties.stereotyp: The property is mandatory.']);
      const label = unique('Neu');
      r = await send('PATCH', `/schemes/Kernbank/classifiers/${encodeURIComponent(label)}`, { _type: 'Classifier' });
      expect(refusal(r)).to.deep.equal(['customProperties.stereotyp: The property is mandatory.']);
      r = await send('PATCH', `/schemes/Kernbank/classifiers/${encodeURIComponent(label)}`, { _type: 'Classifier', customProperties: { stereotyp: 'Entität' } });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
    });

    it('checks a PATCH that changes a literal bringing custom properties against what applies then', async () => {
      const created = await send('POST', '/schemes/Kernbank/classifiers', classifier({}));
      const path = `/classifiers/${created.body.id}`;
      // FINAL brings mandatory who and when: a PATCH of the status alone cannot leave them out.
      let r = await send('PATCH', path, { status: 'FINAL' });
      expect(refusal(r)).to.include('customProperties.freigabezeitpunkt: The property is mandatory.');
      expect((await send('GET', path, undefined)).body.status).to.equal('WORKING');
      r = await send('PATCH', path, { status: 'FINAL', customProperties: { stereotyp: 'Referenzdaten', freigabezeitpunkt: '2024-06-01T08:00:00Z', freigegebenVon: person.id } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      // Back to WORKING, the FINAL properties no longer apply: they must go with the change.
      r = await send('PATCH', path, { status: 'WORKING' });
      expect(refusal(r)).to.include('customProperties.freigegebenVon: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.');
      // The same in a list PATCH of existing objects.
      r = await send('PATCH', '/schemes/Kernbank/classifiers', [{ _type: 'Classifier', id: created.body.id, label: created.body.label, status: 'WORKING' }]);
      expect(r.status).to.equal(400);
      // A PATCH that leaves the literal as it is keeps the stored values unchecked.
      r = await send('PATCH', path, { title: 'Freigegeben' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    });

    it('checks every object of a list write, one lookup of the annotations for the whole list', async function () {
      this.timeout(120_000);
      await send('POST', '/schemes', { _type: 'Scheme', label: 'Massendaten' });
      const items = Array.from({ length: 2000 }, (_, i) => ({
        _type: 'Classifier', label: `Objekt ${i}`,
        customProperties: { stereotyp: 'Entität', anzahlDatensätze: i, datenmodellierer: [person.id], gepflegtSeit: 1717164000000 + i, quellsysteme: ['SAP CO'] },
      }));
      const queries: string[] = [];
      const listen = (q: { sql: string }) => queries.push(q.sql);
      t.service.storage.knex.on('query', listen);
      let r;
      try {
        r = await t.request(`/rest/${db}/schemes/Massendaten/classifiers`, { method: 'PUT', json: items });
      } finally {
        t.service.storage.knex.off('query', listen);
      }
      expect(r.status).to.equal(200);
      const list = await r.json();
      expect(list.total).to.equal(2000);
      const last = list._embedded.classifiers.find((c: Json) => c.label === 'Objekt 1999');
      expect(last.customProperties).to.deep.include({ anzahlDatensätze: 1999, gepflegtSeit: new Date(1717164001999).toISOString() });
      expect(queries.filter((q) => q.includes('.profiles')), 'lookups of the annotations').to.have.length(1);
      // The core checks its own references; custom references add one lookup for the whole list. Locks (the scheme's) are not lookups.
      expect(queries.filter((q) => q.includes('id = any(') && !/ for (key share|no key update|update)$/.test(q)).length, 'lookups of referenced objects').to.be.at.most(4);
      // One bad item refuses the whole list, naming it.
      items[1234].customProperties.anzahlDatensätze = -1.5 as never;
      items[77].customProperties = { stereotyp: 'Entität', tippfehler: 1 } as never;
      r = await t.request(`/rest/${db}/schemes/Massendaten/classifiers`, { method: 'PUT', json: items });
      expect(r.status).to.equal(400);
      expect((await r.json()).violations.map((v: { path: string }) => v.path)).to.deep.equal(['77.customProperties.tippfehler', '1234.customProperties.anzahlDatensätze']);
    });

    it('accepts a custom reference to an object the same list write creates', async () => {
      await send('POST', '/schemes', { _type: 'Scheme', label: 'Verweise' });
      const first = '0b4d6a52-6c1f-4e7e-9c55-3d8f7f1a0001';
      const r = await send('PUT', '/schemes/Verweise/classifiers', [
        { _type: 'Classifier', id: first, label: 'Konto', customProperties: { stereotyp: 'Referenzdaten' } },
        { _type: 'Classifier', label: 'Buchung', customProperties: { stereotyp: 'Referenzdaten', pflegendeStelle: first } },
      ]);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    });
  });

  describe('when the annotations change', () => {
    const v1 = [
      '# Labor, Fassung 1',
      'Scheme:',
      '  customProperties:',
      '    notiz: { baseType: TEXT }',
      '    reifegrad: { baseType: INTEGER, literals: [1, 2, 3] }',
      '',
    ].join('\n');

    it('keeps a value whose declaration was dropped; it is shown, a write without customProperties passes, sending it again is refused', async () => {
      await annotate('Labor', v1);
      const created = await send('POST', '/schemes', { _type: 'Scheme', label: 'Altbestand', customProperties: { notiz: 'vor der Änderung', reifegrad: 2 } }, 'Labor');
      expect(created.status).to.equal(201);
      const path = `/schemes/${created.body.id}`;
      await annotate('Labor', '# Labor, Fassung 2: notiz entfällt\nScheme:\n  customProperties:\n    reifegrad: { baseType: INTEGER, literals: [1, 2, 3] }\n');
      let r = await send('GET', path, undefined, 'Labor');
      expect(r.body.customProperties).to.deep.equal({ notiz: 'vor der Änderung', reifegrad: 2 });
      r = await send('PATCH', path, { description: 'geändert' }, 'Labor');
      expect(r.status).to.equal(200);
      expect(r.body.customProperties).to.deep.equal({ notiz: 'vor der Änderung', reifegrad: 2 });
      // Written back as read: the dropped value is sent again.
      const { _links: links, ...asRead } = r.body;
      void links;
      r = await send('PUT', path, asRead, 'Labor');
      expect(refusal(r)).to.deep.equal(['customProperties.notiz: The custom property is not declared for the type Scheme in the annotations of this tenant nor in the profiles its scheme names.']);
      r = await send('PATCH', path, { customProperties: { reifegrad: 3 } }, 'Labor');
      expect(r.status).to.equal(200);
      expect(r.body.customProperties).to.deep.equal({ reifegrad: 3 });
    });

    it('requires a custom property made mandatory later on create and whenever customProperties are written, not on other changes of old objects', async () => {
      await annotate('Labor', v1);
      const old = await send('POST', '/schemes', { _type: 'Scheme', label: 'Vorher' }, 'Labor');
      expect(old.status).to.equal(201);
      await annotate('Labor', v1.replace('notiz: { baseType: TEXT }', 'notiz: { baseType: TEXT, mandatory: true }'));
      const path = `/schemes/${old.body.id}`;
      let r = await send('PATCH', path, { title: 'Nur der Titel' }, 'Labor');
      expect(r.status).to.equal(200);
      r = await send('PATCH', path, { customProperties: { reifegrad: 1 } }, 'Labor');
      expect(refusal(r)).to.deep.equal(['customProperties.notiz: The property is mandatory.']);
      r = await send('PUT', path, { _type: 'Scheme', label: 'Vorher' }, 'Labor');
      expect(refusal(r)).to.deep.equal(['customProperties.notiz: The property is mandatory.']);
      r = await send('POST', '/schemes', { _type: 'Scheme', label: 'Nachher' }, 'Labor');
      expect(refusal(r)).to.deep.equal(['customProperties.notiz: The property is mandatory.']);
      r = await send('PATCH', path, { customProperties: { notiz: 'nachgetragen' } }, 'Labor');
      expect(r.status).to.equal(200);
    });

    it('takes effect at once when another instance stores new annotations (no restart, no upload here)', async () => {
      await annotate('Labor', v1);
      const tenant = (await send('GET', '/tenants/Labor', undefined)).body.id as string;
      let r = await send('POST', '/schemes', { _type: 'Scheme', label: 'Zweite Instanz', customProperties: { farbe: 'blau' } }, 'Labor');
      expect(r.status).to.equal(400);
      // As another instance of the service would: straight into the shared table.
      const revision = await new ProfileStore(t.service.storage.knex, db).save(tenant, 'annotations', {
        filename: 'andere-instanz.yaml', bytes: Buffer.from('Scheme:\n  customProperties:\n    farbe: { baseType: STRING }\n'),
        parsed: { Scheme: { customProperties: { farbe: { baseType: 'STRING' } } } },
      }, 'admin');
      expect(revision).to.be.a('number');
      r = await send('POST', '/schemes', { _type: 'Scheme', label: 'Zweite Instanz', customProperties: { farbe: 'blau' } }, 'Labor');
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      r = await send('POST', '/schemes', { _type: 'Scheme', label: 'Dritte', customProperties: { notiz: 'x' } }, 'Labor');
      expect(r.status).to.equal(400);
    });
  });
});

describe('profiles: two instances of the service on one PostgreSQL database', () => {
  before(function () {
    // The embedded database belongs to one process: instances share only a PostgreSQL server.
    if (!process.env.SERVICE_TEST_DATABASE_URL) this.skip();
  });

  it('an upload on one instance is in effect on the other for its next write', async () => {
    const a = await startService();
    const b = await startService();
    try {
      const db = await createDatabase(a);
      const write = (label: string, custom: Json) => b.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label, customProperties: custom } });
      expect((await write('Eins', { reifegrad: 1 })).status).to.equal(400);
      let r = await upload(a, db, 'annotations', Buffer.from('Scheme:\n  customProperties:\n    reifegrad: { baseType: INTEGER }\n'));
      expect(await r.text()).to.equal('true');
      expect((await write('Eins', { reifegrad: 1 })).status).to.equal(201);
      r = await upload(a, db, 'annotations', Buffer.from('Scheme:\n  customProperties:\n    reifegrad: { baseType: STRING }\n'));
      expect(await r.text()).to.equal('true');
      expect((await write('Zwei', { reifegrad: 2 })).status).to.equal(400);
      expect((await write('Zwei', { reifegrad: 'hoch' })).status).to.equal(201);
      // And the other way round: the download on one shows the upload on the other.
      const d = await b.request(`/api/${db}/profiles/annotations/download`);
      expect(await d.text()).to.contain('baseType: STRING');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
