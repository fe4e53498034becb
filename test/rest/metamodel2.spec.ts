/**
 * The second edition of the metamodel (decisions §7.1, first slice): the new
 * types at their places in the hierarchy, the properties every asset and
 * some types gained, the model kind of a scheme, reference values' time
 * series (a list of records), general derivations, usages and deployments
 * that go with what they name, the new views and columns of the query
 * interface, and a database written before the change that keeps working.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { createDatabase, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { createUser, secret } from '../auth/fixtures.ts';
import { rows } from '../plugins/query/fixtures.ts';

type Json = Record<string, any>;

const ROOT = new URL('../..', import.meta.url).pathname;

async function send(t: TestService, method: string, path: string, json?: unknown): Promise<{ status: number; body: Json }> {
  const r = await t.request(path, { method, json });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : {} };
}

/** Writes and expects success; the object written. */
async function ok(t: TestService, method: string, path: string, json?: unknown): Promise<Json> {
  const r = await send(t, method, path, json);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).to.be.within(200, 299);
  return r.body;
}

/** The violations of a refused write. */
async function refused(t: TestService, method: string, path: string, json: unknown): Promise<{ path: string; message: string }[]> {
  const r = await send(t, method, path, json);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).to.equal(400);
  return r.body.violations;
}

describe('metamodel, second edition (decisions §7.1)', function () {
  this.timeout(120_000);
  let t: TestService;
  let db: string;
  let rest: string;
  const o: Record<string, Json> = {};

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    rest = `/rest/${db}`;
  });
  after(() => t?.close());

  describe('the new types at their places', () => {
    it('a scheme has a model kind, business data model by default, one of the ten kinds only', async () => {
      o.glossary = await ok(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'Glossar' });
      expect(o.glossary).to.include({ _type: 'Scheme', modelType: 'BusinessDataModel' });
      o.catalog = await ok(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'Datenkatalog', modelType: 'DataCatalog' });
      expect(o.catalog).to.include({ _type: 'Scheme', modelType: 'DataCatalog' });
      const [v] = await refused(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'X', modelType: 'DataLake' });
      expect(v.path).to.equal('modelType');
      expect(v.message).to.contain('SystemCatalog');
    });

    it('datasets in collections, with their properties and distributions', async () => {
      o.folder = await ok(t, 'POST', `${rest}/schemes/Datenkatalog/collections`, { _type: 'Collection', label: 'Statistik', stereotype: 'organizationalUnit' });
      expect(o.folder.stereotype).to.equal('organizationalUnit');
      const dataset = {
        _type: 'Dataset', label: 'Bevölkerung', accrualPeriodicity: 'jährlich', spatial: 'Kanton', usageRestriction: 'keine',
        retentionPeriod: '10 Jahre', retentionJustification: 'Gesetz', archiveDetails: 'Staatsarchiv', archiveJustification: 'archivwürdig',
        historicizationType: 'Stichtag', stereotype: 'OGD', tags: ['Statistik', 'Bevölkerung'], synonyms: ['Einwohner'],
        favorite: true, locked: false, readOnly: true,
      };
      o.dataset = await ok(t, 'POST', `${rest}/schemes/Datenkatalog/collections/Statistik/datasets`, dataset);
      expect(o.dataset).to.deep.include({ ...dataset, parentId: o.folder.id });
      o.other = await ok(t, 'POST', `${rest}/schemes/Datenkatalog/collections/Statistik/datasets`, { _type: 'Dataset', label: 'Haushalte' });
      for (const label of ['CSV', 'API']) {
        const d = { _type: 'Distribution', label, accessURL: `https://example.org/${label}`, downloadURL: `https://example.org/${label}.csv`, format: label, mediaType: 'text/csv' };
        expect(await ok(t, 'POST', `${rest}/schemes/Datenkatalog/collections/Statistik/datasets/Bevölkerung/distributions`, d)).to.deep.include(d);
      }
      const read = await ok(t, 'GET', `${rest}/schemes/Datenkatalog/collections/Statistik/datasets/Bevölkerung/distributions`);
      expect(read._embedded.distributions.map((d: Json) => d.label).sort()).to.deep.equal(['API', 'CSV']);
      const again = await ok(t, 'GET', `${rest}/datasets/${o.dataset.id}`);
      expect(again).to.deep.include(dataset);
      // Linked to the collection it stands in, and to its distributions now that it has some (decisions §7.3).
      expect(again._links).to.include.keys('inCollection', 'distributions');
      // Datasets stand in collections, not directly in a scheme; a tag is text; unknown properties stay refused.
      expect((await send(t, 'POST', `${rest}/schemes/Datenkatalog/datasets`, { _type: 'Dataset', label: 'X' })).status).to.equal(404);
      expect((await refused(t, 'POST', `${rest}/schemes/Datenkatalog/collections/Statistik/datasets`, { _type: 'Dataset', label: 'X', tags: ['a', 7] }))[0].path).to.equal('tags.1');
      expect((await refused(t, 'POST', `${rest}/schemes/Datenkatalog/collections/Statistik/datasets`, { _type: 'Dataset', label: 'X', accrualPeriodicty: 'täglich' }))[0].path).to.equal('accrualPeriodicty');
    });

    it('systems in system catalogs, with subsystems', async () => {
      await ok(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'Systeme', modelType: 'SystemCatalog' });
      o.system = await ok(t, 'POST', `${rest}/schemes/Systeme/systems`, { _type: 'System', label: 'Steuerportal', physicalName: 'STP' });
      o.subsystem = await ok(t, 'POST', `${rest}/schemes/Systeme/systems/Steuerportal/systems`, { _type: 'System', label: 'Datenbank', physicalName: 'STP_DB' });
      expect(o.subsystem).to.include({ parentId: o.system.id, physicalName: 'STP_DB' });
      expect((await ok(t, 'GET', `${rest}/schemes/Systeme/systems/Steuerportal/systems/Datenbank`)).id).to.equal(o.subsystem.id);
    });

    it('data models: data objects, UML classes with attributes and compositions, datatypes', async () => {
      await ok(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'Datenmodell', modelType: 'DataModel' });
      const base = `${rest}/schemes/Datenmodell`;
      o.table = await ok(t, 'POST', `${base}/dataObjects`, { _type: 'DataObject', label: 'T_PERSON', physicalName: 'T_PERSON' });
      o.person = await ok(t, 'POST', `${base}/dataObjects`, { _type: 'UmlClass', label: 'Person' });
      o.address = await ok(t, 'POST', `${base}/dataObjects`, { _type: 'UmlClass', label: 'Adresse' });
      o.string = await ok(t, 'POST', `${base}/datatypes`, { _type: 'Datatype', label: 'String50' });
      o.name = await ok(t, 'POST', `${base}/dataObjects/Person/attributes`, { _type: 'UmlAttribute', label: 'name', hasRange: o.string.id, order: 1 });
      expect(o.name).to.include({ hasDomain: o.person.id, hasRange: o.string.id, order: 1, parentId: o.person.id });
      o.composition = await ok(t, 'POST', `${base}/dataObjects/Person/compositions`, { _type: 'Composition', hasRange: o.address.id });
      expect(o.composition).to.include({ hasDomain: o.person.id, hasRange: o.address.id, label: o.address.id });
      // A class is a data object: both lists of the scheme and the plural of each type reach it.
      expect((await ok(t, 'GET', `${base}/dataObjects`)).total).to.equal(3);
      expect((await ok(t, 'GET', `${rest}/umlClasses/${o.person.id}`)).label).to.equal('Person');
      expect((await refused(t, 'POST', `${base}/dataObjects/Person/compositions`, { _type: 'Composition', hasRange: o.string.id }))[0].path).to.equal('hasRange');
    });

    it('reference objects and reference values with a time series; a bad record is a 400 naming its field', async () => {
      await ok(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'Referenzdaten', modelType: 'ReferenceDataModel' });
      o.law = await ok(t, 'POST', `${rest}/schemes/Referenzdaten/enumerations`, { _type: 'ReferenceObject', label: 'Steuergesetz' });
      const timeSeries = [
        { code: 'StG', shortText: 'Steuergesetz', validFrom: Date.UTC(2001, 0, 1), validTo: Date.UTC(2019, 11, 31) },
        { code: 'StG-2020', shortText: 'Steuergesetz 2020', validFrom: Date.UTC(2020, 0, 1) },
      ];
      const path = `${rest}/schemes/Referenzdaten/enumerations/Steuergesetz/literals`;
      o.value = await ok(t, 'POST', path, { _type: 'ReferenceValue', label: 'StG', code: 'StG', order: 1, timeSeries });
      expect(o.value).to.deep.include({ _type: 'ReferenceValue', timeSeries, order: 1, parentId: o.law.id });
      expect((await ok(t, 'GET', `${path}/StG`)).timeSeries).to.deep.equal(timeSeries);
      // A plain literal stands beside it; a reference object is an enumeration of the scheme.
      await ok(t, 'POST', path, { _type: 'Literal', label: 'alt', order: 2 });
      expect((await ok(t, 'GET', `${rest}/schemes/Referenzdaten/enumerations`))._embedded.enumerations[0]._type).to.equal('ReferenceObject');
      const bad = async (series: unknown) => (await refused(t, 'POST', path, { _type: 'ReferenceValue', label: 'X', timeSeries: series })).map((v) => v.path);
      expect(await bad([{ shortText: 'ohne Code' }])).to.deep.equal(['timeSeries.0.code']);
      expect(await bad([timeSeries[0], { code: 'A', validFrom: '2020-01-01' }])).to.deep.equal(['timeSeries.1.validFrom']);
      expect(await bad([{ code: 'A', gueltigAb: 1 }])).to.deep.equal(['timeSeries.0.gueltigAb']);
      expect(await bad([{ code: '' }])).to.deep.equal(['timeSeries.0.code']);
      expect(await bad({ code: 'A' })).to.deep.equal(['timeSeries']);
      expect(await bad(['A'])).to.deep.equal(['timeSeries.0']);
      expect(await bad(Array.from({ length: 1001 }, (_, i) => ({ code: `C${i}` })))).to.deep.equal(['timeSeries']);
      // A literal has no time series.
      expect((await refused(t, 'POST', path, { _type: 'Literal', label: 'Y', timeSeries }))[0].path).to.equal('timeSeries');
    });

    it('organizations hold posts; persons hold posts and have an additional name; a user stands for a person', async () => {
      o.org = await ok(t, 'POST', `${rest}/organizations`, { _type: 'Organization', label: 'Steueramt' });
      o.post = await ok(t, 'POST', `${rest}/organizations/Steueramt/posts`, { _type: 'Post', label: 'Amtsleitung' });
      o.ada = await ok(t, 'POST', `${rest}/organizations/Steueramt/persons`, { _type: 'Person', givenName: 'Ada', familyName: 'Muster', additionalName: 'Maria' });
      expect(o.ada).to.include({ label: 'Ada Muster', additionalName: 'Maria' });
      o.holds = await ok(t, 'POST', `${rest}/organizations/Steueramt/persons/Ada Muster/holdsPost`, { _type: 'HoldsPost', holdsPost: o.post.id });
      expect(o.holds).to.include({ heldBy: o.ada.id, holdsPost: o.post.id });
      const held = await ok(t, 'GET', `${rest}/persons/${o.ada.id}/holdsPost`);
      expect(held._embedded.holdsPost.map((h: Json) => h.holdsPost)).to.deep.equal([o.post.id]);
      expect((await refused(t, 'POST', `${rest}/persons/${o.ada.id}/holdsPost`, { _type: 'HoldsPost', holdsPost: o.org.id }))[0].path).to.equal('holdsPost');
      const user = await createUser(t, db, { loginId: 'ada', password: secret('ada-Passwort-7'), isPerson: o.ada.id } as never);
      expect(user).to.include({ isPerson: o.ada.id });
      o.user = user;
    });

    it('a derivation links any two assets, listed at both', async () => {
      o.derivation = await ok(t, 'POST', `${rest}/datasets/${o.dataset.id}/derivedTo`, { _type: 'Derivation', derivedTo: o.other.id, qualifier: 'aggregiert' });
      expect(o.derivation).to.include({ derivedFrom: o.dataset.id, derivedTo: o.other.id, qualifier: 'aggregiert', parentId: o.dataset.id });
      const from = await ok(t, 'GET', `${rest}/datasets/${o.other.id}/derivedFrom`);
      expect(from._embedded.derivedFrom.map((d: Json) => d.id)).to.deep.equal([o.derivation.id]);
      // Between other kinds of asset, and placed by its owner reference at the top-level plural.
      o.derivation2 = await ok(t, 'POST', `${rest}/derivations`, { _type: 'Derivation', derivedFrom: o.system.id, derivedTo: o.dataset.id });
      expect(o.derivation2).to.include({ parentId: o.system.id });
      expect((await ok(t, 'GET', `${rest}/datasets/${o.dataset.id}/derivedFrom`)).total).to.equal(1);
    });

    it('a usage links an asset that uses to the one used; a deployment stands at the top level or under an asset', async () => {
      await ok(t, 'POST', `${rest}/schemes/Datenkatalog/processings`, { _type: 'Processing', label: 'Steuerstatistik' });
      o.usage = await ok(t, 'POST', `${rest}/schemes/Datenkatalog/processings/Steuerstatistik/usages`, { _type: 'Usage', usageOf: o.dataset.id, qualifier: 'liest' });
      expect(o.usage).to.include({ usageOf: o.dataset.id, qualifier: 'liest', label: o.dataset.id });
      o.usage2 = await ok(t, 'POST', `${rest}/usages`, { _type: 'Usage', usedBy: o.system.id, usageOf: o.other.id });
      expect(o.usage2).to.include({ parentId: o.system.id });
      o.deployment = await ok(t, 'POST', `${rest}/deployments`, { _type: 'Deployment', deploymentOf: o.dataset.id, deployedIn: o.subsystem.id, qualifier: 'produktiv', order: 1, favorite: true });
      expect(o.deployment).to.include({ parentId: null, qualifier: 'produktiv', order: 1, favorite: true });
      o.deployment2 = await ok(t, 'POST', `${rest}/datasets/${o.other.id}/deployments`, { _type: 'Deployment', deploymentOf: o.other.id, deployedIn: o.system.id });
      expect(o.deployment2.parentId).to.equal(o.other.id);
      expect((await ok(t, 'GET', `${rest}/deployments`))._embedded.deployments.map((d: Json) => d.id)).to.deep.equal([o.deployment.id]);
      expect((await refused(t, 'POST', `${rest}/deployments`, { _type: 'Deployment', deploymentOf: o.dataset.id, deployedIn: o.dataset.id }))[0].path).to.equal('deployedIn');
    });

    it('attributes and literals keep an order; a business attribute\'s readOnly is still the metamodel\'s flag', async () => {
      await ok(t, 'POST', `${rest}/schemes/Glossar/classifiers`, { _type: 'Classifier', label: 'Kunde' });
      const attribute = await ok(t, 'POST', `${rest}/schemes/Glossar/classifiers/Kunde/attributes`, { _type: 'BusinessAttribute', label: 'name', order: 3, readOnly: true, locked: true });
      expect(attribute).to.include({ order: 3, readOnly: true, locked: true });
    });
  });

  describe('the query interface', () => {
    const one = async (sql: string) => {
      const found = await rows(t, db, sql);
      expect(found, sql).to.have.length(1);
      return found[0];
    };

    it('has a view per new type, with a column per new property in snake case', async () => {
      expect(await one(`select label, stereotype, tags, synonyms, favorite, locked, read_only, accrual_periodicity, spatial, usage_restriction, retention_period,
        retention_justification, archive_details, archive_justification, historicization_type from dataset_view where id = '${o.dataset.id}'`)).to.deep.equal({
        label: 'Bevölkerung', stereotype: 'OGD', tags: ['Statistik', 'Bevölkerung'], synonyms: ['Einwohner'], favorite: true, locked: false, read_only: true,
        accrual_periodicity: 'jährlich', spatial: 'Kanton', usage_restriction: 'keine', retention_period: '10 Jahre', retention_justification: 'Gesetz',
        archive_details: 'Staatsarchiv', archive_justification: 'archivwürdig', historicization_type: 'Stichtag',
      });
      expect(await one(`select access_url, download_url, format, media_type from distribution_view where label = 'CSV'`))
        .to.deep.equal({ access_url: 'https://example.org/CSV', download_url: 'https://example.org/CSV.csv', format: 'CSV', media_type: 'text/csv' });
      expect(await one(`select stereotype from collection_view where id = '${o.folder.id}'`)).to.deep.equal({ stereotype: 'organizationalUnit' });
      expect(await one(`select model_type from scheme_view where id = '${o.catalog.id}'`)).to.deep.equal({ model_type: 'DataCatalog' });
      expect(await one(`select physical_name, parent_id from system_view where id = '${o.subsystem.id}'`)).to.deep.equal({ physical_name: 'STP_DB', parent_id: o.system.id });
      expect(await one(`select deployment_of, deployed_in, qualifier, "order", favorite from deployment_view where id = '${o.deployment.id}'`))
        .to.deep.equal({ deployment_of: o.dataset.id, deployed_in: o.subsystem.id, qualifier: 'produktiv', order: 1, favorite: true });
      expect(await one(`select used_by, usage_of, qualifier from usage_view where id = '${o.usage.id}'`))
        .to.deep.equal({ used_by: o.usage.parentId, usage_of: o.dataset.id, qualifier: 'liest' });
      expect(await one(`select derived_from, derived_to, qualifier from derivation_view where id = '${o.derivation.id}'`))
        .to.deep.equal({ derived_from: o.dataset.id, derived_to: o.other.id, qualifier: 'aggregiert' });
      expect(await one(`select label from data_object_view where id = '${o.table.id}'`)).to.deep.equal({ label: 'T_PERSON' });
      expect(await one(`select count(*)::int as n from data_object_view where type = 'UmlClass'`)).to.deep.equal({ n: 2 });
      expect(await one(`select label from uml_class_view where id = '${o.person.id}'`)).to.deep.equal({ label: 'Person' });
      expect(await one(`select has_domain, has_range, "order" from uml_attribute_view where id = '${o.name.id}'`)).to.deep.equal({ has_domain: o.person.id, has_range: o.string.id, order: 1 });
      expect(await one(`select has_domain, has_range from composition_view where id = '${o.composition.id}'`)).to.deep.equal({ has_domain: o.person.id, has_range: o.address.id });
      expect(await one(`select label from datatype_view where id = '${o.string.id}'`)).to.deep.equal({ label: 'String50' });
      expect(await one(`select label from reference_object_view where id = '${o.law.id}'`)).to.deep.equal({ label: 'Steuergesetz' });
      expect(await one(`select time_series, "order" from reference_value_view where id = '${o.value.id}'`)).to.deep.equal({ time_series: o.value.timeSeries, order: 1 });
      expect(await one(`select label from post_view where id = '${o.post.id}'`)).to.deep.equal({ label: 'Amtsleitung' });
      expect(await one(`select held_by, holds_post from holds_post_view where id = '${o.holds.id}'`)).to.deep.equal({ held_by: o.ada.id, holds_post: o.post.id });
      expect(await one(`select additional_name from person_view where id = '${o.ada.id}'`)).to.deep.equal({ additional_name: 'Maria' });
      expect(await one(`select is_person from user_view where id = '${o.user.id}'`)).to.deep.equal({ is_person: o.ada.id });
      expect(await one(`select stereotype, tags from asset_view where id = '${o.dataset.id}'`)).to.deep.equal({ stereotype: 'OGD', tags: ['Statistik', 'Bevölkerung'] });
    });

    it('has the version views of the new types', async () => {
      expect(await one(`select label, time_series from reference_value_version_view where id = '${o.value.id}'`)).to.deep.equal({ label: 'StG', time_series: o.value.timeSeries });
      expect(await one(`select derived_from from derivation_version_view where id = '${o.derivation.id}'`)).to.deep.equal({ derived_from: o.dataset.id });
    });
  });

  describe('deletion', () => {
    const gone = async (id: string, plural: string) => expect((await send(t, 'GET', `${rest}/${plural}/${id}`)).status, `${plural}/${id}`).to.equal(404);
    const there = async (id: string, plural: string) => expect((await send(t, 'GET', `${rest}/${plural}/${id}`)).status, `${plural}/${id}`).to.equal(200);

    it('deleting an asset removes the derivations, usages and deployments that name it, in either role', async () => {
      await ok(t, 'DELETE', `${rest}/datasets/${o.dataset.id}`);
      await gone(o.dataset.id, 'datasets');
      // Derived from it (its child) and derived to it (naming it); used by a processing; deployed.
      await gone(o.derivation.id, 'derivations');
      await gone(o.derivation2.id, 'derivations');
      await gone(o.usage.id, 'usages');
      await gone(o.deployment.id, 'deployments');
      // What names only other objects stays.
      await there(o.usage2.id, 'usages');
      await there(o.deployment2.id, 'deployments');
      await there(o.other.id, 'datasets');
      expect((await rows(t, db, `select count(*)::int as n from derivation_view`))[0].n).to.equal(0);
    });

    it('deleting a system removes the deployments in it and the usages and derivations under it; deleting a post the posts held', async () => {
      await ok(t, 'DELETE', `${rest}/schemes/Systeme/systems/Steuerportal`);
      await gone(o.subsystem.id, 'systems');
      await gone(o.deployment2.id, 'deployments');
      await gone(o.usage2.id, 'usages');
      await ok(t, 'DELETE', `${rest}/posts/${o.post.id}`);
      await gone(o.holds.id, 'holdsPosts');
      await there(o.ada.id, 'persons');
      // A class's part goes with it: the composition naming it.
      await ok(t, 'DELETE', `${rest}/umlClasses/${o.address.id}`);
      await gone(o.composition.id, 'compositions');
      await there(o.person.id, 'umlClasses');
    });
  });
});

describe('metamodel, second edition: a database written before it', function () {
  this.timeout(180_000);
  let work: string;
  let env: Record<string, string>;
  let t: TestService | undefined;

  before(() => {
    work = mkdtempSync(join(ROOT, '.tmp', 'metamodel2-'));
    // The restarted service must find the same storage: a folder, not memory.
    env = storageEnv().SERVICE_DATABASE_URL ? storageEnv() : { SERVICE_DATA_DIR: join(work, 'data') };
  });
  after(async () => {
    await t?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('reads its derivations under their new names, current and as of before, and gets the new views on start', async () => {
    t = await startService(env);
    const db = await createDatabase(t);
    const rest = `/rest/${db}`;
    await ok(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'Alt' });
    await ok(t, 'POST', `${rest}/schemes/Alt/classifiers`, { _type: 'Classifier', label: 'Kunde' });
    const from = await ok(t, 'POST', `${rest}/schemes/Alt/classifiers/Kunde/attributes`, { _type: 'BusinessAttribute', label: 'name' });
    const to = await ok(t, 'POST', `${rest}/schemes/Alt/classifiers/Kunde/attributes`, { _type: 'BusinessAttribute', label: 'kurzname' });
    const derivation = await ok(t, 'POST', `${rest}/schemes/Alt/classifiers/Kunde/attributes/name/derivedTo`, { _type: 'Derivation', derivedTo: to.id });
    const written = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    // What the previous version stored: the derivation's owner reference as `derivationFor`, in the
    // object and in its history; no views of the types it did not have; its migrations only.
    const s = `"db_${db}"`;
    const knex = t.service.storage.knex;
    await knex.raw(`update ${s}.objects set props = (props - 'derivedFrom') || jsonb_build_object('derivationFor', props -> 'derivedFrom') where type = 'Derivation'`);
    await knex.raw(`update ${s}.history set row = (row - 'derivedFrom') || jsonb_build_object('derivationFor', row -> 'derivedFrom') where type = 'Derivation'`);
    // Nor the parent references (decisions §7.1; the sixth migration fills them in, as of before too).
    await knex.raw(`update ${s}.objects set props = props - 'inScheme' where type = 'Classifier'`);
    await knex.raw(`update ${s}.history set row = row - 'inScheme' where type = 'Classifier'`);
    // The fifth migration of a database is the one this edition brings.
    await knex.raw(`delete from ${s}.schema_migrations where version >= 5`);
    for (const view of ['dataset_view', 'dataset_version_view', 'usage_view', 'holds_post_view']) await knex.raw(`drop view ${s}.${view}`);
    await knex.raw(`update service.databases set views_hash = 'previous' where name = ?`, [db]);
    expect((await ok(t, 'GET', `${rest}/derivations/${derivation.id}`)).derivationFor).to.equal(from.id);
    await t.close();
    t = undefined;

    t = await startService(env);
    const read = await ok(t, 'GET', `${rest}/derivations/${derivation.id}`);
    expect(read).to.include({ derivedFrom: from.id, derivedTo: to.id });
    expect(read).to.not.have.property('derivationFor');
    const before = await ok(t, 'GET', `${rest}/derivations/${derivation.id}?version=${written}`);
    expect(before).to.include({ derivedFrom: from.id });
    expect(before).to.not.have.property('derivationFor');
    const scheme = await ok(t, 'GET', `${rest}/schemes/Alt`);
    expect(await ok(t, 'GET', `${rest}/schemes/Alt/classifiers/Kunde`)).to.include({ inScheme: scheme.id });
    expect(await ok(t, 'GET', `${rest}/schemes/Alt/classifiers/Kunde?version=${written}`)).to.include({ inScheme: scheme.id });
    expect((await ok(t, 'GET', `${rest}/schemes/Alt/classifiers/Kunde/attributes/kurzname/derivedFrom`))._embedded.derivedFrom.map((d: Json) => d.id)).to.deep.equal([derivation.id]);
    // Written back as read, it keeps its place.
    const patched = await ok(t, 'PATCH', `${rest}/derivations/${derivation.id}`, { qualifier: 'gekürzt' });
    expect(patched).to.include({ derivedFrom: from.id, parentId: from.id, qualifier: 'gekürzt' });
    expect(await rows(t, db, `select derived_from, qualifier from derivation_view`)).to.deep.equal([{ derived_from: from.id, qualifier: 'gekürzt' }]);
    expect(await rows(t, db, `select count(*)::int as n from dataset_view`)).to.deep.equal([{ n: 0 }]);
    // Datasets stand in data catalogs (decisions §7.1).
    await ok(t, 'POST', `${rest}/schemes`, { _type: 'Scheme', label: 'Katalog', modelType: 'DataCatalog' });
    await ok(t, 'POST', `${rest}/schemes/Katalog/collections`, { _type: 'Collection', label: 'Daten' });
    await ok(t, 'POST', `${rest}/schemes/Katalog/collections/Daten/datasets`, { _type: 'Dataset', label: 'Kunden' });
    expect(await rows(t, db, `select label from dataset_view`)).to.deep.equal([{ label: 'Kunden' }]);
    // Deleting the attribute derived from removes the derivation, as before.
    await ok(t, 'DELETE', `${rest}/attributes/${from.id}`);
    expect((await send(t, 'GET', `${rest}/derivations/${derivation.id}`)).status).to.equal(404);
  });
});
