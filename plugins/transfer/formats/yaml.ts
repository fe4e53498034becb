/**
 * YAML (decisions §8): the same tree as JSON, written as records arrive.
 * Each object's properties are made YAML by the `yaml` package (quoting,
 * block scalars, escapes are its), then indented to where the object stands
 * in the tree: an object of depth d has its properties at 4·d spaces, the
 * dash of its list item at 4·d − 2, the key of its list at 4·(d − 1).
 */
import { stringify } from 'yaml';
import type { RecordWriter, TransferFormat, TransferRecord } from '../records.ts';
import { descend, parseTree, recordsOf, type Frame } from './tree.ts';
import { textOf } from './text.ts';

const pad = (n: number) => ' '.repeat(n);

const OPTIONS = { lineWidth: 0, minContentWidth: 0, indent: 2, aliasDuplicateObjects: false } as const;

function indented(text: string, first: string, rest: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return lines.map((line, i) => (i === 0 ? first : line === '' ? '' : rest) + line).join('\n') + '\n';
}

export function yamlWriter(out: NodeJS.WritableStream): RecordWriter {
  const stack: Frame[] = [];
  let buffer = '';
  const flush = async () => {
    if (!buffer) return;
    const chunk = buffer;
    buffer = '';
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
  };
  return {
    async write(record: TransferRecord) {
      const depth = record.key.length;
      const { opens } = descend(stack, record, () => undefined);
      const object: Record<string, unknown> = { _type: record.type };
      for (const [name, value] of Object.entries(record.properties)) if (value !== undefined) object[name] = value;
      const text = stringify(object, OPTIONS);
      if (depth === 0) {
        buffer += text;
      } else {
        const parent = stack[depth - 1];
        if (opens) {
          buffer += `${pad(4 * (depth - 1))}${stringify(record.list, OPTIONS).trimEnd()}:\n`;
          parent.openList = record.list;
        }
        buffer += indented(text, `${pad(4 * depth - 2)}- `, pad(4 * depth));
      }
      stack.push({ items: 0 });
      if (buffer.length > 65536) await flush();
    },
    async end() {
      await flush();
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}

export const yaml: TransferFormat = {
  name: 'YAML',
  contentType: 'application/yaml; charset=utf-8',
  extension: 'yaml',
  writer: (out) => yamlWriter(out),
  async *read(input, context) {
    const { doc, lines } = parseTree(await textOf(input, 'YAML'), 'YAML');
    yield* recordsOf(doc, lines, context);
  },
};
