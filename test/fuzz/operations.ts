/**
 * What the fuzz test calls: every path and method of the served OpenAPI
 * document (the plugins' calls included) and the real objects their path
 * parameters name.
 */
import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { createUser, secret, type Credentials } from '../auth/fixtures.ts';
import { resolve, type Json } from './values.ts';
import { resolveMetamodel } from '../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../runtime/metamodel/standard.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';

export interface Operation {
  method: string;
  /** The path with `{name}` parameters, as the document writes it. */
  template: string;
  /** Query and header parameters (resolved). */
  parameters: Json[];
  /** The JSON schema of the body, if the operation takes one. */
  body?: Json;
  multipart?: boolean;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];

/** Every operation, in an order that reads before it writes and removes last, so that writes find the objects reads found. */
export function operationsOf(doc: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS.filter((m) => item[m])) {
      const op = item[method];
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(p, doc)).filter((p: Json) => p.in !== 'path');
      const content = op.requestBody?.content ?? {};
      operations.push({
        method: method.toUpperCase(), template, parameters,
        ...(content['application/json'] ? { body: content['application/json'].schema } : {}),
        ...(content['multipart/form-data'] ? { multipart: true } : {}),
      });
    }
  }
  const phase = (m: string) => ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'].indexOf(m);
  return operations.sort((a, b) => phase(a.method) - phase(b.method) || (a.template < b.template ? -1 : a.template > b.template ? 1 : 0));
}

export interface Fixtures {
  db: string;
  /** A database of its own for the administration calls: DELETE removes it. */
  spare: string;
  /** A named profile of the default tenant (decisions §7.5). */
  profile: string;
  /** Keys (technical and business) of a real object by the list name that precedes `{key}`. */
  keys: Record<string, string[]>;
  /** Keys of a scheme and a collection in a model of each kind (decisions §7.1), for the lists only some kinds hold. */
  keysOfKind: Record<string, { schemes: string[]; collections: string[] }>;
  /** Technical keys of an object of each type, for references and `id`s. */
  ids: Record<string, string>;
  job: string;
  accessKey: string;
  editor: Credentials;
  reader: Credentials;
  /** The second tenant, its users, the access key and the query job: what `makeFixtures` may take over from an earlier set. */
  people: People;
  /** The objects and the profile, for `intactOf` and `makeFixtures`'s `keep`. */
  reusable: Reusable;
}

/** The part of the fixtures that costs most to make (two password hashes) and that few calls change. */
export interface People {
  tenant: Json;
  user: Json;
  readerUser: Json;
  editor: Credentials;
  reader: Credentials;
  accessKey: string;
  job: string;
}

/**
 * The objects of the fixtures, each by its name: the list it is made in
 * (below the fixtures it `needs`, made before it) and its body. `s` is the
 * round's suffix (see `makeFixtures`).
 */
const PLAN: { name: string; needs: string[]; make(o: Record<string, Json>, s: string): [path: string, body: Json] }[] = [
  { name: 'scheme', needs: [], make: (_, s) => ['schemes', { _type: 'Scheme', label: `Fuzz${s}` }] },
  // The types of decisions §7.1, each in a model of a kind that holds it.
  { name: 'catalog', needs: [], make: (_, s) => ['schemes', { _type: 'Scheme', label: `Fuzz catalog${s}`, modelType: 'DataCatalog' }] },
  { name: 'systemCatalog', needs: [], make: (_, s) => ['schemes', { _type: 'Scheme', label: `Fuzz systems${s}`, modelType: 'SystemCatalog' }] },
  { name: 'dataModel', needs: [], make: (_, s) => ['schemes', { _type: 'Scheme', label: `Fuzz data model${s}`, modelType: 'DataModel' }] },
  { name: 'referenceModel', needs: [], make: (_, s) => ['schemes', { _type: 'Scheme', label: `Fuzz reference data${s}`, modelType: 'ReferenceDataModel' }] },
  { name: 'org', needs: [], make: (_, s) => ['organizations', { _type: 'Organization', label: `Org${s}` }] },
  { name: 'classifier', needs: ['scheme'], make: (o, s) => [`schemes/${o.scheme.id}/classifiers`, { _type: 'Classifier', label: `C${s}` }] },
  { name: 'enumeration', needs: ['scheme'], make: (o, s) => [`schemes/${o.scheme.id}/enumerations`, { _type: 'Enumeration', label: `E${s}` }] },
  { name: 'collection', needs: ['scheme'], make: (o, s) => [`schemes/${o.scheme.id}/collections`, { _type: 'Collection', label: `Col${s}` }] },
  { name: 'catalogFolder', needs: ['catalog'], make: (o, s) => [`schemes/${o.catalog.id}/collections`, { _type: 'Collection', label: `Col${s}` }] },
  { name: 'systemsFolder', needs: ['systemCatalog'], make: (o, s) => [`schemes/${o.systemCatalog.id}/collections`, { _type: 'Collection', label: `Col${s}` }] },
  { name: 'dataModelFolder', needs: ['dataModel'], make: (o, s) => [`schemes/${o.dataModel.id}/collections`, { _type: 'Collection', label: `Col${s}` }] },
  { name: 'referenceFolder', needs: ['referenceModel'], make: (o, s) => [`schemes/${o.referenceModel.id}/collections`, { _type: 'Collection', label: `Col${s}` }] },
  { name: 'processing', needs: ['scheme'], make: (o, s) => [`schemes/${o.scheme.id}/processings`, { _type: 'Processing', label: `Proc${s}` }] },
  { name: 'system', needs: ['systemCatalog'], make: (o, s) => [`schemes/${o.systemCatalog.id}/systems`, { _type: 'System', label: `Sys${s}` }] },
  { name: 'dataObject', needs: ['dataModel'], make: (o, s) => [`schemes/${o.dataModel.id}/dataObjects`, { _type: 'DataObject', label: `DO${s}` }] },
  { name: 'umlClass', needs: ['dataModel'], make: (o, s) => [`schemes/${o.dataModel.id}/dataObjects`, { _type: 'UmlClass', label: `UC${s}` }] },
  { name: 'datatype', needs: ['dataModel'], make: (o, s) => [`schemes/${o.dataModel.id}/datatypes`, { _type: 'Datatype', label: `DT${s}` }] },
  { name: 'referenceObject', needs: ['referenceModel'], make: (o, s) => [`schemes/${o.referenceModel.id}/enumerations`, { _type: 'ReferenceObject', label: `RO${s}` }] },
  { name: 'person', needs: ['org'], make: (o, s) => [`organizations/${o.org.id}/persons`, { _type: 'Person', givenName: `Pia${s}` }] },
  { name: 'group', needs: ['org'], make: (o, s) => [`organizations/${o.org.id}/groups`, { _type: 'Group', label: `G${s}` }] },
  { name: 'postOfOrg', needs: ['org'], make: (o, s) => [`organizations/${o.org.id}/posts`, { _type: 'Post', label: `P${s}` }] },
  { name: 'attribute', needs: ['classifier'], make: (o, s) => [`classifiers/${o.classifier.id}/attributes`, { _type: 'BusinessAttribute', label: `A${s}` }] },
  { name: 'other', needs: ['classifier'], make: (o, s) => [`classifiers/${o.classifier.id}/attributes`, { _type: 'BusinessAttribute', label: `B${s}` }] },
  { name: 'literal', needs: ['enumeration'], make: (o, s) => [`enumerations/${o.enumeration.id}/literals`, { _type: 'Literal', label: `L${s}` }] },
  { name: 'dataset', needs: ['catalogFolder'], make: (o, s) => [`collections/${o.catalogFolder.id}/datasets`, { _type: 'Dataset', label: `DS${s}` }] },
  { name: 'umlAttribute', needs: ['umlClass'], make: (o, s) => [`umlClasses/${o.umlClass.id}/attributes`, { _type: 'UmlAttribute', label: `UA${s}` }] },
  { name: 'composition', needs: ['umlClass', 'dataObject'], make: (o) => [`umlClasses/${o.umlClass.id}/compositions`, { _type: 'Composition', hasRange: o.dataObject.id }] },
  {
    name: 'referenceValue', needs: ['referenceObject'],
    make: (o, s) => [`referenceObjects/${o.referenceObject.id}/literals`, { _type: 'ReferenceValue', label: `RV${s}`, timeSeries: [{ code: `RV${s}` }] }],
  },
  { name: 'attribution', needs: ['scheme', 'person'], make: (o) => [`schemes/${o.scheme.id}/attributedTo`, { _type: 'Attribution', attributedTo: o.person.id }] },
  { name: 'holdsPost', needs: ['person', 'postOfOrg'], make: (o) => [`persons/${o.person.id}/holdsPost`, { _type: 'HoldsPost', holdsPost: o.postOfOrg.id }] },
  { name: 'derivation', needs: ['attribute', 'other'], make: (o) => [`attributes/${o.attribute.id}/derivedTo`, { _type: 'Derivation', derivedTo: o.other.id }] },
  { name: 'distribution', needs: ['dataset'], make: (o, s) => [`datasets/${o.dataset.id}/distributions`, { _type: 'Distribution', label: `CSV${s}` }] },
  {
    name: 'deployment', needs: ['dataset', 'system'],
    make: (o) => [`datasets/${o.dataset.id}/deployments`, { _type: 'Deployment', deploymentOf: o.dataset.id, deployedIn: o.system.id }],
  },
  { name: 'usage', needs: ['processing', 'dataset'], make: (o) => [`processings/${o.processing.id}/usages`, { _type: 'Usage', usageOf: o.dataset.id }] },
];

/** Each object's level: made after the levels before it (the objects it needs), with the other objects of its level in parallel. */
const LEVEL: Record<string, number> = {};
for (const step of PLAN) LEVEL[step.name] = Math.max(-1, ...step.needs.map((n) => LEVEL[n])) + 1;

/**
 * What an earlier set of fixtures may hand on to the next one: its objects,
 * as made (their `_version`), and its profile, as it read then.
 */
export interface Reusable {
  objects: Record<string, Json>;
  profile: { name: string; text: string };
}

/**
 * Real objects of every kind the paths name, made as a client makes them:
 * each level of parents at once, its objects in parallel. `round` tells a
 * second set in the same database from the first (labels and login IDs get
 * it as a suffix), for callers that use one up. `people`: the second tenant,
 * users, access key and query job of an earlier set, taken over instead of
 * made again, for a caller that knows nothing since changed them. `keep`:
 * objects of an earlier set (and its profile) that the caller found as they
 * were made (`intactOf`), taken over too, each with the objects it needs;
 * every other object is made again, below new parents where its own were
 * made again.
 */
export async function makeFixtures(t: TestService, db: string, spare: string, round = '', people?: People, keep?: Partial<Reusable>): Promise<Fixtures> {
  const post = async (path: string, json: unknown, headers: Record<string, string> = {}): Promise<Json> => {
    const r = await t.request(`/rest/${db}/${path}`, { method: 'POST', json, headers });
    const text = await r.text();
    expect(r.status, `${path}: ${text}`).to.equal(201);
    return JSON.parse(text);
  };
  const s = round;
  const o: Record<string, Json> = {};
  const taken = new Set<string>();
  const made = people ?? makePeople(t, db, post, s);
  const profileName = `Fuzz${s || '0'}`;
  // A named profile of the default tenant (decisions §7.5).
  const profile = keep?.profile ? Promise.resolve(keep.profile) : (async () => {
    const created = await t.request(`/api/${db}/profiles`, { method: 'POST', json: { name: profileName } });
    expect(created.status, `profile ${profileName}`).to.equal(201);
    const read = await t.request(`/api/${db}/profiles/${encodeURIComponent(profileName)}`);
    expect(read.status, `profile ${profileName}`).to.equal(200);
    return { name: profileName, text: await read.text() };
  })();
  for (let level = 0; level <= Math.max(...Object.values(LEVEL)); level++) {
    await Promise.all(PLAN.filter((step) => LEVEL[step.name] === level).map(async (step) => {
      const earlier = keep?.objects?.[step.name];
      if (earlier && step.needs.every((n) => taken.has(n))) {
        o[step.name] = earlier;
        taken.add(step.name);
        return;
      }
      const [path, body] = step.make(o, s);
      o[step.name] = await post(path, body);
    }));
  }
  const [{ tenant, user, readerUser, editor, reader, ...rest }, { name: profileOf, text: profileText }] = await Promise.all([made, profile]);
  const peopleOf: People = { tenant, user, readerUser, editor, reader, ...rest };
  const {
    scheme, catalog, systemCatalog, dataModel, referenceModel, org, classifier, enumeration, collection, catalogFolder, systemsFolder, dataModelFolder, referenceFolder,
    processing, system, dataObject, umlClass, datatype, referenceObject, person, group, postOfOrg, attribute, literal, dataset, umlAttribute, composition, referenceValue,
    attribution, holdsPost, derivation, distribution, deployment, usage,
  } = o;
  const both = (x: Json) => [x.id, x.label].filter((k) => typeof k === 'string').map((k) => encodeURIComponent(k));
  const keys: Record<string, string[]> = {
    schemes: both(scheme), classifiers: both(classifier), attributes: both(attribute), enumerations: both(enumeration), literals: both(literal),
    collections: both(collection), processings: both(processing), activities: [processing.id], assets: [scheme.id, org.id], organizations: both(org),
    persons: [person.id], groups: both(group), attributions: [attribution.id], derivations: [derivation.id], tenants: ['Default', tenant.id], users: [user.id, reader.loginId, readerUser.id],
    datasets: both(dataset), distributions: both(distribution), systems: both(system), deployments: [deployment.id], dataObjects: both(dataObject),
    umlClasses: both(umlClass), umlAttributes: both(umlAttribute), compositions: [composition.id], datatypes: both(datatype),
    referenceObjects: both(referenceObject), referenceValues: both(referenceValue), usages: [usage.id], posts: both(postOfOrg), holdsPosts: [holdsPost.id],
  };
  const objects = [
    scheme, classifier, attribute, enumeration, literal, collection, processing, org, person, group, attribution, derivation, tenant, user,
    dataset, distribution, system, deployment, dataObject, umlClass, umlAttribute, composition, datatype, referenceObject, referenceValue, usage, postOfOrg, holdsPost,
  ];
  // Where a new object of a type may stand, by `<type>.<parent reference>`: the parent of the fixture of that type (in a model of its kind).
  const parents = Object.fromEntries(objects.flatMap((x) => ['inScheme', 'inCollection', 'inSystem', 'literalOf'].filter((r) => typeof x[r] === 'string').map((r) => [`${x._type}.${r}`, x[r]])));
  const ids: Record<string, string> = { ...Object.fromEntries(objects.map((x) => [x._type, x.id])), Asset: scheme.id, Activity: processing.id, Resource: org.id, ...parents };
  const keysOfKind = {
    DataCatalog: { schemes: [catalog.id], collections: [catalogFolder.id] },
    SystemCatalog: { schemes: [systemCatalog.id], collections: [systemsFolder.id] },
    DataModel: { schemes: [dataModel.id], collections: [dataModelFolder.id] },
    ReferenceDataModel: { schemes: [referenceModel.id], collections: [referenceFolder.id] },
  };
  return {
    db, spare, profile: profileOf, keys, keysOfKind, ids, job: peopleOf.job, accessKey: peopleOf.accessKey, editor, reader, people: peopleOf,
    reusable: { objects: o, profile: { name: profileOf, text: profileText } },
  };
}

/**
 * What of an earlier set of fixtures is still as it was made, for
 * `makeFixtures`'s `keep`: each object that stands in the database with the
 * version it was made with and that no address in `named` names (a call to
 * an object's address may have changed what is below it), and the profile
 * if it reads as it did. An object that still stands but changed (or was
 * named) keeps the objects it needs from being taken over too: its
 * replacement is made below new ones, where it cannot clash with it (a
 * relation's label is its target's, labels are unique below a parent).
 * The versions are read from the database's table in one statement, not
 * through the interface: a read per object each round would cost about as
 * much as making the objects again.
 */
export async function intactOf(t: TestService, f: Fixtures, named: string[]): Promise<Partial<Reusable>> {
  const objects = Object.entries(f.reusable.objects);
  const rows: { id: string; version: number }[] = (await t.service.storage.knex.raw(
    `select id::text as id, version from "${schemaOf(f.db)}".objects where id = any(?::uuid[])`, [objects.map(([, o]) => o.id)])).rows;
  const versions = new Map(rows.map((r) => [r.id, Number(r.version)]));
  const states = objects.map(([name, object]) => {
    const version = versions.get(object.id);
    const state = version === undefined ? 'gone' : version !== Number(object._version) || named.some((path) => path.includes(object.id)) ? 'changed' : 'intact';
    return [name, state] as const;
  });
  const changed = new Set(states.filter(([, state]) => state === 'changed').map(([name]) => name));
  const blocked = new Set(PLAN.filter((step) => changed.has(step.name)).flatMap((step) => step.needs));
  const kept = states.filter(([name, state]) => state === 'intact' && !blocked.has(name)).map(([name]) => [name, f.reusable.objects[name]]);
  const profile = await t.request(`/api/${f.db}/profiles/${encodeURIComponent(f.reusable.profile.name)}`);
  const same = profile.status === 200 && (await profile.text()) === f.reusable.profile.text;
  return { objects: Object.fromEntries(kept), ...(same ? { profile: f.reusable.profile } : {}) };
}

/** A second tenant with an editor (and its access key) in it, a reader in the default tenant, and a query job. */
async function makePeople(t: TestService, db: string, post: (path: string, json: unknown, headers?: Record<string, string>) => Promise<Json>, s: string): Promise<People> {
  const editor = { loginId: `fuzz-editor${s}`, password: secret('fuzz-editor-1') };
  const reader = { loginId: `fuzz-reader${s}`, password: secret('fuzz-reader-1') };
  const tenant = await post('tenants', { _type: 'Tenant', label: `Second${s}` });
  const [user, readerUser, job] = await Promise.all([
    createUser(t, db, { ...editor, accessLevel: 'EDITOR', tenant: `Second${s}` }) as Promise<Json>,
    createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' }) as Promise<Json>,
    t.request(`/api/${db}/queries/download?format=JSON`, { method: 'POST', json: { sql: 'select label from scheme_view' } }),
  ]);
  const key = await post(`users/${user.id}/accessKeys`, { description: 'fuzz' }, { 'service-tenant': `Second${s}` });
  return { tenant, user, readerUser, editor, reader, accessKey: key.id, job: String((await job.json()).id) };
}

/** The path with every parameter filled by a real value. */
export function filled(template: string, f: Fixtures, choice: number): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string, at: number) => {
    if (name === 'db') return f.db;
    if (name === 'name') return f.spare;
    if (name === 'job') return f.job;
    if (name === 'accessKey') return f.accessKey;
    // A profile itself (described, deleted): the named one; its file: the tenant's own, a standard one, none.
    if (name === 'profile') return /\/profiles\/\{profile\}$/.test(template) ? f.profile : ['annotations', 'profile', 'standard-annotations', 'nope'][choice % 4];
    const list = template.slice(0, at).split('/').filter(Boolean).pop()!;
    // A list below a scheme or collection that only some kinds of model hold (datasets, systems …): a parent in such a model.
    const below = template.slice(at).split('/').filter(Boolean)[1];
    const kind = (list === 'schemes' || list === 'collections') && below ? kindHolding(list === 'schemes' ? 'Scheme' : 'Collection', below) : undefined;
    const keys = (kind ? f.keysOfKind[kind]?.[list as 'schemes' | 'collections'] : undefined) ?? f.keys[list] ?? [f.ids.Scheme];
    return keys[choice % keys.length];
  });
}

const STANDARD = resolveMetamodel(readStandardMetamodel());

/** The kind of model that holds a list's items, where every item type of the list is limited to some kinds (the first of them). */
function kindHolding(parentType: string, listName: string): string | undefined {
  const l = STANDARD.types[parentType]?.lists.find((x) => x.name === listName);
  const kinds = l?.itemTypes.filter((t) => !STANDARD.types[t]?.abstract).map((t) => STANDARD.types[t]?.modelTypes);
  if (!kinds?.length || kinds.some((k) => !k?.length)) return undefined;
  return kinds[0]![0];
}
