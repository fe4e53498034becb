/**
 * The nested shape that JSON and YAML share (decisions §8): the root object
 * with `_type` and its properties, each list of it an array of nested
 * objects of the same shape. Reading goes through the `yaml` package's
 * document model (JSON is read by it too), which keeps every node's place
 * in the text: an object's record carries the line and column it starts at.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type YAMLMap } from 'yaml';
import { appended, FileProblem, type TransferRecord, type WriteContext } from '../records.ts';

/** Reads the whole text into a document; a syntax error is a FileProblem with its place. */
export function parseTree(text: string, kind: 'JSON' | 'YAML'): { doc: Document; lines: LineCounter } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, keepSourceTokens: false });
  const error = doc.errors[0];
  if (error) {
    const at = lines.linePos(error.pos[0]);
    throw new FileProblem(`${kind}: ${error.message.split('\n')[0]}`, { line: at.line, column: at.col });
  }
  // Aliases would let a small file stand for a huge model (a "billion laughs"); a model file has no use for them.
  let alias: number | undefined;
  visit(doc, { Alias(_, node) { alias = node.range?.[0] ?? 0; return visit.BREAK; } });
  if (alias !== undefined) {
    const at = lines.linePos(alias);
    throw new FileProblem(`${kind}: aliases (*name) are not allowed`, { line: at.line, column: at.col });
  }
  if (!isMap(doc.contents)) throw new FileProblem(`${kind}: the file must hold one object (the model's root)`, { line: 1, column: 1 });
  return { doc, lines };
}

/**
 * The records of a document, depth first: an object's keys that hold
 * arrays of objects with `_type` (or that are lists of its type) are its
 * lists; everything else is a property.
 */
export function* recordsOf(doc: Document, lines: LineCounter, context: WriteContext): Generator<TransferRecord> {
  function* walk(map: YAMLMap, key: string[], list: string | undefined): Generator<TransferRecord> {
    const at = lines.linePos(map.range?.[0] ?? 0);
    const typeNode = map.get('_type', true);
    const type = isScalar(typeNode) ? typeNode.value : undefined;
    if (typeof type !== 'string') throw new FileProblem('an object without `_type`', { line: at.line, column: at.col });
    const listNames = new Set((context.typeOf(type)?.lists ?? []).map((l) => l.name));
    const properties: Record<string, unknown> = {};
    const lists: [string, Node[]][] = [];
    for (const pair of map.items) {
      const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (name === '_type') continue;
      const value = pair.value as Node | null;
      const typedItems = isSeq(value) && value.items.length > 0 && value.items.every((i) => isMap(i) && i.has('_type'));
      if (isSeq(value) && (typedItems || listNames.has(name))) lists.push([name, value.items as Node[]]);
      else properties[name] = value === null ? null : value.toJSON();
    }
    yield { type, key, ...(list !== undefined ? { list } : {}), properties, source: { line: at.line, column: at.col } };
    for (const [name, items] of lists) {
      for (const item of items) {
        if (!isMap(item)) {
          const pos = lines.linePos((item as Node | null)?.range?.[0] ?? map.range?.[0] ?? 0);
          throw new FileProblem(`the list ${name} holds something that is not an object`, { line: pos.line, column: pos.col });
        }
        const label = item.get('label');
        yield* walk(item, appended(key, typeof label === 'string' ? label : ''), name);
      }
    }
  }
  yield* walk(doc.contents as YAMLMap, [], undefined);
}

/** Where a record's object stands: a nested frame per depth, whose open list the next record of that depth continues. */
export interface Frame {
  openList?: string;
  items: number;
}

/** Closes frames down to `depth` (exclusive) and says which list the record at `depth` opens or continues. */
export function descend(stack: Frame[], record: TransferRecord, close: (frame: Frame, depth: number) => void): { opens: boolean; first: boolean } {
  const depth = record.key.length;
  if (depth > stack.length) throw new Error(`record ${record.type} at depth ${depth} has no parent`);
  while (stack.length > depth) close(stack.pop()!, stack.length);
  if (depth === 0) return { opens: false, first: true };
  const parent = stack[depth - 1];
  const opens = parent.openList !== record.list;
  return { opens, first: opens };
}
