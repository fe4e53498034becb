/**
 * Reads an uploaded profile file: UTF-8, one YAML document, the shape of its
 * kind (ajv), then the metamodel (semantics.ts). Every problem names the
 * line and column where it is, found from the yaml package's node ranges,
 * so that an administrator can fix the file in an editor. Nothing here
 * stores anything; a file with any problem is refused whole.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import type { ErrorObject } from 'ajv';
import type { Metamodel, Violation } from '../../runtime/host.ts';
import { BASE_TYPES, shapeErrors, type ProfileKind } from './schema.ts';
import { checkAgainstMetamodel } from './semantics.ts';
import { checkStatuses } from './status-rules.ts';
import { classify } from './vocabulary.ts';
import { UNSTORABLE } from './values.ts';

/** More problems than this are summarized: a file that wrong needs a look as a whole. */
const MAX_PROBLEMS = 50;

/**
 * Aliases a file may use. Each one costs the yaml package a walk over the
 * document when it is resolved, so a file of many costs time by the square
 * of its size (650 kB with 60,000 aliases: 40 s); real annotation files use
 * a few, if any (SnakeYAML, the original product's parser, allows 50 to
 * collections).
 */
export const MAX_ALIASES = 100;

/**
 * Values aliases may add to the document. An alias shares its value in the
 * parsed document, but everything after reading (the checks, the stored
 * JSON, the compiled annotations) sees it written out: a 500 kB mapping
 * aliased 100 times would be stored as 50 MB.
 */
export const MAX_ALIAS_EXPANSION = 100_000;

export type Position = {
  line: number;
  column: number;
};

/** Where a path of the document stands in the file: at its key, or at its value. */
export type Locator = (path: (string | number)[], at?: 'key' | 'value') => Position;

export type ReadResult = { ok: true; document: Record<string, unknown> } | { ok: false; violations: Violation[] };

/** Refuses anything but one UTF-8 YAML document of the kind's shape that fits the metamodel. */
export function readProfile(kind: ProfileKind, bytes: Buffer, model: Metamodel): ReadResult {
  if (!bytes.length) return refuse([{ path: '', key: 'profileEmpty' }]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return refuse([{ path: '', key: 'profileNotUtf8' }]);
  }
  const lineCounter = new LineCounter();
  // Keys are checked for uniqueness below: the yaml package compares each key with all before it.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false, strict: true, logLevel: 'error' });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length) {
    return refuse(doc.errors.map((e) => ({ path: '', key: 'profileYamlError', params: { ...position(e.pos[0]), detail: firstLine(e.message) } })));
  }
  const structure = structureProblem(doc);
  if (structure) return refuse([{ path: '', key: structure.key, params: { ...position(structure.offset), ...structure.params } }]);
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    return refuse([{ path: '', key: 'profileNoDocument' }]);
  }
  let document: unknown;
  try {
    // The package's own alias count walks the document per alias; MAX_ALIASES and MAX_ALIAS_EXPANSION bound aliases instead.
    document = doc.toJS({ maxAliasCount: -1 });
  } catch (err) {
    return refuse([{ path: '', key: 'profileYamlError', params: { line: 1, column: 1, detail: firstLine(String((err as Error).message)) } }]);
  }
  if (addedByAliases(document) > MAX_ALIAS_EXPANSION) return refuse([{ path: '', key: 'profileAliasesExpand', params: { limit: MAX_ALIAS_EXPANSION } }]);
  const unstorable = firstUnstorable(doc);
  if (unstorable !== undefined) return refuse([{ path: '', key: 'profileUnstorableText', params: position(unstorable) }]);
  const at = locator(doc, position);
  if (!document || typeof document !== 'object' || Array.isArray(document)) return refuse([{ path: '', key: 'profileShapeMapping', params: at([]) }]);
  const top = classify(document as Record<string, unknown>, model);
  const refused: Violation[] = top.refused.map((r) => ({ path: r.key, key: r.reason, params: { ...at([r.key], 'key'), value: r.key, suggestion: r.suggestion } }));
  const shape = shapeErrors(kind, document, [...top.types, ...top.later]);
  if (shape.length || refused.length) return refuse([...refused, ...shapeViolations(shape, at)]);
  const violations = [...checkStatuses(kind, document as Record<string, unknown>, model, at), ...checkAgainstMetamodel(kind, document as Record<string, unknown>, model, at, top)];
  if (violations.length) return refuse(violations);
  return { ok: true, document: document as Record<string, unknown> };
}

function refuse(violations: Violation[]): ReadResult {
  const sorted = [...violations].sort((a, b) => Number(a.params?.line ?? 0) - Number(b.params?.line ?? 0)
    || Number(a.params?.column ?? 0) - Number(b.params?.column ?? 0));
  if (sorted.length <= MAX_PROBLEMS) return { ok: false, violations: sorted };
  return { ok: false, violations: [...sorted.slice(0, MAX_PROBLEMS), { path: '', key: 'profileTooManyProblems', params: { count: sorted.length - MAX_PROBLEMS } }] };
}

/** The first key given twice in a mapping, or the first alias beyond the limit: one walk over the document. */
function structureProblem(doc: Document): { key: string; offset: number; params?: Record<string, unknown> } | undefined {
  let found: { key: string; offset: number; params?: Record<string, unknown> } | undefined;
  let aliases = 0;
  visit(doc, {
    Map(_key, node) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) {
          found = { key: 'profileYamlError', offset: pair.key.range?.[0] ?? 0, params: { detail: 'Map keys must be unique' } };
          return visit.BREAK;
        }
        seen.add(pair.key.value);
      }
      return undefined;
    },
    Alias(_key, node) {
      if (++aliases <= MAX_ALIASES) return undefined;
      found = { key: 'profileTooManyAliases', offset: node.range?.[0] ?? 0, params: { limit: MAX_ALIASES } };
      return visit.BREAK;
    },
  });
  return found;
}

/**
 * How many values the document has written out beyond those it has (shared
 * values counted once per use); infinitely many when an alias stands inside
 * the value it names (`a: &a [*a]`).
 */
function addedByAliases(document: unknown): number {
  const IN_PROGRESS = -1;
  const sizes = new Map<object, number>();
  let unique = 0;
  const size = (value: unknown): number => {
    if (value === null || typeof value !== 'object') return 1;
    const known = sizes.get(value);
    if (known === IN_PROGRESS) return Infinity;
    if (known !== undefined) return known;
    sizes.set(value, IN_PROGRESS);
    const children = Array.isArray(value) ? value : Object.values(value);
    unique += children.length;
    const total = children.reduce((sum: number, child) => sum + size(child), 1);
    sizes.set(value, total);
    return total;
  };
  return size(document) - unique - 1;
}

/** Where the first text the database could not keep starts. */
function firstUnstorable(doc: Document): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && UNSTORABLE.test(node.value)) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return offset;
}

/** The yaml package's messages repeat the position and quote the source below it; the first line says it. */
function firstLine(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '').trim();
}

/** Finds the node of a path; keys are compared as text, as the parsed document has them. */
function locator(doc: Document, position: (offset: number) => Position): Locator {
  // Each mapping's keys are indexed once: a file with thousands of problems in one mapping is located in linear time.
  const indexes = new WeakMap<YAMLMap, Map<string, Pair>>();
  const pairOf = (map: YAMLMap, key: string): Pair | undefined => {
    let index = indexes.get(map);
    if (!index) {
      index = new Map();
      for (const p of map.items as Pair[]) if (!index.has(keyText(p.key))) index.set(keyText(p.key), p);
      indexes.set(map, index);
    }
    return index.get(key);
  };
  return (path, at = 'value') => {
    let node: unknown = doc.contents;
    let pair: Pair | undefined;
    for (const segment of path) {
      pair = undefined;
      if (isMap(node)) {
        pair = pairOf(node, String(segment));
        node = pair?.value;
      } else if (isSeq(node)) {
        node = node.items[Number(segment)];
      } else {
        node = undefined;
      }
      if (node === undefined && !pair) break;
    }
    const target = at === 'key' && pair && isNode(pair.key) ? pair.key
      : isNode(node) && node.range ? node
        : pair && isNode(pair.key) ? pair.key : doc.contents;
    return position((target as Node | null)?.range?.[0] ?? 0);
  };
}

function isNode(value: unknown): value is Node {
  return !!value && typeof value === 'object' && !isPair(value) && 'range' in (value as object);
}

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

const SHAPE_KEYS: Record<string, string> = {
  object: 'profileShapeMapping',
  'object,null': 'profileShapeMappingOrNothing',
  'array,object': 'profileShapeMappingOrSequence',
  array: 'profileShapeSequence',
  string: 'profileShapeText',
  number: 'profileShapeNumber',
  boolean: 'profileShapeBoolean',
  'string,number,boolean': 'profileShapeScalar',
  'number,string': 'profileShapeWidth',
};

function pathOf(error: ErrorObject): string[] {
  return error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function shapeViolations(errors: ErrorObject[], at: Locator): Violation[] {
  const seen = new Set<string>();
  const violations: Violation[] = [];
  for (const error of errors) {
    const path = pathOf(error);
    const v = shapeViolation(error, path, at);
    const id = `${v.path}\u0000${v.key}`;
    if (seen.has(id)) continue;
    seen.add(id);
    violations.push(v);
  }
  return violations;
}

function shapeViolation(error: ErrorObject, path: string[], at: Locator): Violation {
  const dotted = (p: string[]) => p.join('.');
  switch (error.keyword) {
    case 'false schema':
      // Custom properties under a literal of a stereotype's property: they would apply under two conditions at once.
      if (path.includes('stereotypes') && path[path.length - 1] === 'customProperties' && path[path.length - 3] === 'literals') {
        return { path: dotted(path), key: 'profileStereotypeLiteralCustom', params: at(path, 'key') };
      }
      // A key a profile may not use: it declares, which only the annotations do (schema.ts DECLARING_KEYS).
      return { path: dotted(path), key: 'profileDeclaresCustom', params: { ...at(path, 'key'), value: path[path.length - 1] } };
    case 'enum': {
      const value = String(error.data);
      const allowed = (error.params.allowedValues as unknown[]).join(', ');
      const key = path[path.length - 1] === 'baseType' ? 'profileUnknownBaseType' : 'profileNotAllowedValue';
      return { path: dotted(path), key, params: { ...at(path), value, allowed: key === 'profileUnknownBaseType' ? BASE_TYPES.join(', ') : allowed } };
    }
    case 'type': {
      const expected = ([] as string[]).concat(error.params.type as string | string[]).join(',');
      return { path: dotted(path), key: SHAPE_KEYS[expected] ?? 'profileShapeScalar', params: at(path) };
    }
    default:
      return { path: dotted(path), key: 'profileShapeScalar', params: at(path) };
  }
}
