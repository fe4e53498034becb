/**
 * JSON (decisions §8): the model as one nested object, written as records
 * arrive (nothing is held but the open objects' places), two spaces of
 * indentation, keys in the order the record gives them, lists after the
 * properties. Read through jsonc-parser's tree (strict: no comments, no
 * trailing commas), which keeps each object's offset for the line and
 * column in the logs of an upload; the yaml package's document model did
 * the same at a seventh of the speed (bench/transfer-formats.ts).
 *
 * An upload reads the file with JSON.parse first, which is 20 to 40 times
 * faster than the tree (15,000 records: 14-65 ms against 0.5-1.1 s, all of
 * it holding the event loop), and makes the tree only when a record's place
 * is asked for (a refused object's log line) or the file is not what the
 * tree reading accepts, which then reports the problem at its place.
 */
import { getNodeValue, parseTree as jsonTree, printParseErrorCode, type Node as JsonNode, type ParseError } from 'jsonc-parser';
import { FileProblem, type RecordWriter, type TransferFormat, type TransferRecord, type WriteContext } from '../records.ts';
import { descend, type Frame } from './tree.ts';
import { textOf } from './text.ts';

const pads: string[] = [];
/** n spaces (kept: the same few indentations over and over). */
const pad = (n: number) => (pads[n] ??= ' '.repeat(n));

/** The depth-th object's indentation: its properties stand 2 further in. */
const objectIndent = (depth: number) => depth * 4;

/** Bytes handed to the stream at once. */
const CHUNK = 65536;

/**
 * Writes records as they arrive. Each record's text is made in one piece and
 * the pieces are joined once per chunk: appending small strings one by one
 * made a rope that V8 flattened again when it became bytes, and that, with
 * the indentation made anew for every line, took most of a download's time.
 */
export function jsonWriter(out: NodeJS.WritableStream): RecordWriter {
  const stack: Frame[] = [];
  let parts: string[] = [];
  let length = 0;
  /** `,\n` and `"name": ` after an indentation, by indentation and name. */
  const keys: Map<string, string>[] = [];
  const keyAt = (indent: number, name: string) => {
    const byName = keys[indent] ??= new Map();
    let text = byName.get(name);
    if (text === undefined) byName.set(name, text = `,\n${pad(indent)}${JSON.stringify(name)}: `);
    return text;
  };
  const put = (text: string) => {
    parts.push(text);
    length += text.length;
  };
  const flush = async () => {
    if (!parts.length) return;
    const chunk = parts.join('');
    parts = [];
    length = 0;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
  };
  const close = (frame: Frame, depth: number) => {
    const indent = objectIndent(depth);
    put(frame.openList !== undefined ? `\n${pad(indent + 2)}]\n${pad(indent)}}` : `\n${pad(indent)}}`);
  };
  return {
    write(record: TransferRecord) {
      const depth = record.key.length;
      const { opens } = descend(stack, record, close);
      const indent = objectIndent(depth);
      let text = '';
      if (depth > 0) {
        const parent = stack[depth - 1];
        if (opens) {
          if (parent.openList !== undefined) text += `\n${pad(indent - 2)}]`;
          text += `,\n${pad(indent - 2)}${JSON.stringify(record.list)}: [\n${pad(indent)}`;
          parent.openList = record.list;
        } else {
          text += `,\n${pad(indent)}`;
        }
      }
      text += `{\n${pad(indent + 2)}"_type": ${JSON.stringify(record.type)}`;
      const properties = record.properties;
      for (const name in properties) {
        const value = properties[name];
        if (value === undefined) continue;
        text += keyAt(indent + 2, name) + JSON.stringify(value);
      }
      put(text);
      stack.push({ items: 0 });
      return length > CHUNK ? flush() : undefined;
    },
    async end() {
      while (stack.length) close(stack.pop()!, stack.length);
      put('\n');
      await flush();
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}

/** Offsets to 1-based lines and columns, by the starts of the lines. */
function positions(text: string): (offset: number) => { line: number; column: number } {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let [low, high] = [0, starts.length - 1];
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - starts[low] + 1 };
  };
}

/** The records of a JSON text, depth first (the shape of tree.ts: arrays of objects with `_type`, or named lists of the type, are lists). */
export function* jsonRecords(text: string, context: WriteContext): Generator<TransferRecord> {
  const at = positions(text);
  const errors: ParseError[] = [];
  const root = jsonTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  if (errors.length || !root) {
    const first = errors[0];
    throw new FileProblem(`JSON: ${first ? printParseErrorCode(first.error) : 'no content'}`, at(first?.offset ?? 0));
  }
  if (root.type !== 'object') throw new FileProblem('JSON: the file must hold one object (the model\'s root)', at(root.offset));
  const typeOfNode = (node: JsonNode): unknown => node.children?.find((p) => p.children?.[0].value === '_type')?.children?.[1]?.value;
  function* walk(node: JsonNode, key: string[], list: string | undefined): Generator<TransferRecord> {
    const type = typeOfNode(node);
    if (typeof type !== 'string') throw new FileProblem('an object without `_type`', at(node.offset));
    const listNames = new Set((context.typeOf(type)?.lists ?? []).map((l) => l.name));
    const properties: Record<string, unknown> = {};
    const lists: [string, JsonNode[]][] = [];
    for (const pair of node.children ?? []) {
      const [name, value] = [pair.children![0].value as string, pair.children![1]];
      if (name === '_type') continue;
      const items = value.type === 'array' ? value.children ?? [] : undefined;
      const typed = items !== undefined && items.length > 0 && items.every((i) => i.type === 'object' && typeOfNode(i) !== undefined);
      if (items && (typed || listNames.has(name))) lists.push([name, items]);
      else properties[name] = getNodeValue(value);
    }
    yield { type, key, ...(list !== undefined ? { list } : {}), properties, source: at(node.offset) };
    for (const [name, items] of lists) {
      for (const item of items) {
        if (item.type !== 'object') throw new FileProblem(`the list ${name} holds something that is not an object`, at(item.offset));
        const label = item.children?.find((p) => p.children?.[0].value === 'label')?.children?.[1]?.value;
        yield* walk(item, [...key, typeof label === 'string' ? label : ''], name);
      }
    }
  }
  yield* walk(root, [], undefined);
}

type Value = Record<string, unknown>;

function isObject(value: unknown): value is Value {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** What the tree reading takes for an object's type: a `_type` that is not an object or array (jsonc-parser's node value). */
function typeOfValue(value: Value): unknown {
  const type = Object.hasOwn(value, '_type') ? value._type : undefined;
  return type !== null && typeof type === 'object' ? undefined : type;
}

/**
 * A record of the fast reading: its place is found on first use (a getter on the prototype, not a closure per
 * record: 110,000 records held 13 MB of them).
 */
class FastRecord implements TransferRecord {
  declare readonly list?: string;
  readonly #index: number;
  readonly #placeOf: (i: number) => TransferRecord['source'];

  constructor(readonly type: string, readonly key: string[], list: string | undefined, readonly properties: Record<string, unknown>,
    index: number, placeOf: (i: number) => TransferRecord['source']) {
    if (list !== undefined) this.list = list;
    this.#index = index;
    this.#placeOf = placeOf;
  }

  get source(): TransferRecord['source'] {
    return this.#placeOf(this.#index);
  }
}
// Enumerable, as the tree reading's `source` is: a record compares and spreads alike whichever reading made it.
Object.defineProperty(FastRecord.prototype, 'source', { ...Object.getOwnPropertyDescriptor(FastRecord.prototype, 'source'), enumerable: true });

/** Thrown when the fast reading finds what the tree reading reports with its place. */
class NotFast extends Error {}

/**
 * The records jsonRecords gives, from JSON.parse, their places found on
 * first use by jsonRecords itself; undefined for a text JSON.parse refuses
 * or one whose problems jsonRecords reports.
 */
export function fastJsonRecords(text: string, context: WriteContext): TransferRecord[] | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(root)) return undefined;
  const records: TransferRecord[] = [];
  let places: (TransferRecord['source'])[] | undefined;
  const placeOf = (i: number) => {
    places ??= [...jsonRecords(text, context)].map((r) => r.source);
    return places[i];
  };
  const walk = (value: Value, key: string[], list: string | undefined) => {
    const type = typeOfValue(value);
    if (typeof type !== 'string') throw new NotFast();
    const listNames = new Set((context.typeOf(type)?.lists ?? []).map((l) => l.name));
    const properties: Record<string, unknown> = {};
    const lists: [string, unknown[]][] = [];
    for (const [name, item] of Object.entries(value)) {
      if (name === '_type') continue;
      const items = Array.isArray(item) ? item : undefined;
      const typed = items !== undefined && items.length > 0 && items.every((i) => isObject(i) && typeOfValue(i) !== undefined);
      if (items && (typed || listNames.has(name))) lists.push([name, items]);
      else properties[name] = item;
    }
    records.push(new FastRecord(type, key, list, properties, records.length, placeOf));
    for (const [name, items] of lists) {
      for (const item of items) {
        if (!isObject(item)) throw new NotFast();
        const label = Object.hasOwn(item, 'label') ? item.label : undefined;
        walk(item, [...key, typeof label === 'string' ? label : ''], name);
      }
    }
  };
  try {
    walk(root, [], undefined);
  } catch (err) {
    if (err instanceof NotFast) return undefined;
    throw err;
  }
  return records;
}

export const json: TransferFormat = {
  name: 'JSON',
  contentType: 'application/json; charset=utf-8',
  extension: 'json',
  writer: (out) => jsonWriter(out),
  async *read(input, context) {
    const text = await textOf(input, 'JSON');
    yield* fastJsonRecords(text, context) ?? jsonRecords(text, context);
  },
};
