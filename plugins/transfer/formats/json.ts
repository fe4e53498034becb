/**
 * JSON (decisions §8): the model as one nested object, written as records
 * arrive (nothing is held but the open objects' places), two spaces of
 * indentation, keys in the order the record gives them, lists after the
 * properties. Read through the yaml package's document model, which keeps
 * each object's line and column for the logs of an upload.
 */
import { parseTree as jsonTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { FileProblem, type RecordWriter, type TransferFormat, type TransferRecord } from '../records.ts';
import { descend, parseTree, recordsOf, type Frame } from './tree.ts';
import { textOf } from './text.ts';

const pad = (n: number) => ' '.repeat(n);

/** The depth-th object's indentation: its properties stand 2 further in. */
const objectIndent = (depth: number) => depth * 4;

export function jsonWriter(out: NodeJS.WritableStream): RecordWriter {
  const stack: Frame[] = [];
  let buffer = '';
  const flush = async () => {
    if (!buffer) return;
    const chunk = buffer;
    buffer = '';
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
  };
  const close = (frame: Frame, depth: number) => {
    const indent = objectIndent(depth);
    if (frame.openList !== undefined) buffer += `\n${pad(indent + 2)}]`;
    buffer += `\n${pad(indent)}}`;
  };
  return {
    async write(record: TransferRecord) {
      const depth = record.key.length;
      const { opens } = descend(stack, record, close);
      const indent = objectIndent(depth);
      if (depth > 0) {
        const parent = stack[depth - 1];
        if (opens) {
          if (parent.openList !== undefined) buffer += `\n${pad(indent - 2)}]`;
          buffer += `,\n${pad(indent - 2)}${JSON.stringify(record.list)}: [\n${pad(indent)}`;
          parent.openList = record.list;
        } else {
          buffer += `,\n${pad(indent)}`;
        }
      }
      buffer += `{\n${pad(indent + 2)}"_type": ${JSON.stringify(record.type)}`;
      for (const [name, value] of Object.entries(record.properties)) {
        if (value === undefined) continue;
        buffer += `,\n${pad(indent + 2)}${JSON.stringify(name)}: ${JSON.stringify(value)}`;
      }
      stack.push({ items: 0 });
      if (buffer.length > 65536) await flush();
    },
    async end() {
      while (stack.length) close(stack.pop()!, stack.length);
      buffer += '\n';
      await flush();
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}

/**
 * The yaml package reads JSON leniently (it is YAML): `"label": x` would be
 * the string x. The text must be JSON: JSON.parse decides, and where it
 * refuses, jsonc-parser (strict: no comments, no trailing commas) says where.
 */
function strictJson(text: string): void {
  try {
    JSON.parse(text);
    return;
  } catch (err) {
    const errors: ParseError[] = [];
    jsonTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const offset = first?.offset ?? 0;
    const before = text.slice(0, offset).split('\n');
    throw new FileProblem(`JSON: ${first ? printParseErrorCode(first.error) : (err as Error).message}`, { line: before.length, column: before[before.length - 1].length + 1 });
  }
}

export const json: TransferFormat = {
  name: 'JSON',
  contentType: 'application/json; charset=utf-8',
  extension: 'json',
  writer: (out) => jsonWriter(out),
  async *read(input, context) {
    const text = await textOf(input, 'JSON');
    strictJson(text);
    const { doc, lines } = parseTree(text, 'JSON');
    yield* recordsOf(doc, lines, context);
  },
};
