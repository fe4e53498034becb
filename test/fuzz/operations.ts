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
 * Real objects of every kind the paths name, made as a client makes them:
 * each level of parents at once, its objects in parallel. `round` tells a
 * second set in the same database from the first (labels and login IDs get
 * it as a suffix), for callers that use one up. `people`: the second tenant,
 * users, access key and query job of an earlier set, taken over instead of
 * made again, for a caller that knows nothing since changed them.
 */
export async function makeFixtures(t: TestService, db: string, spare: string, round = '', people?: People): Promise<Fixtures> {
  const post = async (path: string, json: unknown, headers: Record<string, string> = {}): Promise<Json> => {
    const r = await t.request(`/rest/${db}/${path}`, { method: 'POST', json, headers });
    const text = await r.text();
    expect(r.status, `${path}: ${text}`).to.equal(201);
    return JSON.parse(text);
  };
  const s = round;
  const [scheme, catalog, systemCatalog, dataModel, referenceModel, org, made] = await Promise.all([
    post('schemes', { _type: 'Scheme', label: `Fuzz${s}` }),
    // The types of decisions §7.1, each in a model of a kind that holds it.
    post('schemes', { _type: 'Scheme', label: `Fuzz catalog${s}`, modelType: 'DataCatalog' }),
    post('schemes', { _type: 'Scheme', label: `Fuzz systems${s}`, modelType: 'SystemCatalog' }),
    post('schemes', { _type: 'Scheme', label: `Fuzz data model${s}`, modelType: 'DataModel' }),
    post('schemes', { _type: 'Scheme', label: `Fuzz reference data${s}`, modelType: 'ReferenceDataModel' }),
    post('organizations', { _type: 'Organization', label: `Org${s}` }),
    people ?? makePeople(t, db, post, s),
  ]);
  const { tenant, user, readerUser, editor, reader } = made;
  const profile = `Fuzz${s || '0'}`;
  const [classifier, enumeration, collection, catalogFolder, systemsFolder, dataModelFolder, referenceFolder, processing, system, dataObject, umlClass, datatype, referenceObject, person, group, postOfOrg, created] = await Promise.all([
    post(`schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'C' }),
    post(`schemes/${scheme.id}/enumerations`, { _type: 'Enumeration', label: 'E' }),
    post(`schemes/${scheme.id}/collections`, { _type: 'Collection', label: 'Col' }),
    post(`schemes/${catalog.id}/collections`, { _type: 'Collection', label: 'Col' }),
    post(`schemes/${systemCatalog.id}/collections`, { _type: 'Collection', label: 'Col' }),
    post(`schemes/${dataModel.id}/collections`, { _type: 'Collection', label: 'Col' }),
    post(`schemes/${referenceModel.id}/collections`, { _type: 'Collection', label: 'Col' }),
    post(`schemes/${scheme.id}/processings`, { _type: 'Processing', label: 'Proc' }),
    post(`schemes/${systemCatalog.id}/systems`, { _type: 'System', label: 'Sys' }),
    post(`schemes/${dataModel.id}/dataObjects`, { _type: 'DataObject', label: 'DO' }),
    post(`schemes/${dataModel.id}/dataObjects`, { _type: 'UmlClass', label: 'UC' }),
    post(`schemes/${dataModel.id}/datatypes`, { _type: 'Datatype', label: 'DT' }),
    post(`schemes/${referenceModel.id}/enumerations`, { _type: 'ReferenceObject', label: 'RO' }),
    post(`organizations/${org.id}/persons`, { _type: 'Person', givenName: 'Pia' }),
    post(`organizations/${org.id}/groups`, { _type: 'Group', label: 'G' }),
    post(`organizations/${org.id}/posts`, { _type: 'Post', label: 'P' }),
    // A named profile of the default tenant (decisions §7.5).
    t.request(`/api/${db}/profiles`, { method: 'POST', json: { name: profile } }),
  ]);
  expect(created.status, `profile ${profile}`).to.equal(201);
  const [attribute, other, literal, dataset, umlAttribute, composition, referenceValue, attribution, holdsPost] = await Promise.all([
    post(`classifiers/${classifier.id}/attributes`, { _type: 'BusinessAttribute', label: 'A' }),
    post(`classifiers/${classifier.id}/attributes`, { _type: 'BusinessAttribute', label: 'B' }),
    post(`enumerations/${enumeration.id}/literals`, { _type: 'Literal', label: 'L' }),
    post(`collections/${catalogFolder.id}/datasets`, { _type: 'Dataset', label: 'DS' }),
    post(`umlClasses/${umlClass.id}/attributes`, { _type: 'UmlAttribute', label: 'UA' }),
    post(`umlClasses/${umlClass.id}/compositions`, { _type: 'Composition', hasRange: dataObject.id }),
    post(`referenceObjects/${referenceObject.id}/literals`, { _type: 'ReferenceValue', label: 'RV', timeSeries: [{ code: 'RV' }] }),
    post(`schemes/${scheme.id}/attributedTo`, { _type: 'Attribution', attributedTo: person.id }),
    post(`persons/${person.id}/holdsPost`, { _type: 'HoldsPost', holdsPost: postOfOrg.id }),
  ]);
  const [derivation, distribution, deployment, usage] = await Promise.all([
    post(`attributes/${attribute.id}/derivedTo`, { _type: 'Derivation', derivedTo: other.id }),
    post(`datasets/${dataset.id}/distributions`, { _type: 'Distribution', label: 'CSV' }),
    post(`datasets/${dataset.id}/deployments`, { _type: 'Deployment', deploymentOf: dataset.id, deployedIn: system.id }),
    post(`processings/${processing.id}/usages`, { _type: 'Usage', usageOf: dataset.id }),
  ]);
  const both = (o: Json) => [o.id, o.label].filter((k) => typeof k === 'string').map((k) => encodeURIComponent(k));
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
  const parents = Object.fromEntries(objects.flatMap((o) => ['inScheme', 'inCollection', 'inSystem', 'literalOf'].filter((r) => typeof o[r] === 'string').map((r) => [`${o._type}.${r}`, o[r]])));
  const ids: Record<string, string> = { ...Object.fromEntries(objects.map((o) => [o._type, o.id])), Asset: scheme.id, Activity: processing.id, Resource: org.id, ...parents };
  const keysOfKind = {
    DataCatalog: { schemes: [catalog.id], collections: [catalogFolder.id] },
    SystemCatalog: { schemes: [systemCatalog.id], collections: [systemsFolder.id] },
    DataModel: { schemes: [dataModel.id], collections: [dataModelFolder.id] },
    ReferenceDataModel: { schemes: [referenceModel.id], collections: [referenceFolder.id] },
  };
  return { db, spare, profile, keys, keysOfKind, ids, job: made.job, accessKey: made.accessKey, editor, reader, people: made };
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
