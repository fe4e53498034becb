/**
 * XML (decisions §8): the model as a tree, like the JSON the engine writes.
 * No namespace (the element names are the metamodel's own); UTF-8.
 *
 *   <Scheme>                                  the root object: its type
 *     <label>Sales</label>                    a property: element named by it
 *     <favorite type="boolean">true</favorite>
 *     <tags type="list"><item>a</item><item>b</item></tags>
 *     <property name="Kosten €">12</property> a name that is no XML name
 *     <list name="collections">               a list of the object
 *       <Collection>
 *         <label>Orders</label>
 *         …
 *       </Collection>
 *     </list>
 *   </Scheme>
 *
 * - Inside an object element, `list` opens one of its lists and every other
 *   element is a property; `property name="…"` stands for a property whose
 *   name is not an XML name (or is `list` or `property`). Properties come
 *   before lists. Inside a list, every element is an object named by its type.
 * - A value is text unless its `type` attribute says otherwise (or, with no
 *   `type`, the metamodel makes it a single number or boolean): `number`,
 *   `boolean`, `null`, `list` (its elements are `item`s, each a value),
 *   `record` (its elements are the record's fields, named like properties),
 *   `json` (the text is JSON: the writer uses it for text XML cannot hold, a
 *   carriage return or a control character). Text is kept exactly as
 *   written, white space included; an empty element is the empty text; an
 *   absent value has no element.
 * - A record's key is its parent's key and its label. An object whose parent
 *   is not the element around it (a download of part of a model) says its
 *   parent's business key in an attribute `parent`; a download without the
 *   model's root stands in a `transfer` element.
 *
 * Reading uses saxes, which streams and gives line and column. A document
 * type declaration is refused before anything else is read, so entities
 * (internal ones like the "billion laughs", external ones naming files or
 * URLs) are never defined, let alone expanded; saxes refuses any entity
 * reference beyond the five of XML.
 */
import { once } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import { setFlagsFromString } from 'node:v8';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { fragment } from 'xmlbuilder2';
import { appended, FileProblem, formatKey, parseKey, type RecordWriter, type SourcePosition, type TransferFormat, type TransferRecord, type WriteContext } from '../records.ts';

/**
 * xmlbuilder2's DOM (@oozcitak/dom 2.x) sets some thirty fields of every
 * node in one class field initializer that all node classes share. A
 * download builds five of them (document, fragment, element, text,
 * attribute), one more than V8 keeps an inline cache polymorphic for by
 * default (4); past that the initializer's stores go megamorphic for the
 * rest of the process and every node took about 12 µs instead of 2: a
 * download of 100,000 objects as XML spent 61 % of its 17.5 s there. Eight
 * leaves room; V8 reads the flag when an inline cache next changes, so it is
 * set when this module loads, before the first node is made.
 */
setFlagsFromString('--max-valid-polymorphic-map-count=8');

const RESERVED = new Set(['list', 'property']);
const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** Characters XML 1.0 cannot carry in text (a carriage return it would turn into a line feed). */
const NOT_XML_TEXT = /[\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NO_DOCUMENT_ROOT = 'transfer';

type Builder = ReturnType<typeof fragment>;

/**
 * Text for xmlbuilder2, which escapes `<` and `>` but leaves a `&` that
 * starts `&amp;`, `&lt;` … as it stands (taking it for an entity the caller
 * wrote): escaping every `&` first keeps text that holds such words intact.
 */
function escapeAmpersands(text: string): string {
  return text.replace(/&/g, '&amp;');
}

/** An attribute, or (for text that attribute normalization would change) its `…Json` form. */
function attribute(element: Builder, name: string, value: string): void {
  if (/[\t\n]/.test(value) || NOT_XML_TEXT.test(value)) element.att(`${name}Json`, escapeAmpersands(JSON.stringify(value)));
  else element.att(name, escapeAmpersands(value));
}

function isPlainName(name: string): boolean {
  return XML_NAME.test(name) && !RESERVED.has(name) && !/^xml/i.test(name);
}

function writeValue(parent: Builder, name: string, value: unknown): void {
  if (value === undefined) return;
  const plain = isPlainName(name);
  const element = parent.ele(plain ? name : 'property');
  if (!plain) attribute(element, 'name', name);
  if (value === null) element.att('type', 'null');
  else if (typeof value === 'string') {
    if (NOT_XML_TEXT.test(value)) element.att('type', 'json').txt(escapeAmpersands(JSON.stringify(value)));
    else if (value !== '') element.txt(escapeAmpersands(value));
  } else if (typeof value === 'number') element.att('type', 'number').txt(String(value));
  else if (typeof value === 'boolean') element.att('type', 'boolean').txt(String(value));
  else if (Array.isArray(value)) {
    element.att('type', 'list');
    for (const item of value) writeValue(element, 'item', item);
  } else if (typeof value === 'object') {
    element.att('type', 'record');
    for (const [field, fieldValue] of Object.entries(value as Record<string, unknown>)) writeValue(element, field, fieldValue);
  } else element.att('type', 'json').txt(escapeAmpersands(JSON.stringify(value)));
}

/** Siblings serialized together, at most (a fragment holds a DOM node for each element and text). */
const RUN = 64;
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const indent = (level: number) => '  '.repeat(level);

/** Serializes a fragment as xmlbuilder2 does, indented to `level`. */
function serialize(frag: Builder, level: number): string {
  return frag.end({ prettyPrint: true, offset: level });
}

/**
 * Writes records as they arrive. Each object's element and its properties
 * are built with xmlbuilder2 and serialized by it, together with the
 * objects beside it in the same list (a run of siblings, one fragment);
 * only the tags that open and close an object around what follows it are
 * put around that text here. xmlbuilder2's callback builder, which wrote
 * the same text element by element, made a document of its own for every
 * element and text: about 0.7 ms of CPU per record, twenty times this.
 */
function writer(out: NodeJS.WritableStream): RecordWriter {
  let pending: string[] = [];
  let pendingLength = 0;
  let waitForDrain = false;
  const emit = (text: string) => {
    pending.push(text);
    pendingLength += text.length;
    if (pendingLength >= 65536) flush();
  };
  const flush = () => {
    if (pendingLength === 0) return;
    if (!out.write(pending.join(''))) waitForDrain = true;
    pending = [];
    pendingLength = 0;
  };
  /** The open object elements (their level), each with the list element open in it. */
  const open: { key: string; type: string; level: number; list?: string }[] = [];
  /** Sibling objects not serialized yet: all but the last are complete; the last stays open when its children follow. */
  let run: { frag: Builder; level: number; parentKey: string; list?: string; last: { key: string; type: string }; count: number } | undefined;
  let started = false;

  function endRun(openLast: boolean) {
    if (!run) return;
    let text = serialize(run.frag, run.level);
    if (openLast) {
      // An element without properties ends in `/>`, one with them in its end tag on a line of its own.
      text = text.endsWith('/>') ? `${text.slice(0, -2)}>` : text.slice(0, text.lastIndexOf('\n'));
      open.push({ key: run.last.key, type: run.last.type, level: run.level });
    }
    emit(`\n${text}`);
    run = undefined;
  }

  function closeTop() {
    const top = open.pop()!;
    if (top.list !== undefined) emit(`\n${indent(top.level + 1)}</list>`);
    emit(`\n${indent(top.level)}</${top.type}>`);
  }

  return {
    async write(record) {
      const isRoot = record.list === undefined;
      if (!started) {
        started = true;
        emit(DECLARATION);
        if (!isRoot) { emit(`\n<${NO_DOCUMENT_ROOT}>`); open.push({ key: '', type: NO_DOCUMENT_ROOT, level: 0 }); }
      } else if (isRoot) throw new Error('A download has one root, and it comes first.');
      const parentKey = isRoot ? '' : formatKey(record.key.slice(0, -1));
      const key = formatKey(record.key);
      const sibling = run !== undefined && !isRoot && run.parentKey === parentKey && run.list === record.list;
      if (sibling && run!.count >= RUN) {
        const full = run!;
        endRun(false);
        run = { ...full, frag: fragment(), count: 0 };
      } else if (!sibling) {
        endRun(!isRoot && run?.last.key === parentKey);
        let level = 0;
        if (!isRoot) {
          while (open.length > 1 && open[open.length - 1]!.key !== parentKey) closeTop();
          const top = open[open.length - 1]!;
          if (top.list !== record.list) {
            if (top.list !== undefined) emit(`\n${indent(top.level + 1)}</list>`);
            const list = fragment();
            attribute(list.ele('list'), 'name', record.list!);
            emit(`\n${serialize(list, top.level + 1).slice(0, -2)}>`);
            top.list = record.list;
          }
          level = top.level + 2;
        }
        run = { frag: fragment(), level, parentKey, list: record.list, last: { key, type: record.type }, count: 0 };
      }
      run!.last = { key, type: record.type };
      run!.count++;
      const element = run!.frag.ele(record.type);
      if (!isRoot && open[open.length - 1]!.key !== parentKey) attribute(element, 'parent', parentKey);
      const { label, ...rest } = record.properties;
      writeValue(element, 'label', label ?? (isRoot ? undefined : record.key[record.key.length - 1]));
      for (const [name, value] of Object.entries(rest)) writeValue(element, name, value);
      if (waitForDrain) { waitForDrain = false; await once(out as NodeJS.EventEmitter, 'drain'); }
    },
    async end() {
      if (!started) emit(`${DECLARATION}\n<${NO_DOCUMENT_ROOT}/>`);
      endRun(false);
      while (open.length > 0) closeTop();
      flush();
      const finished = once(out as NodeJS.EventEmitter, 'finish');
      out.end();
      await finished;
    },
  };
}

interface ObjectFrame {
  kind: 'object';
  type: string;
  /** The parent's key; undefined for the root. */
  parent?: string[];
  list?: string;
  properties: Record<string, unknown>;
  key?: string[];
  sawList: boolean;
  synthetic?: boolean;
  source: SourcePosition;
}
interface ListFrame { kind: 'list'; name: string; owner: ObjectFrame }
interface ValueFrame {
  kind: 'value';
  type: string;
  text: string;
  items: unknown[];
  fields: Record<string, unknown>;
  set(value: unknown): void;
  source: SourcePosition;
}
type Frame = ObjectFrame | ListFrame | ValueFrame;

const VALUE_TYPES = new Set(['string', 'number', 'boolean', 'null', 'list', 'record', 'json']);

/** Turns saxes's events into records; `emit` gets them parent first. */
class TreeReader {
  private readonly stack: Frame[] = [];

  constructor(private readonly parser: SaxesParser, private readonly context: WriteContext, private readonly emit: (record: TransferRecord) => void) {
    parser.on('doctype', () => this.fail('The file declares a document type (DTD); DTDs and entities are refused.'));
    parser.on('opentag', tag => this.open(tag));
    parser.on('text', text => this.text(text));
    parser.on('cdata', text => this.text(text));
    parser.on('closetag', () => this.close());
  }

  private here(): SourcePosition { return { line: this.parser.line, column: this.parser.column }; }

  private fail(message: string): never {
    const at = this.here();
    throw new FileProblem(`Line ${at.line}, column ${at.column}: ${message}`, at);
  }

  private open(tag: SaxesTagPlain): void {
    const top = this.stack[this.stack.length - 1];
    if (!top) {
      const frame: ObjectFrame = { kind: 'object', type: tag.name, properties: {}, sawList: false, source: this.here() };
      if (tag.name === NO_DOCUMENT_ROOT) { frame.synthetic = true; frame.key = []; }
      this.stack.push(frame);
      return;
    }
    if (top.kind === 'object') {
      if (tag.name === 'list') {
        const name = this.attribute(tag, 'name');
        if (!name) this.fail('a `list` element needs a `name` attribute.');
        this.emitObject(top);
        top.sawList = true;
        this.stack.push({ kind: 'list', name, owner: top });
        return;
      }
      if (top.sawList) this.fail(`the property ${tag.name} of ${top.type} comes after its lists; properties come first.`);
      const name = this.propertyName(tag);
      if (name in top.properties) this.fail(`${top.type} has the property ${name} twice.`);
      const property = this.context.typeOf(top.type)?.properties.find(p => p.name === name && !p.many);
      this.pushValue(tag, value => { top.properties[name] = value; }, property?.dataType);
      return;
    }
    if (top.kind === 'list') {
      let parent = top.owner.key!;
      const parentKey = this.attribute(tag, 'parent');
      if (parentKey !== undefined) {
        const parsed = parseKey(parentKey);
        if (!parsed || parsed.otherModel !== undefined) this.fail(`${JSON.stringify(parentKey)} is not a business key within the model.`);
        parent = parsed.labels;
      }
      this.stack.push({ kind: 'object', type: tag.name, parent, list: top.name, properties: {}, sawList: false, source: this.here() });
      return;
    }
    if (top.type === 'list') {
      if (tag.name !== 'item') this.fail(`a value of type list holds \`item\` elements, not ${tag.name}.`);
      this.pushValue(tag, value => { top.items.push(value); });
    } else if (top.type === 'record') {
      const name = this.propertyName(tag);
      if (name in top.fields) this.fail(`the record has the field ${name} twice.`);
      this.pushValue(tag, value => { top.fields[name] = value; });
    } else {
      this.fail(`a value of type ${top.type} cannot hold the element ${tag.name}.`);
    }
  }

  private propertyName(tag: SaxesTagPlain): string {
    if (tag.name !== 'property') return tag.name;
    const name = this.attribute(tag, 'name');
    if (!name) this.fail('a `property` element needs a `name` attribute.');
    return name;
  }

  /** An attribute, or its `…Json` form. */
  private attribute(tag: SaxesTagPlain, name: string): string | undefined {
    const attributes = tag.attributes as Record<string, string>;
    const json = attributes[`${name}Json`];
    if (json === undefined) return attributes[name];
    try {
      const value: unknown = JSON.parse(json);
      if (typeof value === 'string') return value;
    } catch { /* refused below */ }
    return this.fail(`the attribute ${name}Json must hold a JSON string.`);
  }

  /**
   * A value without a `type` is text, except for a single number or boolean
   * of the metamodel, which a person writes as `<order>3</order>`.
   */
  private pushValue(tag: SaxesTagPlain, set: (value: unknown) => void, dataType?: string): void {
    const untyped = dataType === 'INTEGER' || dataType === 'DECIMAL' ? 'number' : dataType === 'BOOLEAN' ? 'boolean' : 'string';
    const type = (tag.attributes as Record<string, string>).type ?? untyped;
    if (!VALUE_TYPES.has(type)) this.fail(`unknown value type ${JSON.stringify(type)} (string, number, boolean, null, list, record, json).`);
    this.stack.push({ kind: 'value', type, text: '', items: [], fields: {}, set, source: this.here() });
  }

  private text(text: string): void {
    const top = this.stack[this.stack.length - 1];
    if (top?.kind === 'value' && top.type !== 'list' && top.type !== 'record') { top.text += text; return; }
    if (text.trim() !== '') this.fail(`text ${JSON.stringify(text.trim().slice(0, 40))} stands where only elements may.`);
  }

  private close(): void {
    const top = this.stack.pop()!;
    if (top.kind === 'object') this.emitObject(top);
    else if (top.kind === 'value') top.set(this.valueOf(top));
  }

  private valueOf(frame: ValueFrame): unknown {
    const text = frame.text;
    switch (frame.type) {
      case 'string': return text;
      case 'null': return null;
      case 'list': return frame.items;
      case 'record': return frame.fields;
      case 'number': {
        const n = Number(text);
        if (text.trim() === '' || !Number.isFinite(n)) this.fail(`${JSON.stringify(text)} is not a number.`);
        return n;
      }
      case 'boolean':
        if (text !== 'true' && text !== 'false') this.fail(`${JSON.stringify(text)} is not true or false.`);
        return text === 'true';
      default:
        try { return JSON.parse(text); } catch { return this.fail(`the value of type json is not JSON: ${JSON.stringify(text.slice(0, 40))}.`); }
    }
  }

  private emitObject(frame: ObjectFrame): void {
    if (frame.key) return;
    const label = frame.properties.label;
    frame.key = frame.parent === undefined ? [] : appended(frame.parent, typeof label === 'string' ? label : '');
    this.emit({
      type: frame.type, key: frame.key, ...(frame.list === undefined ? {} : { list: frame.list }),
      properties: frame.properties, source: frame.source,
    });
  }
}

async function* read(input: NodeJS.ReadableStream, context: WriteContext): AsyncIterable<TransferRecord> {
  const parser = new SaxesParser({ position: true });
  const queue: TransferRecord[] = [];
  new TreeReader(parser, context, record => queue.push(record));
  const decoder = new StringDecoder('utf8');
  const feed = (text: string) => {
    try {
      parser.write(text);
    } catch (error) {
      if (error instanceof FileProblem) throw error;
      const at = { line: parser.line, column: parser.column };
      throw new FileProblem(`The file is not well-formed XML (${(error as Error).message}).`, at);
    }
  };
  let first = true;
  for await (const chunk of input) {
    let text = typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    if (first && text.length > 0) { text = text.replace(/^\uFEFF/, ''); first = false; }
    feed(text);
    yield* queue.splice(0);
  }
  feed(decoder.end());
  try {
    parser.close();
  } catch (error) {
    throw new FileProblem(`The file ends before the XML does (${(error as Error).message}).`, { line: parser.line, column: parser.column });
  }
  yield* queue.splice(0);
}

export const xml: TransferFormat = {
  name: 'XML',
  contentType: 'application/xml',
  extension: 'xml',
  writer: out => writer(out),
  read,
};
