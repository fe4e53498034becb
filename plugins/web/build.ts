/**
 * The user interface's assets, built in memory when the service starts
 * (the web plugin's `onStart`): esbuild bundles `app/main.tsx` (Preact,
 * preact-iso, marked, DOMPurify, the typed client) and the CSS it imports
 * into ES modules and one style sheet, minified, each named by the hash of
 * its content (`app-3F2A9C07B1.js`) so that they can be cached forever;
 * every file is compressed once with gzip and brotli. Code a page loads with
 * a dynamic `import()` (the query console and its editor) is split into
 * chunks of its own, fetched only when that page opens; the chunks refer to
 * each other by their hashed names below `/web/assets/`. Nothing is written
 * to disk. The build runs once per process.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface Asset { body: Buffer; gzip: Buffer; brotli: Buffer; type: string }
export interface Assets { files: Map<string, Asset>; script: string; style: string }

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(HERE, 'out');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

let memo: Promise<Assets> | undefined;

/** The built assets, built on the first call and kept for the life of the process. */
export function buildAssets(): Promise<Assets> {
  memo ??= buildOnce().catch((error) => {
    memo = undefined;
    throw error;
  });
  return memo;
}

async function buildOnce(): Promise<Assets> {
  const result = await build({
    entryPoints: { app: path.join(HERE, 'app', 'main.tsx') },
    bundle: true,
    format: 'esm',
    splitting: true,
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    write: false,
    outdir: OUT,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    assetNames: 'asset-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  // esbuild's own names carry its hash of the chunk and of what it imports; the served name is the hash of that
  // output (which names its chunks by esbuild's names), so a change anywhere below a chunk renames it.
  const names = new Map<string, string>();
  for (const file of result.outputFiles) {
    const ext = path.extname(file.path);
    const base = path.basename(file.path, ext).replace(/-[A-Z0-9]{8}$/, '');
    names.set(path.basename(file.path), `${base}-${createHash('sha256').update(file.contents).digest('hex').slice(0, 10).toUpperCase()}${ext}`);
  }
  const files = new Map<string, Asset>();
  let script = '';
  let style = '';
  for (const file of result.outputFiles) {
    const ext = path.extname(file.path);
    const original = path.basename(file.path);
    const name = names.get(original)!;
    let body = Buffer.from(file.contents);
    if (ext === '.js') {
      // Imports between chunks are relative (`./chunk-….js`): all files are served side by side below /web/assets/.
      body = Buffer.from(body.toString('utf8').replace(/(["'])\.\/([\w.-]+\.js)\1/g, (whole, quote: string, target: string) => {
        const renamed = names.get(target);
        return renamed ? `${quote}./${renamed}${quote}` : whole;
      }));
    }
    files.set(name, {
      body,
      gzip: gzipSync(body, { level: 9 }),
      brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      type: TYPES[ext] ?? 'application/octet-stream',
    });
    if (original === 'app.js') script = name;
    if (original === 'app.css') style = name;
  }
  if (!script || !style) throw new Error('The user interface build gave no entry script or style sheet.');
  return { files, script, style };
}

/** The files a first load fetches: the entry script and the chunks it imports statically, transitively. */
export function firstLoadScripts(assets: Assets): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const text = assets.files.get(name)?.body.toString('utf8') ?? '';
    for (const m of text.matchAll(/(?:import|from)\s*["']\.\/([^"']+\.js)["']/g)) visit(m[1]);
  };
  visit(assets.script);
  return [...seen];
}
