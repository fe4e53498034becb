/**
 * The benchmark's objects spread over the second edition's types (issue 19;
 * decisions §7.1), n objects in all, loaded with list PUTs through the typed
 * client like bench/dataset.ts:
 *
 * - a data catalog `S`: ten collections with ten sub-collections each;
 *   datasets in all 110 collections, three distributions each, and one usage
 *   each (of a system); classifiers with up to 100 attributes each;
 * - a system catalog `Systems`: ten systems, four subsystems each, and
 *   sub-subsystems under those;
 * - a reference data model `Reference`: reference objects (reference data of
 *   the `enumerations` list) with fourteen reference values each, every value
 *   with a time series of two periods;
 * - an organization `Org` with ten departments holding persons and posts;
 *   every fourth person holds a post;
 * - derivations between assets of different types: each dataset's first
 *   distribution is derived into five assets (attributes, reference values,
 *   other datasets).
 *
 * What the REST benchmark reads: every object by technical key, sampled over
 * all types; 4-level paths of three kinds (scheme/collection/classifier/
 * attribute, scheme/collection/dataset/distribution, and
 * scheme/system/subsystem/sub-subsystem).
 */
import { ok, type ServiceClient } from '../client/index.ts';
import { inParallel, labels, timeListPut, type Dataset } from './dataset.ts';

/** An object to read by technical key: `/rest/<db>/<list>/<id>`, the list named after its type's plural. */
export interface Reachable { id: string; list: string }

/** A 4-level business-key path below a scheme: `/schemes/<scheme>/<list>/<key>/<list>/<key>/<list>/<key>`. */
export interface KeyPath { scheme: string; steps: [string, string][] }

export interface SpreadDataset {
  objects: Reachable[];
  paths: KeyPath[];
  /** Objects per type, as loaded. */
  counts: Record<string, number>;
  loadSeconds: number;
  listPut: Dataset['listPut'];
}

/** Shares of n by kind of object; attributes take what is left. */
const SHARES = { datasets: 0.05, systems: 0.02, referenceObjects: 0.01, posts: 0.01, persons: 0.04 };
const DISTRIBUTIONS_PER_DATASET = 3;
const VALUES_PER_REFERENCE_OBJECT = 14;
const ATTRIBUTES_PER_CLASSIFIER = 100;
const DERIVATIONS_PER_SOURCE = 5;
const DEPARTMENTS = 10;

/** Splits `count` items over `buckets` as evenly as it goes; bucket i's share. */
const shareOf = (count: number, buckets: number, i: number) => Math.floor(count / buckets) + (i < count % buckets ? 1 : 0);

export async function loadSpreadDataset(client: ServiceClient, db: string, n: number): Promise<SpreadDataset> {
  const started = performance.now();
  const objects: Reachable[] = [];
  const paths: KeyPath[] = [];
  const counts: Record<string, number> = {};
  const add = (list: string, items: { id?: string }[]) => {
    for (const x of items) objects.push({ id: x.id!, list });
    counts[list] = (counts[list] ?? 0) + items.length;
  };
  const path = { db };

  // The data catalog and its collections.
  const catalog = await ok(client.POST('/rest/{db}/schemes', { params: { path }, body: { _type: 'Scheme', label: 'S', modelType: 'DataCatalog' } }));
  add('schemes', [catalog]);
  const topList = await ok(client.PUT('/rest/{db}/schemes/{key}/collections', {
    params: { path: { db, key: 'S' } }, body: labels('C', 10).map((label) => ({ _type: 'Collection' as const, label })),
  }));
  const top = topList._embedded.collections.map((c) => ({ id: c.id!, label: c.label!, top: true }));
  const collections = [...top];
  await inParallel(top, async (c) => {
    const subs = await ok(client.PUT('/rest/{db}/collections/{key}/collections', {
      params: { path: { db, key: c.id } }, body: labels(`${c.label}-`, 10).map((label) => ({ _type: 'Collection' as const, label })),
    }));
    collections.push(...subs._embedded.collections.map((s) => ({ id: s.id!, label: s.label!, top: false })));
  });
  add('collections', collections);

  // Systems: ten, four subsystems each, the rest spread as sub-subsystems.
  const systemCount = Math.max(50, Math.round(n * SHARES.systems));
  add('schemes', [await ok(client.POST('/rest/{db}/schemes', { params: { path }, body: { _type: 'Scheme', label: 'Systems', modelType: 'SystemCatalog' } }))]);
  const systemsTop = (await ok(client.PUT('/rest/{db}/schemes/{key}/systems', {
    params: { path: { db, key: 'Systems' } }, body: labels('Y', 10).map((label) => ({ _type: 'System' as const, label, physicalName: label.toLowerCase() })),
  })))._embedded.systems.map((s) => ({ id: s.id!, label: s.label! }));
  const subsystems: { id: string; label: string; parent: string }[] = [];
  await inParallel(systemsTop, async (s) => {
    const list = await ok(client.PUT('/rest/{db}/systems/{key}/systems', {
      params: { path: { db, key: s.id } }, body: labels(`${s.label}-`, 4).map((label) => ({ _type: 'System' as const, label })),
    }));
    subsystems.push(...list._embedded.systems.map((x) => ({ id: x.id!, label: x.label!, parent: s.label })));
  });
  const leafCount = Math.max(0, systemCount - 10 - subsystems.length);
  const systems = [...systemsTop, ...subsystems];
  await inParallel(subsystems.map((s, i) => ({ ...s, i })), async (s) => {
    const count = shareOf(leafCount, subsystems.length, s.i);
    if (!count) return;
    const list = await ok(client.PUT('/rest/{db}/systems/{key}/systems', {
      params: { path: { db, key: s.id } }, body: labels(`${s.label}-`, count).map((label) => ({ _type: 'System' as const, label })),
    }));
    for (const x of list._embedded.systems) {
      systems.push({ id: x.id!, label: x.label! });
      paths.push({ scheme: 'Systems', steps: [['systems', s.parent], ['systems', s.label], ['systems', x.label!]] });
    }
  });
  add('systems', systems);

  // Datasets in every collection, their distributions, and a usage of a system each.
  const datasetCount = Math.max(collections.length, Math.round(n * SHARES.datasets));
  const datasets: { id: string; label: string; collection: (typeof collections)[number] }[] = [];
  await inParallel(collections.map((c, i) => ({ c, i })), async ({ c, i }) => {
    const items = labels(`D${c.label}-`, shareOf(datasetCount, collections.length, i)).map((label) => ({
      _type: 'Dataset' as const, label, accrualPeriodicity: 'daily', retentionPeriod: 'P10Y', tags: ['bench', c.label],
    }));
    if (!items.length) return;
    const list = await ok(client.PUT('/rest/{db}/collections/{key}/datasets', { params: { path: { db, key: c.id } }, body: items }));
    datasets.push(...list._embedded.datasets.map((d) => ({ id: d.id!, label: d.label!, collection: c })));
  });
  add('datasets', datasets);
  const firstDistributions: string[] = [];
  await inParallel(datasets.map((d, i) => ({ d, i })), async ({ d, i }) => {
    const list = await ok(client.PUT('/rest/{db}/datasets/{key}/distributions', {
      params: { path: { db, key: d.id } },
      body: ['csv', 'json', 'parquet'].slice(0, DISTRIBUTIONS_PER_DATASET).map((format) => ({
        _type: 'Distribution' as const, label: format, format: format.toUpperCase(), mediaType: `application/${format}`, downloadURL: `https://example.org/${d.label}.${format}`,
      })),
    }));
    add('distributions', list._embedded.distributions);
    firstDistributions.push(list._embedded.distributions[0].id!);
    if (d.collection.top) for (const x of list._embedded.distributions) paths.push({ scheme: 'S', steps: [['collections', d.collection.label], ['datasets', d.label], ['distributions', x.label!]] });
    const usages = await ok(client.PUT('/rest/{db}/datasets/{key}/usages', {
      params: { path: { db, key: d.id } }, body: [{ _type: 'Usage' as const, usageOf: systems[i % systems.length].id, qualifier: 'reads' }],
    }));
    add('usages', usages._embedded.usages);
  });

  // Reference data: reference objects with values and their time series.
  const referenceObjectCount = Math.max(5, Math.round(n * SHARES.referenceObjects));
  add('schemes', [await ok(client.POST('/rest/{db}/schemes', { params: { path }, body: { _type: 'Scheme', label: 'Reference', modelType: 'ReferenceDataModel' } }))]);
  const referenceObjects = (await ok(client.PUT('/rest/{db}/schemes/{key}/enumerations', {
    params: { path: { db, key: 'Reference' } }, body: labels('R', referenceObjectCount).map((label) => ({ _type: 'ReferenceObject' as const, label })),
  })))._embedded.enumerations;
  add('referenceObjects', referenceObjects);
  const referenceValues: string[] = [];
  await inParallel(referenceObjects, async (r) => {
    const list = await ok(client.PUT('/rest/{db}/referenceObjects/{key}/literals', {
      params: { path: { db, key: r.id! } },
      body: labels('V', VALUES_PER_REFERENCE_OBJECT).map((label, i) => ({
        _type: 'ReferenceValue' as const, label, code: label, order: i,
        timeSeries: [
          { code: label, shortText: `${label} until 2020`, validFrom: Date.UTC(2000, 0, 1), validTo: Date.UTC(2020, 0, 1) },
          { code: `${label}N`, shortText: `${label} since 2020`, validFrom: Date.UTC(2020, 0, 1), validTo: null },
        ],
      })),
    }));
    add('referenceValues', list._embedded.literals);
    referenceValues.push(...list._embedded.literals.map((v) => v.id!));
  });

  // An organization: departments with posts and persons; every fourth person holds a post.
  const org = await ok(client.POST('/rest/{db}/organizations', { params: { path }, body: { _type: 'Organization', label: 'Org' } }));
  const departments = (await ok(client.PUT('/rest/{db}/organizations/{key}/organizations', {
    params: { path: { db, key: org.id! } }, body: labels('Dept', DEPARTMENTS).map((label) => ({ _type: 'Organization' as const, label })),
  })))._embedded.organizations;
  add('organizations', [org, ...departments]);
  const postCount = Math.max(DEPARTMENTS, Math.round(n * SHARES.posts));
  const personCount = Math.max(DEPARTMENTS, Math.round(n * SHARES.persons));
  const holders: { person: string; post: string }[] = [];
  await inParallel(departments.map((d, i) => ({ d, i })), async ({ d, i }) => {
    const posts = (await ok(client.PUT('/rest/{db}/organizations/{key}/posts', {
      params: { path: { db, key: d.id! } }, body: labels('P', shareOf(postCount, DEPARTMENTS, i)).map((label) => ({ _type: 'Post' as const, label })),
    })))._embedded.posts;
    add('posts', posts);
    const persons = (await ok(client.PUT('/rest/{db}/organizations/{key}/persons', {
      params: { path: { db, key: d.id! } },
      body: labels('', shareOf(personCount, DEPARTMENTS, i)).map((name) => ({ _type: 'Person' as const, givenName: `Given${name}`, familyName: `${d.label}-${name}`, email: `p${name}@example.org` })),
    })))._embedded.persons;
    add('persons', persons);
    persons.forEach((p, j) => { if (j % 4 === 0 && posts.length) holders.push({ person: p.id!, post: posts[(j / 4) % posts.length].id! }); });
  });
  await inParallel(holders, async (h) => {
    const list = await ok(client.PUT('/rest/{db}/persons/{key}/holdsPost', { params: { path: { db, key: h.person } }, body: [{ _type: 'HoldsPost' as const, holdsPost: h.post }] }));
    add('holdsPosts', list._embedded.holdsPost);
  });

  // Classifiers and attributes take what is left but the derivations.
  const derivationCount = firstDistributions.length * DERIVATIONS_PER_SOURCE;
  const rest = Math.max(2, n - objects.length - derivationCount);
  const classifierCount = Math.max(1, Math.ceil(rest / (ATTRIBUTES_PER_CLASSIFIER + 1)));
  const attributeCount = Math.max(1, rest - classifierCount);
  const classifiers: { id: string; label: string; collection: (typeof collections)[number] }[] = [];
  await inParallel(collections.map((c, i) => ({ c, i })), async ({ c, i }) => {
    const items = labels(`K${c.label}-`, shareOf(classifierCount, collections.length, i)).map((label) => ({ _type: 'Classifier' as const, label }));
    if (!items.length) return;
    const list = await ok(client.PUT('/rest/{db}/collections/{key}/classifiers', { params: { path: { db, key: c.id } }, body: items }));
    classifiers.push(...list._embedded.classifiers.map((k) => ({ id: k.id!, label: k.label!, collection: c })));
  });
  add('classifiers', classifiers);
  const attributes: string[] = [];
  await inParallel(classifiers.map((k, i) => ({ k, i })), async ({ k, i }) => {
    const items = labels('a', shareOf(attributeCount, classifiers.length, i)).map((label) => ({ _type: 'BusinessAttribute' as const, label, dataType: 'STRING' as const }));
    if (!items.length) return;
    const list = await ok(client.PUT('/rest/{db}/classifiers/{key}/attributes', { params: { path: { db, key: k.id } }, body: items }));
    add('attributes', list._embedded.attributes);
    attributes.push(...list._embedded.attributes.map((a) => a.id!));
    if (k.collection.top) for (const a of list._embedded.attributes) paths.push({ scheme: 'S', steps: [['collections', k.collection.label], ['classifiers', k.label], ['attributes', a.label!]] });
  });

  // Derivations between assets of different types: from a distribution into attributes, reference values and datasets.
  const targets = [attributes, referenceValues, datasets.map((d) => d.id)];
  await inParallel(firstDistributions.map((d, i) => ({ d, i })), async ({ d, i }) => {
    const into = Array.from({ length: DERIVATIONS_PER_SOURCE }, (_, j) => {
      const pool = targets[j % targets.length];
      return pool[(i * DERIVATIONS_PER_SOURCE + j) % pool.length];
    });
    const list = await ok(client.PUT('/rest/{db}/distributions/{key}/derivedTo', {
      params: { path: { db, key: d } }, body: [...new Set(into)].map((to) => ({ _type: 'Derivation' as const, derivedTo: to, qualifier: 'copy' })),
    }));
    add('derivations', list._embedded.derivedTo);
  });
  const loadSeconds = (performance.now() - started) / 1000;
  return { objects, paths, counts, loadSeconds, listPut: await timeListPut(client, db, top[0].id) };
}
