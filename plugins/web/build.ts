/**
 * The user interface's assets, built in memory when the service starts
 * (the web plugin's `onStart`): esbuild bundles `app/main.tsx` (Preact,
 * preact-iso, marked, DOMPurify, the typed client) and the CSS it imports,
 * minified, as ES modules split into chunks, with content-hashed names so
 * that they can be cached forever; every file is compressed once with gzip
 * and brotli. Nothing is written to disk. The build runs once per process.
 */
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
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    write: false,
    outdir: OUT,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: 'asset-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const files = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = path.relative(OUT, file.path);
    const body = Buffer.from(file.contents);
    files.set(name, {
      body,
      gzip: gzipSync(body, { level: 9 }),
      brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      type: TYPES[path.extname(name)] ?? 'application/octet-stream',
    });
  }
  let script = '';
  let style = '';
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (output.entryPoint?.replace(/\\/g, '/').endsWith('app/main.tsx') && file.endsWith('.js')) {
      script = path.basename(file);
      if (output.cssBundle) style = path.basename(output.cssBundle);
    }
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
