/** Zips for the specs of the zip-based formats, well made and badly made. */
import yauzl from 'yauzl';
import yazl from 'yazl';

export async function makeZip(entries: [string, Buffer | string][], compress = true): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of entries) zip.addBuffer(Buffer.from(data), name, { compress, mtime: new Date(0) });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every entry of a zip, inflated. */
export async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true });
  const entries = await new Promise<yauzl.Entry[]>((resolve, reject) => {
    const found: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => { found.push(entry); zip.readEntry(); });
    zip.on('end', () => resolve(found));
    zip.on('error', reject);
    zip.readEntry();
  });
  const out = new Map<string, Buffer>();
  for (const entry of entries) {
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    out.set(entry.fileName, Buffer.concat(chunks));
  }
  return out;
}

/** Replaces a byte string everywhere in a zip (an entry's name, in the local header and the directory). */
export function patchBytes(bytes: Buffer, from: string, to: string): Buffer {
  if (from.length !== to.length) throw new Error('same length only');
  const text = bytes.toString('latin1');
  if (!text.includes(from)) throw new Error(`${from} not in the zip`);
  return Buffer.from(text.split(from).join(to), 'latin1');
}

/** Makes every header of a zip claim `size` uncompressed bytes: a zip that lies about what it inflates to. */
export function claimUncompressedSize(bytes: Buffer, size: number): Buffer {
  const patched = Buffer.from(bytes);
  for (let i = 0; i + 4 <= patched.length; i++) {
    const signature = patched.readUInt32LE(i);
    if (signature === 0x04034b50) patched.writeUInt32LE(size, i + 22);
    if (signature === 0x02014b50) patched.writeUInt32LE(size, i + 24);
  }
  return patched;
}
