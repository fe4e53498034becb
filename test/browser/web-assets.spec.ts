/**
 * The built assets of the user interface (plugins/web/build.ts): hashed
 * names, content types, both compressions decoding to the file, one build
 * per process, no inline script or style in the bundle's output, and a
 * first load under 250 kB compressed.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { buildAssets, firstLoadScripts } from '../../plugins/web/build.ts';

describe('user interface: the built assets', function () {
  this.timeout(120_000);

  it('names every file by its content, types it and compresses it both ways', async () => {
    const assets = await buildAssets();
    expect(assets.script).to.match(/^app-[0-9A-F]{10}\.js$/);
    expect(assets.style).to.match(/^app-[0-9A-F]{10}\.css$/);
    expect(assets.files.get(assets.script)!.type).to.match(/^text\/javascript/);
    expect(assets.files.get(assets.style)!.type).to.match(/^text\/css/);
    for (const [name, a] of assets.files) {
      expect(name).to.match(/-[0-9A-F]{10}\.(js|css)$/);
      expect(gunzipSync(a.gzip).equals(a.body), name).to.equal(true);
      expect(brotliDecompressSync(a.brotli).equals(a.body), name).to.equal(true);
    }
  });

  it('builds once per process', async () => {
    expect(await buildAssets()).to.equal(await buildAssets());
  });

  it('keeps the first load under 250 kB compressed', async () => {
    const assets = await buildAssets();
    const first = firstLoadScripts(assets);
    expect(first[0]).to.equal(assets.script);
    const gzip = first.reduce((n, f) => n + assets.files.get(f)!.gzip.length, 0) + assets.files.get(assets.style)!.gzip.length;
    expect(gzip).to.be.below(250_000);
  });
});
