/**
 * The malformed values the fuzz test sends: a seeded random choice among
 * them, so that every run sends the same requests, and request bodies built
 * from the OpenAPI document's schemas and then broken.
 */
import zlib from 'node:zlib';

/** mulberry32: small, fast and the same on every platform. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = () => number;

export function pick<T>(rnd: Random, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)];
}

/** `count` items drawn without repetition, in a seeded order. */
export function sample<T>(rnd: Random, items: readonly T[], count: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, count);
}

const LONG = 'x'.repeat(5000);

/** Path segments, already percent-encoded where they need to be. */
export const BAD_SEGMENTS = [
  'nope', '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF', '%00', '%2e%2e', '..', '.', '%', '%zz', '%E0%A4%A',
  LONG, '%F0%9F%92%A9', '%E2%80%AE%E2%80%8B', 'a%2Fb', '%20', '__proto__', 'constructor', '%C0%AF', "1'%20or%20'1'%3D'1", '%5B%5D', 'pg_catalog', 'A'.repeat(64),
  '%ED%A0%80', '%EF%BF%BF', 'meta', 'NULL',
];

export const BAD_QUERY_VALUES: Record<string, string[]> = {
  integer: ['abc', '-1', '0', '1.5', '1e309', '99999999999999999999999', '', '%00', '0x10', '%201', 'NaN', 'Infinity', '9'.repeat(400), '-0', '8640000000000001'],
  string: ['', '%00', LONG, '%FF', '__proto__', '%E0%A4%A', 'W10', 'WyJhIiwiMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIl0', '%5B%5D'],
};

/** Query strings that are wrong whatever the operation: repeated, unknown, prototype names, brackets. */
export const BAD_QUERIES = [
  'limit=1&limit=2', 'version=1&version=2', '__proto__=1', 'constructor=1', 'toString=x', 'hasOwnProperty=1', 'loginId[]=x', 'a[b]=c', 'label=%00',
  `label=${LONG}`, 'operation=REPLACE&operation=REPLACE', 'format=CSV&format=XML', 'statementTimeout=-1', 'language=%00', '=', '&&&', `${'a=1&'.repeat(1500)}`,
  'cursor=%FF%FE', 'limit=%00', 'status=WORKING&status=FINAL', 'mine=true', 'q=%00',
];

const base64 = (text: string) => Buffer.from(text, 'latin1').toString('base64');

export const BAD_HEADERS: Record<string, string[]> = {
  'accept-version': ['abc', '-1', '1e400', '9'.repeat(400), '0', '8640000000000001', '1.5', ' '],
  'if-match': ['"', 'W/', '*, 1', 'W/"999999999999999999999"', 'x'.repeat(2000), '""', ',', 'W/"-1"', '*'],
  'service-tenant': ['Nope', LONG, '%00', '\u00ff\u00fe', '__proto__', ' ', 'Default\t', 'Second', '00000000-0000-0000-0000-000000000000'],
  'accept-language': ['xx', '*', 'de;q=abc', ','.repeat(1000), 'de-DE-x-'.repeat(100)],
  authorization: ['Basic', 'Basic !!!', `Basic ${base64('nocolon')}`, `Basic ${base64(':')}`, `Basic ${base64(`nobody:${'x'.repeat(10_000)}`)}`, 'Bearer x.y.z',
    `Bearer ${'a'.repeat(10_000)}`, 'Digest x', `Basic ${base64('\u00ff\u00fe:\u00ff')}`, `Bearer ${base64('{"alg":"none"}')}.${base64('{"sub":"admin"}')}.`],
  'service-access-key': ['mdsk_x', LONG, '%00', 'mdsk_' + 'A'.repeat(43), ' '],
  accept: ['application/xml', '*/*;q=abc', 'text/csv'],
  'content-type': ['text/plain', 'application/json; charset=utf-16', 'multipart/form-data', 'application/x-www-form-urlencoded', 'application/json; boundary=x', '*/*'],
};

/** Texts that are not JSON, or not the JSON a write takes. */
export const BAD_TEXTS = [
  '', ' ', 'null', 'true', '42', '"str"', '[', '{', '{"a":', 'not json', '\u0000', '{"a":1}x', '\ufeff{}', '{"a":1,"a":2}', '1e309',
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`, `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
  '{"__proto__":{"x":1}}', '{"a":{"\\u005f_proto__":[]}}', '[{"constructor":{"prototype":{"x":1}}}]', '{"\\ud800":"\\udfff"}', '{"a":"\\u0000"}',
];

/**
 * A value of the schema's type, as a client that reads the document would
 * send; a reference names a real object of the type its description names.
 */
export function sampleOf(schema: Json, doc: Json, idsByType: Record<string, string> = {}, depth = 0): unknown {
  const s = resolve(schema, doc);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.oneOf || s.anyOf) return sampleOf((s.oneOf ?? s.anyOf)[0], doc, idsByType, depth);
  switch (s.type) {
    case 'object': {
      if (depth > 3) return {};
      const out: Json = {};
      for (const [name, property] of Object.entries<Json>(s.properties ?? {})) {
        if (!property.writeOnly) out[name] = sampleOf(property, doc, idsByType, depth + 1);
      }
      return out;
    }
    case 'array': return depth > 3 ? [] : [sampleOf(s.items ?? {}, doc, idsByType, depth + 1)];
    case 'integer': return 1;
    case 'number': return 1.5;
    case 'boolean': return true;
    case 'string': return s.format === 'uuid' ? idsByType[/Technical key of an? (\w+)/.exec(s.description ?? '')?.[1] ?? ''] ?? '00000000-0000-4000-8000-000000000000' : 'Fuzz';
    default: return null;
  }
}

export type Json = Record<string, any>;

export function resolve(schema: Json, doc: Json): Json {
  let s = schema ?? {};
  while (s.$ref) s = s.$ref.split('/').slice(1).reduce((o: Json, k: string) => o[k], doc);
  return s;
}

/** Values of the wrong kind, or of the right kind and wrong anyway, for any property. */
const WRONG_VALUES: unknown[] = [
  1e308, -0, 2 ** 53 + 1, true, null, [], {}, 'x', 'x'.repeat(100_000), { nested: { deeper: [1, { a: null }] } }, [[[[]]]], '\u0000', 'a\u0000b',
  '\ud800', '\u202e\u200b', 'e\u0301', '\ufffe', '00000000-0000-0000-0000-000000000000', 'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ', -1, 0.1, '1', '',
  { constructor: 1, toString: 'x', hasOwnProperty: 1, valueOf: [] },
];

const nested = (depth: number): unknown => (depth ? { a: nested(depth - 1) } : 1);

/**
 * A body for a write, broken in one way: a property of the wrong kind, an
 * unknown one, prototype names, a deep or wide value, the wrong shape.
 */
export function brokenBody(rnd: Random, schema: Json, doc: Json, idsByType: Record<string, string>): string {
  const ids = Object.values(idsByType);
  const s = resolve(schema, doc);
  const list = s.type === 'array';
  const item = sampleOf(list ? s.items : s, doc, idsByType) as Json;
  const itemSchema = resolve(list ? s.items : s, doc);
  const names = Object.keys(resolve(itemSchema.oneOf?.[0] ?? itemSchema, doc).properties ?? { label: {} });
  const breakers: (() => unknown)[] = [
    () => ({ ...item, [pick(rnd, names)]: pick(rnd, WRONG_VALUES) }),
    () => ({ ...item, [pick(rnd, names)]: pick(rnd, WRONG_VALUES), [pick(rnd, names)]: pick(rnd, WRONG_VALUES) }),
    () => ({ ...item, [pick(rnd, names)]: pick(rnd, ids) }),
    () => ({ ...item, id: pick(rnd, [...ids, 'not-a-uuid', ids[0]?.toUpperCase(), 42]) }),
    () => ({ ...item, _type: pick(rnd, ['Asset', 'Nope', 7, '', 'Tenant', 'User', 'Resource', '__proto__', ['Scheme']]) }),
    () => ({ ...item, customProperties: pick<unknown>(rnd, ['x', [], { constructor: 1 }, { toString: 'x' }, { '': 1 }, { 'a.b': 1 }, { x: { y: { z: [] } } }, { [LONG]: 1 }]) }),
    () => ({ ...item, _links: pick(rnd, ['x', { self: 1 }, []]), _embedded: { x: [1] } }),
    () => ({ ...item, [`k${'\u0000'}`]: 1, [LONG]: 2 }),
    () => ({ ...item, label: nested(2000) }),
    () => Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, i])),
    () => (list ? item : [item]),
    () => (list ? Array.from({ length: 20_000 }, () => ({})) : [[item]]),
    () => ({ ...item, label: 'x'.repeat(1_000_000) }),
  ];
  const body = pick(rnd, breakers)();
  const wrapped = list && !Array.isArray(body) && rnd() < 0.7 ? [body] : body;
  return JSON.stringify(wrapped);
}

/** Bodies whose encoding or type is not what the headers say. */
export function badEncodings(body: string): { headers: Record<string, string>; body: Buffer | string }[] {
  return [
    { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body },
    { headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' }, body },
    { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip, br' }, body: zlib.gzipSync(body) },
    { headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: zlib.brotliCompressSync(body).subarray(0, 5) },
    { headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' }, body: zlib.gzipSync(body).subarray(0, 15) },
    { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: zlib.gzipSync(body) },
    { headers: { 'content-type': 'application/json; charset=utf-16' }, body: Buffer.from(body, 'utf16le') },
    { headers: { 'content-type': 'text/plain' }, body },
    { headers: { 'content-type': 'multipart/form-data' }, body },
    { headers: {}, body },
  ];
}

/** Ways to spoil a path that is otherwise right. */
export const PATH_SPOILERS: ((path: string) => string)[] = [
  (p) => `${p}/`, (p) => `${p}//`, (p) => p.replace(/^\/(rest|api)\//, '/$1//'), (p) => `${p}/..`, (p) => `${p}/%2e%2e`, (p) => `${p}%00`,
  (p) => `${p}/${'x'.repeat(8000)}`, (p) => `${p};x=1`, (p) => p.toUpperCase(), (p) => `${p}/%`, (p) => `${p}/%FF%FE`, (p) => `${p}/a/b/c/d/e/f/g/h/i/j/k`,
  (p) => `${p}?${'a'.repeat(7000)}`, (p) => `${p}/%2F`, (p) => p.replace(/\//g, '%2F'),
];

export const ODD_METHODS = ['OPTIONS', 'TRACE', 'PROPFIND', 'LOCK', 'PURGE'];
