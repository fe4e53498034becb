/**
 * The pages' assets, built in memory when the service starts (contract:
 * `buildAssets()`). This small version is the server's, for its tests: the
 * user interface's own (plugins/web/app/) replaces it when merged.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface Asset { body: Buffer; gzip: Buffer; brotli: Buffer; type: string }
export interface Assets { files: Map<string, Asset>; script: string; style: string }

const ENTRY = `
const config = JSON.parse(document.getElementById('service-config')?.textContent ?? '{}');
const app = document.getElementById('app');
if (app) app.textContent = 'Metadata: ' + (config.signIn ?? '');
`;
const STYLE = 'body { font-family: sans-serif; }\n';

let built: Promise<Assets> | undefined;

export function buildAssets(): Promise<Assets> {
  built ??= make();
  return built;
}

async function make(): Promise<Assets> {
  const result = await build({ stdin: { contents: ENTRY, loader: 'ts' }, bundle: true, format: 'esm', minify: true, write: false, target: 'es2022' });
  const files = new Map<string, Asset>();
  const add = (stem: string, ext: string, body: Buffer, type: string) => {
    const name = `${stem}-${createHash('sha256').update(body).digest('hex').slice(0, 10).toUpperCase()}.${ext}`;
    files.set(name, { body, gzip: gzipSync(body), brotli: brotliCompressSync(body), type });
    return name;
  };
  const script = add('app', 'js', Buffer.from(result.outputFiles[0].contents), 'text/javascript; charset=utf-8');
  const style = add('app', 'css', Buffer.from(STYLE, 'utf8'), 'text/css; charset=utf-8');
  return { files, script, style };
}
