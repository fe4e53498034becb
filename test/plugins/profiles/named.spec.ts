/**
 * Profiles by name (decisions §7.5, §7.1): administrators create and delete
 * named profiles (annotations) of their tenant; the tenant's annotations
 * answer to its label too; a scheme's `profiles` apply those annotations to
 * the objects of the scheme on top of the tenant's, and the annotations of
 * a model kind (`DataDomainModel`) to the schemes of that kind — on REST
 * writes and in `GET /api/<db>/metamodel?scheme=`. Attacks from other
 * tenants and lower access levels change nothing.
 */
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { createTenant, createUser, secret } from '../../auth/fixtures.ts';
import { schemaOf } from '../../../runtime/storage/migrations.ts';
import { download, upload } from './fixtures.ts';

type Json = Record<string, any>;

describe('profiles: profiles by name, a scheme\'s profiles, annotations of model kinds', () => {
  let t: TestService;
  let db: string;
  const N = 'Nordlicht';
  const S = 'Südwind';
  const admin = { loginId: 'nord-admin', password: secret('Nord-Admin-Passwort-1') };
  const editor = { loginId: 'nord-editor', password: secret('Nord-Editor-Passwort-2') };
  const reader = { loginId: 'nord-leser', password: secret('Nord-Leser-Passwort-3') };
  const southAdmin = { loginId: 'sued-admin', password: secret('Sued-Admin-Passwort-4') };

  const inTenant = (tenant: string) => ({ 'service-tenant': tenant });

  async function api(method: string, path: string, o: { json?: unknown; tenant?: string; as?: typeof admin } = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const r = await t.request(`/api/${db}${path}`, { method, ...(o.json !== undefined ? { json: o.json } : {}), headers: inTenant(o.tenant ?? N), auth: o.as });
    const text = await r.text();
    return { status: r.status, body: text && r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, headers: r.headers };
  }

  async function rest(method: string, path: string, json?: unknown, tenant = N): Promise<{ status: number; body: Json }> {
    const r = await t.request(`/rest/${db}${path}`, { method, ...(json !== undefined ? { json } : {}), headers: inTenant(tenant) });
    return { status: r.status, body: r.status === 204 ? {} : await r.json() };
  }

  async function put(name: string, yaml: string, tenant = N) {
    const r = await upload(t, db, name, Buffer.from(yaml), { tenant });
    expect(r.status, await r.clone().text()).to.equal(200);
    return r.json();
  }

  const messages = (r: { body: Json }) => (r.body.violations as { path: string; message: string }[]).map((v) => `${v.path}: ${v.message}`);
  const names = async (tenant = N, as?: typeof admin) => ((await api('GET', '/profiles', { tenant, as })).body as Json[]).map((p) => p.name);

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createTenant(t, db, N);
    await createTenant(t, db, S);
    await createUser(t, db, { ...admin, accessLevel: 'ADMINISTRATOR', tenant: N });
    await createUser(t, db, { ...editor, accessLevel: 'EDITOR', tenant: N });
    await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY', tenant: N });
    await createUser(t, db, { ...southAdmin, accessLevel: 'ADMINISTRATOR', tenant: S });
  });
  after(() => t.close());

  describe('creating, listing, deleting', () => {
    it('creates a named profile: 201 with Location and a description; it is listed and downloads as an empty document', async () => {
      const r = await api('POST', '/profiles', { json: { name: 'Finanzen' }, as: admin });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.headers.get('location')).to.equal(`/api/${db}/profiles/Finanzen`);
      expect(r.body).to.deep.include({ name: 'Finanzen', kind: 'annotations', origin: 'named', filename: 'Finanzen.yaml', modifiedBy: admin.loginId });
      expect(r.body.dateModified).to.be.a('number');
      expect((await api('GET', '/profiles/Finanzen')).body).to.deep.equal(r.body);
      const listed = (await api('GET', '/profiles', { as: reader })).body as Json[];
      expect(listed.map((p) => [p.name, p.origin, p.kind, p.aliasOf ?? null])).to.deep.equal([
        ['standard-annotations', 'standard', 'annotations', null],
        ['standard-profile', 'standard', 'profile', null],
        ['annotations', 'tenant', 'annotations', null],
        ['profile', 'tenant', 'profile', null],
        [N, 'tenant', 'annotations', 'annotations'],
        ['Finanzen', 'named', 'annotations', null],
      ]);
      const d = await download(t, db, 'Finanzen', { tenant: N, as: reader });
      expect(d.status).to.equal(200);
      expect(d.headers.get('content-disposition')).to.equal('attachment; filename="Finanzen.yaml"');
      const initial = Buffer.from(await d.arrayBuffer());
      expect(initial.toString()).to.match(/^# The named profile Finanzen \(annotations\)/);
      // Uploading exactly the initial document changes nothing.
      expect(await (await upload(t, db, 'Finanzen', initial, { tenant: N, as: admin })).json()).to.equal(false);
      const yaml = '# Finanzen\nClassifier:\n  customProperties:\n    kostenstelle: { baseType: STRING }\n';
      expect(await (await upload(t, db, 'Finanzen', Buffer.from(yaml), { tenant: N, as: admin, filename: 'fin.yaml' })).json()).to.equal(true);
      const again = await download(t, db, 'Finanzen', { tenant: N });
      expect(await again.text()).to.equal(yaml);
      expect(again.headers.get('content-disposition')).to.equal('attachment; filename="fin.yaml"');
    });

    it('refuses bad names (400), names taken by standard or tenant profiles in any case (409), and a second creation (409)', async () => {
      for (const body of [{ name: '' }, { name: '-x' }, { name: 'a/b' }, { name: 'mit Leerzeichen' }, { name: 'x'.repeat(101) }, { name: 7 }, {}, { name: 'ok', farbe: 'rot' }, ['Finanzen']]) {
        const r = await api('POST', '/profiles', { json: body, as: admin });
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.violations, JSON.stringify([body, r.body])).to.have.length.greaterThan(0);
      }
      // Bodies that are no JSON object or array are refused by the JSON reader (400) before they are looked at.
      for (const body of ['Finanzen', null]) expect((await api('POST', '/profiles', { json: body })).status).to.equal(400);
      expect(messages(await api('POST', '/profiles', { json: { name: '-x' } }))).to.deep.equal([
        'name: A profile name has 1 to 100 characters: letters, digits, _, - and ., starting with a letter or digit.',
      ]);
      for (const name of ['annotations', 'Profile', 'STANDARD-annotations', 'standard-profile', N, N.toUpperCase()]) {
        const r = await api('POST', '/profiles', { json: { name } });
        expect(r.status, name).to.equal(409);
        expect(r.body.violations[0].path).to.equal('name');
      }
      const twice = await api('POST', '/profiles', { json: { name: 'Finanzen' } });
      expect(twice.status).to.equal(409);
      expect(messages(twice)).to.deep.equal(['name: The profile Finanzen exists already.']);
      // Letters of any language and digits; another case is another name.
      expect((await api('POST', '/profiles', { json: { name: 'Prüfung_2024.v1-a' } })).status).to.equal(201);
      expect((await api('POST', '/profiles', { json: { name: 'finanzen' } })).status).to.equal(201);
      expect((await api('DELETE', '/profiles/finanzen')).status).to.equal(204);
      expect((await download(t, db, 'Prüfung_2024.v1-a', { tenant: N })).status).to.equal(200);
    });

    it('upload to a name never created stays 404; deletion is 204 and the name is gone; the standard and tenant ones cannot be deleted', async () => {
      const yaml = 'Classifier: { label: Test }\n';
      expect((await upload(t, db, 'Nie-angelegt', Buffer.from(yaml), { tenant: N })).status).to.equal(404);
      expect((await api('POST', '/profiles', { json: { name: 'Kurzlebig' } })).status).to.equal(201);
      await put('Kurzlebig', yaml);
      expect((await api('DELETE', '/profiles/Kurzlebig', { as: admin })).status).to.equal(204);
      expect((await api('DELETE', '/profiles/Kurzlebig')).status).to.equal(404);
      expect((await upload(t, db, 'Kurzlebig', Buffer.from(yaml), { tenant: N })).status).to.equal(404);
      expect((await download(t, db, 'Kurzlebig', { tenant: N })).status).to.equal(404);
      expect((await api('GET', '/profiles/Kurzlebig')).status).to.equal(404);
      expect(await names()).to.not.include('Kurzlebig');
      for (const name of ['standard-annotations', 'standard-profile', 'annotations', 'profile', N]) {
        const r = await api('DELETE', `/profiles/${encodeURIComponent(name)}`, { as: admin });
        expect(r.status, name).to.equal(403);
      }
      expect((await download(t, db, 'annotations', { tenant: N })).status).to.equal(200);
    });

    it('refuses uploads of a wrong shape to a named profile as to annotations (400 with line and column); a profile-only key too', async () => {
      expect((await api('POST', '/profiles', { json: { name: 'Streng' } })).status).to.equal(201);
      const r = await upload(t, db, 'Streng', Buffer.from('Classifier:\n  customProperties:\n    x: { baseType: ZAHL }\n'), { tenant: N });
      expect(r.status).to.equal(400);
      expect((await r.json()).violations[0].message).to.match(/^Line 3, column 20: the base type ZAHL is unknown/);
      // Statuses belong into a tenant's profile; a named profile holds annotations.
      expect((await upload(t, db, 'Streng', Buffer.from('statuses: { NEU: {} }\n'), { tenant: N })).status).to.equal(400);
    });
  });

  describe('who may do what', () => {
    it('editors and readers may list and download, not create, upload or delete (403, nothing changes)', async () => {
      expect((await api('POST', '/profiles', { json: { name: 'Angriff' } })).status).to.equal(201);
      for (const who of [editor, reader]) {
        expect((await api('POST', '/profiles', { json: { name: 'Anderes' }, as: who })).status, who.loginId).to.equal(403);
        expect((await api('DELETE', '/profiles/Angriff', { as: who })).status, who.loginId).to.equal(403);
        expect((await upload(t, db, 'Angriff', Buffer.from('Classifier: { label: X }\n'), { tenant: N, as: who })).status, who.loginId).to.equal(403);
        expect((await download(t, db, 'Angriff', { tenant: N, as: who })).status).to.equal(200);
        expect(await names(N, who)).to.include('Angriff');
      }
      expect(await names()).to.not.include('Anderes');
      expect(await (await download(t, db, 'Angriff', { tenant: N })).text()).to.match(/^# The named profile Angriff/);
    });

    it('another tenant\'s administrator never sees, reads, changes or deletes a tenant\'s named profiles: 404', async () => {
      const r = await t.request(`/api/${db}/profiles`, { auth: southAdmin });
      expect(r.status).to.equal(200);
      const seen = (await r.json() as Json[]).map((p) => p.name);
      expect(seen).to.include(S).and.not.include('Angriff').and.not.include('Finanzen').and.not.include(N);
      expect((await t.request(`/api/${db}/profiles/Angriff`, { auth: southAdmin })).status).to.equal(404);
      expect((await t.request(`/api/${db}/profiles/Angriff/download`, { auth: southAdmin })).status).to.equal(404);
      expect((await upload(t, db, 'Angriff', Buffer.from('Classifier: { label: X }\n'), { as: southAdmin })).status).to.equal(404);
      expect((await t.request(`/api/${db}/profiles/Angriff`, { method: 'DELETE', auth: southAdmin })).status).to.equal(404);
      // Nor through another tenant's label: that is a profile of that tenant only.
      expect((await t.request(`/api/${db}/profiles/${encodeURIComponent(N)}/download`, { auth: southAdmin })).status).to.equal(404);
      // Asking for the other tenant is refused at sign-in.
      expect((await t.request(`/api/${db}/profiles/Angriff/download`, { auth: southAdmin, headers: inTenant(N) })).status).to.be.oneOf([401, 403]);
      // The same name in the other tenant is another profile.
      expect((await t.request(`/api/${db}/profiles`, { method: 'POST', json: { name: 'Angriff' }, auth: southAdmin })).status).to.equal(201);
      expect((await upload(t, db, 'Angriff', Buffer.from('Classifier: { label: Süd }\n'), { as: southAdmin })).status).to.equal(200);
      expect(await (await download(t, db, 'Angriff', { tenant: N })).text()).to.match(/^# The named profile Angriff/);
    });
  });

  describe('the tenant\'s label', () => {
    it('names the tenant\'s annotations: the same bytes, the same upload; after a rename, the new label', async () => {
      await put(N, '# über das Label\nOrganization:\n  customProperties:\n    kürzel: {}\n');
      expect(await (await download(t, db, 'annotations', { tenant: N })).text()).to.equal('# über das Label\nOrganization:\n  customProperties:\n    kürzel: {}\n');
      expect(await (await download(t, db, N, { tenant: N })).text()).to.contain('über das Label');
      expect((await rest('POST', '/organizations', { _type: 'Organization', label: 'Org Label', customProperties: { kürzel: 'OL' } })).status).to.equal(201);
      expect((await api('GET', `/profiles/${encodeURIComponent(N)}`)).body).to.deep.include({ name: N, origin: 'tenant', aliasOf: 'annotations' });
      expect((await rest('PATCH', `/tenants/${encodeURIComponent(N)}`, { label: 'Nordstern' }, N)).status).to.equal(200);
      expect((await download(t, db, N, { tenant: 'Nordstern' })).status).to.equal(404);
      expect(await (await download(t, db, 'Nordstern', { tenant: 'Nordstern' })).text()).to.contain('über das Label');
      expect((await rest('PATCH', `/tenants/Nordstern`, { label: N }, 'Nordstern')).status).to.equal(200);
      expect(await (await download(t, db, N, { tenant: N })).text()).to.contain('über das Label');
    });
  });

  describe('a scheme\'s profiles', () => {
    before(async () => {
      expect((await api('POST', '/profiles', { json: { name: 'Risiko' } })).status).to.equal(201);
      await put('Finanzen', [
        'Classifier:',
        '  label: Finanzobjekt',
        '  customProperties:',
        '    kostenstelle: { baseType: STRING, label: Kostenstelle }',
        '    prüfjahr: { baseType: INTEGER }',
        'BusinessAttribute:',
        '  customProperties:',
        '    einheit: {}',
        '',
      ].join('\n'));
      await put('Risiko', [
        'Classifier:',
        '  label: Risikoobjekt',
        '  customProperties:',
        '    prüfjahr: { baseType: STRING, label: Prüfjahr (Text) }',
        '    risikoklasse: { baseType: ENUM, literals: [A, B, C], mandatory: true }',
        'DataDomainModel:',
        '  extends: Scheme',
        '  label: Fachdomänenmodell',
        '  customProperties:',
        '    domäne: { baseType: STRING }',
        '',
      ].join('\n'));
    });

    it('must name profiles of the tenant: an unknown name is a 400 naming it', async () => {
      const r = await rest('POST', '/schemes', { _type: 'Scheme', label: 'Falsch', profiles: ['Finanzen', 'Gibtsnicht', 'Angriff'] });
      expect(messages(r)).to.deep.equal(['profiles: There is no profile Gibtsnicht in this tenant.']);
      // Another tenant's profile is unknown here; the tenant's label is a name for the profile calls only.
      expect(messages(await rest('POST', '/schemes', { _type: 'Scheme', label: 'Falsch', profiles: [N] }))).to.deep.equal([`profiles: There is no profile ${N} in this tenant.`]);
      expect((await rest('POST', '/schemes', { _type: 'Scheme', label: 'Falsch', profiles: [42] })).status).to.equal(400);
      expect((await rest('GET', '/schemes/Falsch')).status).to.equal(404);
      const southScheme = await rest('POST', '/schemes', { _type: 'Scheme', label: 'Süd', profiles: ['Finanzen'] }, S);
      expect(messages(southScheme)).to.deep.equal(['profiles: There is no profile Finanzen in this tenant.']);
    });

    it('applies the named profiles to the objects of the scheme, on top of the tenant\'s; elsewhere they are refused', async () => {
      expect((await rest('POST', '/schemes', { _type: 'Scheme', label: 'Kasse', profiles: ['standard-annotations', 'Finanzen'] })).status).to.equal(201);
      expect((await rest('POST', '/schemes', { _type: 'Scheme', label: 'Ohne' })).status).to.equal(201);
      const inKasse = await rest('POST', '/schemes/Kasse/classifiers', { _type: 'Classifier', label: 'Konto', customProperties: { kostenstelle: 'K-1', prüfjahr: 2024 } });
      expect(inKasse.status, JSON.stringify(inKasse.body)).to.equal(201);
      expect(inKasse.body.customProperties).to.deep.equal({ kostenstelle: 'K-1', prüfjahr: 2024 });
      const elsewhere = await rest('POST', '/schemes/Ohne/classifiers', { _type: 'Classifier', label: 'Konto', customProperties: { kostenstelle: 'K-1' } });
      expect(messages(elsewhere)).to.deep.equal(['customProperties.kostenstelle: The custom property is not declared for the type Classifier in the annotations of this tenant nor in the profiles its scheme names.']);
      // The tenant's own still apply in the scheme (kürzel is the tenant's, for organizations only).
      expect((await rest('POST', '/schemes/Kasse/classifiers', { _type: 'Classifier', label: 'Nein', customProperties: { kürzel: 'x' } })).status).to.equal(400);
      // A business attribute placed through its owner reference belongs to the classifier's scheme; one placed under a path, too.
      const attribute = await rest('POST', '/attributes', { _type: 'BusinessAttribute', label: 'Saldo', hasDomain: inKasse.body.id, customProperties: { einheit: 'EUR' } });
      expect(attribute.status, JSON.stringify(attribute.body)).to.equal(201);
      expect(attribute.body.customProperties).to.deep.equal({ einheit: 'EUR' });
      const outside = (await rest('POST', '/schemes/Ohne/classifiers', { _type: 'Classifier', label: 'Andere' })).body;
      expect((await rest('POST', '/attributes', { _type: 'BusinessAttribute', label: 'Saldo', hasDomain: outside.id, customProperties: { einheit: 'EUR' } })).status).to.equal(400);
      expect((await rest('POST', `/classifiers/${outside.id}/attributes`, { _type: 'BusinessAttribute', label: 'Saldo', customProperties: { einheit: 'EUR' } })).status).to.equal(400);
      expect((await rest('POST', `/classifiers/${inKasse.body.id}/attributes`, { _type: 'BusinessAttribute', label: 'Haben', customProperties: { einheit: 'EUR' } })).status).to.equal(201);
    });

    it('later profiles win for a definition of the same custom property; their custom properties are united', async () => {
      expect((await rest('POST', '/schemes', { _type: 'Scheme', label: 'Beides', profiles: ['Finanzen', 'Risiko'] })).status).to.equal(201);
      const integer = await rest('POST', '/schemes/Beides/classifiers', { _type: 'Classifier', label: 'Eins', customProperties: { kostenstelle: 'K', prüfjahr: 2024, risikoklasse: 'A' } });
      expect(messages(integer)).to.deep.equal(['customProperties.prüfjahr: The value must be text of at most 1000 characters.']);
      const text = await rest('POST', '/schemes/Beides/classifiers', { _type: 'Classifier', label: 'Eins', customProperties: { kostenstelle: 'K', prüfjahr: '2024', risikoklasse: 'A' } });
      expect(text.status, JSON.stringify(text.body)).to.equal(201);
      // Risiko's mandatory custom property is required in this scheme only.
      expect(messages(await rest('POST', '/schemes/Beides/classifiers', { _type: 'Classifier', label: 'Zwei' }))).to.deep.equal(['customProperties.risikoklasse: The property is mandatory.']);
      expect((await rest('POST', '/schemes/Kasse/classifiers', { _type: 'Classifier', label: 'Zwei' })).status).to.equal(201);
    });

    it('a change of the scheme\'s profiles, an upload and a deletion are in effect for the next write', async () => {
      expect((await rest('POST', '/schemes', { _type: 'Scheme', label: 'Wechsel', profiles: [] })).status).to.equal(201);
      const write = () => rest('PUT', '/schemes/Wechsel/classifiers/Objekt', { _type: 'Classifier', customProperties: { kostenstelle: 'W' } });
      expect((await write()).status).to.equal(400);
      expect((await rest('PATCH', '/schemes/Wechsel', { profiles: ['Finanzen'] })).status).to.equal(200);
      expect((await write()).status).to.equal(201);
      await put('Finanzen', 'Classifier:\n  customProperties:\n    anderes: {}\n');
      expect((await write()).status).to.equal(400);
      const deleted = await api('DELETE', '/profiles/Finanzen');
      expect(deleted.status).to.equal(409);
      expect(messages(deleted)).to.deep.equal(['name: The profile Finanzen cannot be deleted: the schemes Beides, Kasse, Wechsel name it under profiles.']);
      expect((await rest('PATCH', '/schemes/Wechsel', { profiles: null })).status).to.equal(200);
      expect((await rest('PUT', '/schemes/Wechsel/classifiers/Objekt', { _type: 'Classifier', customProperties: { anderes: 'x' } })).status).to.equal(400);
      await put('Finanzen', 'Classifier:\n  customProperties:\n    kostenstelle: { baseType: STRING, label: Kostenstelle }\n    prüfjahr: { baseType: INTEGER }\n');
    });

    it('a model kind\'s annotations apply to the schemes of that kind, on top of Scheme\'s', async () => {
      await put('annotations', 'Scheme:\n  customProperties:\n    modellnummer: { baseType: STRING }\nDataDomainModel:\n  customProperties:\n    fachbereich: { baseType: STRING }\n');
      const domain = await rest('POST', '/schemes', { _type: 'Scheme', label: 'Domäne', modelType: 'DataDomainModel', customProperties: { modellnummer: 'M1', fachbereich: 'Statistik' } });
      expect(domain.status, JSON.stringify(domain.body)).to.equal(201);
      const other = await rest('POST', '/schemes', { _type: 'Scheme', label: 'Kein Domänenmodell', modelType: 'DataModel', customProperties: { modellnummer: 'M2', fachbereich: 'Statistik' } });
      expect(messages(other)).to.deep.equal(['customProperties.fachbereich: The custom property is not declared for the type Scheme in the annotations of this tenant nor in the profiles its scheme names.']);
      // The kind's entry of a profile the scheme names applies to that scheme itself.
      expect((await rest('POST', '/schemes', { _type: 'Scheme', label: 'Risikodomäne', modelType: 'DataDomainModel', profiles: ['Risiko'], customProperties: { domäne: 'Kredit' } })).status).to.equal(201);
      expect((await rest('POST', '/schemes', { _type: 'Scheme', label: 'Risikomodell', modelType: 'DataModel', profiles: ['Risiko'], customProperties: { domäne: 'Kredit' } })).status).to.equal(400);
      // A change of kind changes what applies: a PATCH that sends the custom properties is checked against the new kind.
      expect((await rest('PATCH', '/schemes/Domäne', { modelType: 'DataModel', customProperties: { modellnummer: 'M1', fachbereich: 'Statistik' } })).status).to.equal(400);
    });

    it('the metamodel call shows a scheme\'s view with ?scheme=: its profiles\' annotations and its kind\'s', async () => {
      const kasse = (await rest('GET', '/schemes/Beides')).body;
      const plain = await api('GET', '/metamodel');
      expect(plain.status).to.equal(200);
      const classifierOf = (m: Json) => m.types.Classifier;
      const prop = (type: Json, name: string) => type.properties.find((p: Json) => p.name === name);
      expect(prop(classifierOf(plain.body), 'kostenstelle')).to.equal(undefined);
      const view = await api('GET', `/metamodel?scheme=${kasse.id}`);
      expect(view.status).to.equal(200);
      expect(classifierOf(view.body).labels.de).to.equal('Risikoobjekt');
      expect(prop(classifierOf(view.body), 'kostenstelle')).to.deep.include({ custom: true, baseType: 'STRING', label: 'Kostenstelle' });
      expect(prop(classifierOf(view.body), 'prüfjahr')).to.deep.include({ baseType: 'STRING', label: 'Prüfjahr (Text)' });
      expect(prop(classifierOf(view.body), 'risikoklasse')).to.deep.include({ baseType: 'ENUM', mandatory: true });
      expect(view.headers.get('etag')).to.not.equal(plain.headers.get('etag'));
      // The kind's labels and custom properties, for a scheme of that kind.
      const domain = (await rest('GET', '/schemes/Risikodomäne')).body;
      const kindView = (await api('GET', `/metamodel?scheme=${domain.id}`)).body;
      expect(kindView.types.Scheme.labels.de).to.equal('Fachdomänenmodell');
      expect(view.body.types.Scheme.labels.de).to.not.equal('Fachdomänenmodell');
      expect(prop(kindView.types.Scheme, 'domäne')).to.deep.include({ custom: true });
      expect(prop(kindView.types.Scheme, 'fachbereich')).to.deep.include({ custom: true });
      expect(prop(view.body.types.Scheme, 'fachbereich')).to.equal(undefined);
      // Revalidation; an upload of a profile the scheme names changes the tag.
      const etag = view.headers.get('etag')!;
      expect((await t.request(`/api/${db}/metamodel?scheme=${kasse.id}`, { headers: { ...inTenant(N), 'if-none-match': etag } })).status).to.equal(304);
      await put('Risiko', 'Classifier:\n  label: Risiko neu\n');
      const changed = await api('GET', `/metamodel?scheme=${kasse.id}`);
      expect(changed.headers.get('etag')).to.not.equal(etag);
      expect(classifierOf(changed.body).labels.de).to.equal('Risiko neu');
      // A key that is no scheme of the tenant: 404; not a key: 400.
      const org = (await rest('POST', '/organizations', { _type: 'Organization', label: 'Keine Domäne' })).body;
      expect((await api('GET', `/metamodel?scheme=${org.id}`)).status).to.equal(404);
      expect((await api('GET', `/metamodel?scheme=${kasse.id}`, { tenant: S, as: southAdmin })).status).to.equal(404);
      expect((await api('GET', '/metamodel?scheme=kasse')).status).to.equal(400);
    });
  });

  describe('storage', () => {
    it('keeps profiles with the tenant: a deleted tenant\'s named profiles go with it', async () => {
      await createTenant(t, db, 'Vergänglich');
      expect((await api('POST', '/profiles', { json: { name: 'Weg' }, tenant: 'Vergänglich' })).status).to.equal(201);
      const tenant = (await rest('GET', `/tenants/${encodeURIComponent('Vergänglich')}`, undefined, 'Vergänglich')).body;
      const count = async () => Number((await t.service.storage.knex.raw(`select count(*) as n from "${schemaOf(db)}".profiles where tenant = ?`, [tenant.id])).rows[0].n);
      expect(await count()).to.equal(1);
      expect((await rest('DELETE', `/tenants/${encodeURIComponent('Vergänglich')}`, undefined, N)).status).to.equal(204);
      expect(await count()).to.equal(0);
    });
  });
});
