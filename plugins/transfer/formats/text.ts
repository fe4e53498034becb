import { FileProblem } from '../records.ts';

/**
 * A text of its own, not a view of the larger text it was cut out of. V8 makes a substring of 13 characters or more
 * a view of its parent (a sliced string), and the readings' parsers give values as such substrings of what they scan
 * (a piece of the file, a chunk of a sheet): each description or label an upload kept that way kept its whole parent
 * until the upload committed, for a model whose objects have such texts about the whole file's text again (a JSON file
 * of 20,000 descriptions of 1.2 MB: 4.0 MB). JSON's own parser gives a new string of exactly the text (78 bytes for
 * 62 characters, 0.3 µs; a prefix sliced off again left a view of a copy, 112 bytes).
 */
export function ownText(text: string): string {
  return text.length < 13 ? text : JSON.parse(JSON.stringify(text)) as string;
}

/** The whole input as UTF-8 text; other bytes are a FileProblem (a byte order mark is dropped). */
export async function textOf(input: NodeJS.ReadableStream, kind: string): Promise<string> {
  return wholeText(await bytesOf(input), kind);
}

/** Bytes as UTF-8 text, in one piece; other bytes are a FileProblem (a byte order mark is dropped). */
export function wholeText(bytes: Uint8Array, kind: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new FileProblem(`${kind}: the file is not UTF-8 text`);
  }
}

/** Bytes decoded at once when a file is read in pieces (about 0.2 ms each). */
export const PIECE_BYTES = 64 * 1024;

/**
 * A file's UTF-8 text in pieces of up to `pieceBytes` bytes, decoded as they are asked for (a byte order mark is
 * dropped; a character split between two pieces comes whole in the second); bytes that are not UTF-8 are a
 * FileProblem when their piece is asked for. Decoding a file of tens of MB at once holds the event loop (about
 * 90-120 ms for 30 MB, most of it the first writing of the text's fresh memory) and holds the whole text.
 */
export function* utf8Pieces(bytes: Uint8Array, kind: string, pieceBytes = PIECE_BYTES): Generator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  try {
    for (let at = 0; at < bytes.length; at += pieceBytes) yield decoder.decode(bytes.subarray(at, at + pieceBytes), { stream: true });
    yield decoder.decode();
  } catch (err) {
    if (err instanceof TypeError) throw new FileProblem(`${kind}: the file is not UTF-8 text`);
    throw err;
  }
}

/** The whole input's bytes, as they came: one chunk (an upload's file) as it is, no copy. */
export async function bytesOf(input: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk as Buffer);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
