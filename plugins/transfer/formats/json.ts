/**
 * JSON (decisions §8): the model as one nested object, written as records
 * arrive (nothing is held but the open objects' places), two spaces of
 * indentation, keys in the order the record gives them, lists after the
 * properties.
 *
 * An upload reads the file token by token with jsonc-parser's scanner
 * (streamJsonRecords: strict JSON, no comments, no trailing commas): no tree
 * of the whole file is made (JSON.parse's took about 137 MB for a file of
 * 30 MB and 110,000 objects, and held the event loop for hundreds of ms),
 * each record carries its line and column for the logs, and the reading
 * lets the event loop take a turn every few milliseconds. It costs about
 * twice JSON.parse's time (about 1 s more for that file). jsonc-parser's
 * tree (jsonRecords) is the reference it is tested against and words the
 * problems of a file that is not a model's JSON, at their place; the yaml
 * package's document model did the same at a seventh of the tree's speed
 * (bench/transfer-formats.ts).
 */
import { createScanner, getNodeValue, parseTree as jsonTree, printParseErrorCode, type Node as JsonNode, type ParseError } from 'jsonc-parser';
import { turnsEvery } from '../../../runtime/host.ts';
import { appended, FileProblem, type RecordWriter, type TransferFormat, type TransferRecord, type WriteContext } from '../records.ts';
import { descend, type Frame } from './tree.ts';
import { bytesOf, ownText, PIECE_BYTES, utf8Pieces, wholeText } from './text.ts';

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

/** The tree of a JSON text as jsonc-parser reads it (strict), and a function from offsets to places; a FileProblem for a file that is no model's JSON. */
function treeOf(text: string): { root: JsonNode; at: (offset: number) => { line: number; column: number } } {
  const at = positions(text);
  const errors: ParseError[] = [];
  const root = jsonTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  if (errors.length || !root) {
    const first = errors[0];
    throw new FileProblem(`JSON: ${first ? printParseErrorCode(first.error) : 'no content'}`, at(first?.offset ?? 0));
  }
  if (root.type !== 'object') throw new FileProblem('JSON: the file must hold one object (the model\'s root)', at(root.offset));
  return { root, at };
}

/**
 * The problem the tree reading finds with the file as a whole (syntax, no object), if any; undefined too for a text
 * nested deeper than the tree reading's recursion goes (the streaming reading reports that itself).
 */
function fileProblem(text: string): FileProblem | undefined {
  try {
    treeOf(text);
    return undefined;
  } catch (err) {
    if (err instanceof FileProblem) return err;
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}

/**
 * The records of a JSON text, depth first (the shape of tree.ts: arrays of objects with `_type`, or named lists of
 * the type, are lists), read through jsonc-parser's tree: the reference of the streaming reading (its tests compare
 * the two), which takes its words for syntax problems from here.
 */
export function* jsonRecords(text: string, context: WriteContext): Generator<TransferRecord> {
  const { root, at } = treeOf(text);
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
        yield* walk(item, appended(key, typeof label === 'string' ? label : ''), name);
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

/** Sets a member as JSON.parse does: `__proto__` is a member like any other, not the object's prototype. */
function setMember(target: Value, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}

// jsonc-parser's token kinds (SyntaxKind, a const enum its declarations give and isolated modules cannot read).
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;
const COMMA = 5;
const COLON = 6;
const NULL = 7;
const TRUE = 8;
const FALSE = 9;
const STRING = 10;
const NUMBER = 11;
const LINE_COMMENT = 12;
const BLOCK_COMMENT = 13;
const LINE_BREAK = 14;
const WHITESPACE = 15;
const UNKNOWN = 16;
const EOF = 17;

/**
 * Values nested deeper than this in a property are refused (the reading of a value recurses), and so are objects
 * nested deeper in lists (each record's key names all above it: a file of 100,000 levels would want 40 GB of keys).
 */
const MAX_DEPTH = 500;
/** Strings of up to this many characters are shared (see `shared`); the type and list names of the standard metamodel are all shorter. */
const SHARED_LENGTH = 24;
/** The places of the items of arrays read as values, for records made of them later. */
type Places = Map<unknown[], { line: number; column: number }[]>;

/** What the streaming reading asks of jsonc-parser's scanner. */
interface Tokens {
  scan(): number;
  getTokenValue(): string;
  getTokenError(): number;
  getTokenStartLine(): number;
  getTokenStartCharacter(): number;
}

/**
 * jsonc-parser's scanner over a text that comes in pieces (see utf8Pieces): it scans the text at hand, and a token
 * that reaches its end while more may follow (a string, a number, `tru`, a CR before LF, white space, the end) is
 * scanned again from its start with the next pieces added. Lines and columns count from the start of the whole text.
 */
function pieceTokens(pieces: Iterator<string>): Tokens {
  let text = '';
  let more = true;
  let scanner = createScanner(text, false);
  /** The line and column (from 0) where `text` starts in the whole text. */
  let baseLine = 0;
  let baseColumn = 0;
  return {
    scan() {
      for (;;) {
        const token = scanner.scan();
        if (!more || scanner.getPosition() < text.length) return token;
        const line = scanner.getTokenStartLine();
        baseColumn = line === 0 ? baseColumn + scanner.getTokenStartCharacter() : scanner.getTokenStartCharacter();
        baseLine += line;
        // At least as much again as the token has so far: a string of many pieces is scanned again a few times, not once per piece.
        const parts = [text.slice(scanner.getTokenOffset())];
        for (let added = 0; more && added <= parts[0].length;) {
          const next = pieces.next();
          if (next.done) more = false;
          else {
            parts.push(next.value);
            added += next.value.length;
          }
        }
        text = parts.join('');
        scanner = createScanner(text, false);
      }
    },
    getTokenValue: () => scanner.getTokenValue(),
    getTokenError: () => scanner.getTokenError(),
    getTokenStartLine: () => baseLine + scanner.getTokenStartLine(),
    getTokenStartCharacter: () => (scanner.getTokenStartLine() === 0 ? baseColumn : 0) + scanner.getTokenStartCharacter(),
  };
}

/** A syntax problem the streaming reading found: the tree reading reports it with jsonc-parser's words. */
class Syntax extends Error {}

/** A record being read: its type may come late and its properties may still grow (a property after a list); its key is made at the end. */
type Reading = { -readonly [K in keyof TransferRecord]: TransferRecord[K] } & { source: { line: number; column: number } };

/** The key of a record until the end of the reading (no record keeps it). */
const NO_KEY: string[] = [];

/** An object of a list (or the root) being read member by member. */
interface ObjectFrame {
  kind: 'object';
  index: number;
  /** Arrays met before `_type`: lists or properties, decided once the type is known. */
  pending: [string, unknown[], Places][] | undefined;
  listNames: Set<string> | undefined;
  /** A member was read: the next one needs a comma before it. */
  more: boolean;
}

/** A list whose items are read as records one by one. */
interface ListFrame {
  kind: 'list';
  owner: number;
  name: string;
  more: boolean;
}

/**
 * The records of a JSON file, decoded piece by piece (utf8Pieces) and read token by token with jsonc-parser's
 * scanner (strict JSON, as the tree reading): no tree of the whole file is
 * made, each record carries its place, and the reading lets the event loop
 * take a turn every few milliseconds (turnsEvery). The records are those jsonRecords gives (same
 * order, keys, lists, properties, places); a list is read item by item when
 * its object's `_type` comes before it (a download's files: always), else
 * it is read as a value and made records of once the type is known. A
 * problem with the file is reported as the tree reading reports it.
 */
export async function streamJsonRecords(file: Uint8Array, context: WriteContext, pieceBytes = PIECE_BYTES): Promise<TransferRecord[]> {
  const scanner = pieceTokens(utf8Pieces(file, 'JSON', pieceBytes));
  const turn = turnsEvery();
  const records: Reading[] = [];
  /** The index of each record's parent's record; -1 for the root. */
  const parents: number[] = [];
  /**
   * One string for each short text however often the file has it (types, list names, values such as `STRING`
   * or `DRAFT`), as JSON.parse does for strings of up to 10 characters: the scanner makes a new one each time,
   * which for 110,000 records held about 40 MB more.
   */
  const texts = new Map<string, string>();
  const shared = (text: string): string => {
    if (text.length > SHARED_LENGTH) return ownText(text);
    const kept = texts.get(text);
    if (kept !== undefined) return kept;
    const copy = ownText(text);
    texts.set(copy, copy);
    return copy;
  };
  const listNamesOf = (type: string) => new Set((context.typeOf(type)?.lists ?? []).map((l) => l.name));
  const here = () => ({ line: scanner.getTokenStartLine() + 1, column: scanner.getTokenStartCharacter() + 1 });
  /** The next token that is not white space; a comment or a scanner error is a syntax problem. */
  const next = (): number => {
    for (;;) {
      const token = scanner.scan();
      if (token === WHITESPACE || token === LINE_BREAK) continue;
      if (scanner.getTokenError() !== 0 || token === LINE_COMMENT || token === BLOCK_COMMENT || token === UNKNOWN) throw new Syntax();
      return token;
    }
  };
  const expect = (token: number, wanted: number) => {
    if (token !== wanted) throw new Syntax();
  };

  /** A whole value from its first token; `places` takes the items' places of every array in it (for lists found late). */
  const value = (token: number, places: Places | undefined, depth: number): unknown => {
    switch (token) {
      case STRING: return shared(scanner.getTokenValue());
      case NUMBER: return Number(scanner.getTokenValue());
      case TRUE: return true;
      case FALSE: return false;
      case NULL: return null;
      case OPEN_BRACE: {
        if (depth > MAX_DEPTH) throw new FileProblem(`JSON: values nest deeper than ${MAX_DEPTH} levels`, here());
        const object: Value = {};
        let t = next();
        if (t === CLOSE_BRACE) return object;
        for (;;) {
          expect(t, STRING);
          const name = scanner.getTokenValue();
          expect(next(), COLON);
          setMember(object, name, value(next(), places, depth + 1));
          t = next();
          if (t === CLOSE_BRACE) return object;
          expect(t, COMMA);
          t = next();
        }
      }
      case OPEN_BRACKET: {
        if (depth > MAX_DEPTH) throw new FileProblem(`JSON: values nest deeper than ${MAX_DEPTH} levels`, here());
        const array: unknown[] = [];
        const at: { line: number; column: number }[] | undefined = places ? [] : undefined;
        if (places) places.set(array, at!);
        let t = next();
        if (t === CLOSE_BRACKET) return array;
        for (;;) {
          at?.push(here());
          array.push(value(t, places, depth + 1));
          t = next();
          if (t === CLOSE_BRACKET) return array;
          expect(t, COMMA);
          t = next();
        }
      }
      default: throw new Syntax();
    }
  };

  /** Records of the items of a list read as a value (the tree reading's walk, over values and the places kept of them). */
  const listFromValue = (owner: number, name: string, items: unknown[], places: Places) => {
    const itemPlaces = places.get(items)!;
    items.forEach((item, i) => {
      if (!isObject(item)) throw new FileProblem(`the list ${name} holds something that is not an object`, itemPlaces[i]);
      const type = typeOfValue(item);
      if (typeof type !== 'string') throw new FileProblem('an object without `_type`', itemPlaces[i]);
      const index = records.push({ type, key: NO_KEY, list: name, properties: {}, source: itemPlaces[i] }) - 1;
      parents.push(owner);
      const listNames = listNamesOf(type);
      const lists: [string, unknown[]][] = [];
      for (const [member, v] of Object.entries(item)) {
        if (member === '_type') continue;
        if (Array.isArray(v) && isList(v, member, listNames)) lists.push([member, v]);
        else setMember(records[index].properties, member, v);
      }
      for (const [member, v] of lists) listFromValue(index, member, v, places);
    });
  };
  /** The tree reading's rule: an array is a list when its object's type has a list of that name, or when all its items are objects with a type. */
  const isList = (items: unknown[], name: string, listNames: Set<string>) =>
    listNames.has(name) || (items.length > 0 && items.every((i) => isObject(i) && typeOfValue(i) !== undefined));

  const stack: (ObjectFrame | ListFrame)[] = [];
  /** Starts the record of an object whose `{` was just read. */
  const open = (list: string | undefined, parent: number) => {
    // An object frame and a list frame per level.
    if (stack.length > 2 * MAX_DEPTH) throw new FileProblem(`JSON: objects nest deeper than ${MAX_DEPTH} levels`, here());
    records.push(list === undefined ? { type: '', key: NO_KEY, properties: {}, source: here() } : { type: '', key: NO_KEY, list, properties: {}, source: here() });
    parents.push(parent);
    stack.push({ kind: 'object', index: records.length - 1, pending: undefined, listNames: undefined, more: false });
  };
  const typeFound = (frame: ObjectFrame, type: string) => {
    records[frame.index].type = shared(type);
    frame.listNames = listNamesOf(type);
    for (const [name, items, places] of frame.pending ?? []) settle(frame, name, items, places);
    frame.pending = undefined;
  };
  /** An array read as a value, once its object's type is known: a list's records, or a property. */
  const settle = (frame: ObjectFrame, name: string, items: unknown[], places: Places) => {
    if (isList(items, name, frame.listNames!)) listFromValue(frame.index, name, items, places);
    else setMember(records[frame.index].properties, name, items);
  };

  try {
    if (next() !== OPEN_BRACE) throw new Syntax();
    open(undefined, -1);
    let steps = 0;
    while (stack.length) {
      if (++steps % 64 === 0) await turn();
      const frame = stack[stack.length - 1];
      let t = next();
      if (frame.kind === 'list') {
        if (t === CLOSE_BRACKET) { stack.pop(); continue; }
        if (frame.more) { expect(t, COMMA); t = next(); }
        frame.more = true;
        if (t !== OPEN_BRACE) throw new FileProblem(`the list ${frame.name} holds something that is not an object`, here());
        open(frame.name, frame.owner);
        continue;
      }
      if (t === CLOSE_BRACE) {
        const record = records[frame.index];
        // The tree reading's walk takes the type first: an object without one is a problem before anything below it.
        if (frame.listNames === undefined) throw new FileProblem('an object without `_type`', record.source);
        stack.pop();
        continue;
      }
      if (frame.more) { expect(t, COMMA); t = next(); }
      frame.more = true;
      expect(t, STRING);
      const name = scanner.getTokenValue();
      expect(next(), COLON);
      t = next();
      const record = records[frame.index];
      if (name === '_type') {
        const type = value(t, undefined, 0);
        // The first `_type` counts, as in the tree reading; anything but a string is none.
        if (frame.listNames === undefined) {
          if (typeof type !== 'string') throw new FileProblem('an object without `_type`', record.source);
          typeFound(frame, type);
        }
        continue;
      }
      if (t === OPEN_BRACKET && frame.listNames?.has(name)) {
        stack.push({ kind: 'list', owner: frame.index, name: shared(name), more: false });
        continue;
      }
      if (t === OPEN_BRACKET) {
        const places: Places = new Map();
        const items = value(t, places, 0) as unknown[];
        if (frame.listNames) settle(frame, name, items, places);
        else (frame.pending ??= []).push([name, items, places]);
        continue;
      }
      setMember(record.properties, name, value(t, undefined, 0));
    }
    if (next() !== EOF) throw new Syntax();
  } catch (err) {
    // A problem of syntax anywhere comes first, as in the tree reading (it parses the whole text before it walks).
    if (err instanceof Syntax || err instanceof FileProblem) {
      // The whole text only now, to word the problem (a FileProblem itself if the file is not UTF-8).
      const problem = fileProblem(wholeText(file, 'JSON'));
      if (problem) throw problem;
      if (err instanceof Syntax) throw new FileProblem('JSON: InvalidSymbol', here());
    }
    throw err;
  }
  // The keys, now that every label is read: a record's parent comes before it.
  for (const [i, record] of records.entries()) {
    const label = record.properties.label;
    if (parents[i] >= 0) record.key = appended(records[parents[i]].key, typeof label === 'string' ? label : '');
    else record.key = [];
    if (i % 1024 === 0) await turn();
  }
  return records;
}
export const json: TransferFormat = {
  name: 'JSON',
  contentType: 'application/json; charset=utf-8',
  extension: 'json',
  writer: (out) => jsonWriter(out),
  async *read(input, context) {
    // The bytes are decoded piece by piece as they are read, and let go once read: the records hold their places.
    const records: (TransferRecord | undefined)[] = await streamJsonRecords(await bytesOf(input), context);
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      records[i] = undefined;
      yield record;
    }
  },
};
