/**
 * Loads the benchmark's objects through the REST interface with list PUTs:
 * one scheme, ten collections with ten sub-collections each, classifiers
 * spread over all 110 collections and about 200 attributes per classifier,
 * n objects in all. Then times one list PUT of 10,000 attributes under a
 * classifier of its own.
 */
export type Rest = (method: string, path: string, body?: unknown) => Promise<any>;

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
async function inParallel<T>(items: T[], task: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: PARALLEL_PUTS }, worker));
}

const enc = (keys: string[]) => keys.map(encodeURIComponent);
const labels = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);

export async function loadDataset(rest: Rest, db: string, n: number): Promise<Dataset> {
  const started = performance.now();
  const scheme = 'S';
  await rest('PUT', `/rest/${db}/schemes`, [{ _type: 'Scheme', label: scheme }]);
  const top = labels('C', 10);
  await rest('PUT', `/rest/${db}/schemes/${scheme}/collections`, top.map((label) => ({ label })));
  // A collection is the list of keys after the scheme, e.g. ['C01'] or ['C01', 'C01-03'].
  const collections: string[][] = top.map((c) => [c]);
  await inParallel(top, async (c) => {
    const subs = labels(`${c}-`, 10);
    await rest('PUT', `/rest/${db}/schemes/${scheme}/collections/${c}/collections`, subs.map((label) => ({ label })));
    collections.push(...subs.map((s) => [c, s]));
  });
  const collectionPath = (keys: string[]) => `/rest/${db}/schemes/${scheme}/collections/${enc(keys).join('/collections/')}`;

  const classifierCount = Math.max(1, Math.ceil((n - 1 - collections.length) / (ATTRIBUTES_PER_CLASSIFIER + 1)));
  const attributeCount = Math.max(0, n - 1 - collections.length - classifierCount);
  const classifiers: { collection: string[]; label: string }[] = [];
  for (let i = 0; i < classifierCount; i++) classifiers.push({ collection: collections[i % collections.length], label: `K${i}` });
  await inParallel(collections, async (c) => {
    const mine = classifiers.filter((k) => k.collection === c);
    if (mine.length) await rest('PUT', `${collectionPath(c)}/classifiers`, mine.map((k) => ({ label: k.label })));
  });

  const attributes: Attribute[] = [];
  await inParallel(classifiers.map((k, i) => ({ ...k, i })), async (k) => {
    const count = Math.floor(attributeCount / classifierCount) + (k.i < attributeCount % classifierCount ? 1 : 0);
    const items = labels('a', count).map((label) => ({ label, dataType: 'STRING' }));
    const list = await rest('PUT', `${collectionPath(k.collection)}/classifiers/${encodeURIComponent(k.label)}/attributes`, items);
    for (const a of list._embedded.attributes) {
      attributes.push({ id: a.id, keys: k.collection.length === 1 ? [scheme, k.collection[0], k.label, a.label] : undefined });
    }
  });
  const loadSeconds = (performance.now() - started) / 1000;

  await rest('POST', `${collectionPath([top[0]])}/classifiers`, { _type: 'Classifier', label: 'Big' });
  const big = labels('big', BIG_LIST).map((label) => ({ label, dataType: 'STRING', title: `Attribute ${label}` }));
  const putStarted = performance.now();
  const list = await rest('PUT', `${collectionPath([top[0]])}/classifiers/Big/attributes`, big);
  const seconds = (performance.now() - putStarted) / 1000;
  if (list.total !== BIG_LIST) throw new Error(`list PUT answered ${list.total} attributes, not ${BIG_LIST}`);
  return { attributes, loadSeconds, listPut: { objects: BIG_LIST, seconds } };
}
