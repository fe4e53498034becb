import { FileProblem } from '../records.ts';

/** The whole input as UTF-8 text; other bytes are a FileProblem (a byte order mark is dropped). */
export async function textOf(input: NodeJS.ReadableStream, kind: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk as Buffer);
  try {
    // One chunk (an upload's file) is decoded as it is: no copy of a file of tens of MB.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  } catch {
    throw new FileProblem(`${kind}: the file is not UTF-8 text`);
  }
}
