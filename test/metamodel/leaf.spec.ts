import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LEAF = join(ROOT, 'runtime', 'metamodel');

/** Every module specifier a source file imports or re-exports. */
function specifiers(source: string): string[] {
  return [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mjs)$/.test(f) && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

describe('the metamodel module (runtime/metamodel/)', () => {
  it('is a leaf: it imports only its own files, node built-ins and yaml', () => {
    const files = sourceFiles(LEAF);
    expect(files.map((f) => f.slice(LEAF.length + 1)).sort()).to.include.members(['index.ts', 'model.ts', 'resolve.ts', 'standard.ts']);
    for (const file of files) {
      for (const s of specifiers(readFileSync(file, 'utf8'))) {
        const allowed = s.startsWith('node:') || s === 'yaml' || /^\.\/[\w-]+\.ts$/.test(s);
        expect(allowed, `${file.slice(ROOT.length)} imports ${s}`).to.equal(true);
      }
    }
  });

  it('is what the generator and the runtime both import the metamodel from', () => {
    const importers = (dir: string) => sourceFiles(join(ROOT, dir))
      .filter((f) => specifiers(readFileSync(f, 'utf8')).some((s) => /(^|\/)metamodel\/(index|model|resolve|standard)\.ts$/.test(s)));
    expect(importers('generator'), 'generator/').to.not.be.empty;
    expect(importers('runtime').filter((f) => !f.startsWith(LEAF)), 'runtime/').to.not.be.empty;
    // No second copy of the resolver or of the definition's reader outside the leaf.
    for (const dir of ['generator', 'runtime', 'plugins']) {
      for (const f of sourceFiles(join(ROOT, dir)).filter((x) => !x.startsWith(LEAF))) {
        expect(readFileSync(f, 'utf8'), f.slice(ROOT.length)).to.not.match(/export function (resolveMetamodel|readStandardMetamodel)\b/);
      }
    }
  });
});
