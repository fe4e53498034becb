/**
 * Loads the benchmark's objects through the REST interface with list PUTs:
 * one scheme, ten collections with ten sub-collections each, classifiers
 * spread over all 110 collections and about 200 attributes per classifier,
 * n objects in all. Then times one list PUT of 10,000 attributes under a
 * classifier of its own.
 *
 * The calls go through the typed client, so they address lists below the
 * first level by their parent's technical key (`/rest/{db}/collections/{key}/
 * classifiers`), the form the OpenAPI document describes; the answers of the
 * list PUTs hand out those keys.
 */
import { ok, type ServiceClient } from '../client/index.ts';

export interface Attribute {
  id: string;
  /** Business keys from the scheme down, when the path has four levels (scheme/collection/classifier/attribute). */
  keys?: string[];
}

export interface Dataset {
  attributes: Attribute[];
  loadSeconds: number;
  listPut: { objects: number; seconds: number };
}

const ATTRIBUTES_PER_CLASSIFIER = 200;
const BIG_LIST = 10_000;
const PARALLEL_PUTS = 4;

/** Runs the tasks with a few in flight at a time. */
export async function inParallel<T>(items: T[], task: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: PARALLEL_PUTS }, worker));
}

export const labels = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);

export async function loadDataset(client: ServiceClient, db: string, n: number): Promise<Dataset> {
  const started = performance.now();
  const scheme = 'S';
  await ok(client.POST('/rest/{db}/schemes', { params: { path: { db } }, body: { _type: 'Scheme', label: scheme } }));
  const topLabels = labels('C', 10);
  const topList = await ok(client.PUT('/rest/{db}/schemes/{key}/collections', {
    params: { path: { db, key: scheme } }, body: topLabels.map((label) => ({ _type: 'Collection' as const, label })),
  }));
  // A collection: its technical key and its labels after the scheme, e.g. ['C01'] or ['C01', 'C01-03'].
  const top = topList._embedded.collections.map((c) => ({ id: c.id!, keys: [c.label!] }));
  const collections = [...top];
  await inParallel(top, async (c) => {
    const subs = await ok(client.PUT('/rest/{db}/collections/{key}/collections', {
      params: { path: { db, key: c.id } }, body: labels(`${c.keys[0]}-`, 10).map((label) => ({ _type: 'Collection' as const, label })),
    }));
    collections.push(...subs._embedded.collections.map((s) => ({ id: s.id!, keys: [...c.keys, s.label!] })));
  });

  const classifierCount = Math.max(1, Math.ceil((n - 1 - collections.length) / (ATTRIBUTES_PER_CLASSIFIER + 1)));
  const attributeCount = Math.max(0, n - 1 - collections.length - classifierCount);
  const planned: { collection: (typeof collections)[number]; label: string }[] = [];
  for (let i = 0; i < classifierCount; i++) planned.push({ collection: collections[i % collections.length], label: `K${i}` });
  const classifiers: { id: string; collection: string[]; label: string }[] = [];
  await inParallel(collections, async (c) => {
    const mine = planned.filter((k) => k.collection === c);
    if (!mine.length) return;
    const list = await ok(client.PUT('/rest/{db}/collections/{key}/classifiers', {
      params: { path: { db, key: c.id } }, body: mine.map((k) => ({ _type: 'Classifier' as const, label: k.label })),
    }));
    classifiers.push(...list._embedded.classifiers.map((k) => ({ id: k.id!, collection: c.keys, label: k.label! })));
  });
  // Keys in the order planned, so that the attributes are spread as before whatever order the PUTs finished in.
  const order = new Map(planned.map((k, i) => [k.label, i]));
  classifiers.sort((a, b) => order.get(a.label)! - order.get(b.label)!);

  const attributes: Attribute[] = [];
  await inParallel(classifiers.map((k, i) => ({ ...k, i })), async (k) => {
    const count = Math.floor(attributeCount / classifierCount) + (k.i < attributeCount % classifierCount ? 1 : 0);
    const items = labels('a', count).map((label) => ({ _type: 'BusinessAttribute' as const, label, dataType: 'STRING' as const }));
    const list = await ok(client.PUT('/rest/{db}/classifiers/{key}/attributes', { params: { path: { db, key: k.id } }, body: items }));
    for (const a of list._embedded.attributes) {
      attributes.push({ id: a.id!, keys: k.collection.length === 1 ? [scheme, k.collection[0], k.label, a.label!] : undefined });
    }
  });
  const loadSeconds = (performance.now() - started) / 1000;

  return { attributes, loadSeconds, listPut: await timeListPut(client, db, top[0].id) };
}

/** Times one list PUT of 10,000 attributes under a new classifier `Big` of the collection. */
export async function timeListPut(client: ServiceClient, db: string, collection: string): Promise<Dataset['listPut']> {
  const bigClassifier = await ok(client.POST('/rest/{db}/collections/{key}/classifiers', { params: { path: { db, key: collection } }, body: { _type: 'Classifier', label: 'Big' } }));
  const big = labels('big', BIG_LIST).map((label) => ({ _type: 'BusinessAttribute' as const, label, dataType: 'STRING' as const, title: `Attribute ${label}` }));
  const putStarted = performance.now();
  const list = await ok(client.PUT('/rest/{db}/classifiers/{key}/attributes', { params: { path: { db, key: bigClassifier.id! } }, body: big }));
  const seconds = (performance.now() - putStarted) / 1000;
  if (list.total !== BIG_LIST) throw new Error(`list PUT answered ${list.total} attributes, not ${BIG_LIST}`);
  return { objects: BIG_LIST, seconds };
}
