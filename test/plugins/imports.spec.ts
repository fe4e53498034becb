/**
 * Plugins use the service only through its public host module
 * (runtime/host.ts, `metadata-service/host` from outside), and never each
 * other: every module specifier in plugins/** is parsed (static and dynamic
 * imports, re-exports) and judged. A plugin's files may import their own
 * folder's files and npm packages; plugins/index.ts, the list of built-ins,
 * may import each plugin's index.ts. The user interface's browser code
 * (plugins/web/app/) talks to the service over HTTP with the typed client
 * (client/index.ts, which imports nothing of the service), and may import it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Node, Project, SyntaxKind } from 'ts-morph';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const PLUGINS = join(ROOT, 'plugins');
const HOST = join(ROOT, 'runtime', 'host.ts');
const CLIENT = join(ROOT, 'client', 'index.ts');
const BROWSER_APP = join(PLUGINS, 'web', 'app');

const project = new Project({ useInMemoryFileSystem: true });

/** Every module specifier the source names. */
export function specifiersOf(source: string): string[] {
  const file = project.createSourceFile(`probe-${Math.random()}.ts`, source, { overwrite: true });
  const found: string[] = [];
  for (const d of file.getImportDeclarations()) found.push(d.getModuleSpecifierValue());
  for (const d of file.getExportDeclarations()) {
    const value = d.getModuleSpecifierValue();
    if (value !== undefined) found.push(value);
  }
  for (const call of file.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    if (call.getExpression().getKind() !== SyntaxKind.ImportKeyword) continue;
    const [arg] = call.getArguments();
    // A computed specifier cannot be judged here; plugins load generated code that way, by a path they are handed.
    if (arg && Node.isStringLiteral(arg)) found.push(arg.getLiteralValue());
  }
  project.removeSourceFile(file);
  return found;
}

/** Why the import is not allowed, or null. `file` is absolute, inside plugins/. */
export function refusal(file: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) {
    if (specifier === 'metadata-service' || (specifier.startsWith('metadata-service/') && specifier !== 'metadata-service/host')) {
      return `imports ${specifier}: only metadata-service/host is public`;
    }
    return null;
  }
  const target = resolve(dirname(file), specifier);
  if (target === HOST) return null;
  if (target === CLIENT && file.startsWith(BROWSER_APP + sep)) return null;
  const pluginOf = (path: string) => relative(PLUGINS, path).split(sep)[0];
  if (!target.startsWith(PLUGINS + sep)) return `imports ${specifier}: outside plugins/ only runtime/host.ts may be imported`;
  if (dirname(file) === PLUGINS) {
    // plugins/index.ts lists the built-ins by their manifests.
    return relative(PLUGINS, target).split(sep).length === 2 && target.endsWith(`${sep}index.ts`) ? null : `imports ${specifier}: the list of plugins imports their index.ts only`;
  }
  if (pluginOf(target) !== pluginOf(file)) return `imports ${specifier}: a plugin never imports another`;
  return null;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|mjs|js)$/.test(e.name) ? [path] : [];
  });
}

describe('plugin imports', () => {
  it('reach the service only through runtime/host.ts, and never another plugin', () => {
    const files = sourceFiles(PLUGINS);
    expect(files.length).to.be.greaterThan(40);
    const problems: string[] = [];
    let judged = 0;
    for (const file of files) {
      for (const specifier of specifiersOf(readFileSync(file, 'utf8'))) {
        judged++;
        const why = refusal(file, specifier);
        if (why) problems.push(`${relative(ROOT, file)} ${why}`);
      }
    }
    expect(judged).to.be.greaterThan(100);
    expect(problems).to.deep.equal([]);
  });

  it('finds every kind of import, and refuses deep, cross-plugin and private package imports', () => {
    const source = [
      `import { a } from '../../runtime/errors.ts';`,
      `import type {\n  B,\n  C,\n} from '../auth-basic/index.ts';`,
      `export { D } from '../../runtime/storage/objects.ts';`,
      `import './side-effect.ts';`,
      `const m = await import('../query/jobs.ts');`,
      `import { E } from 'metadata-service/runtime/config.ts';`,
      `import { F } from '../../runtime/host.ts';`,
      `import { G } from 'metadata-service/host';`,
      `import { H } from './own.ts';`,
      `import { I } from 'jose';`,
    ].join('\n');
    const specifiers = specifiersOf(source);
    expect(specifiers).to.have.members([
      '../../runtime/errors.ts', '../auth-basic/index.ts', '../../runtime/storage/objects.ts', './side-effect.ts', '../query/jobs.ts',
      'metadata-service/runtime/config.ts', '../../runtime/host.ts', 'metadata-service/host', './own.ts', 'jose',
    ]);
    const file = join(PLUGINS, 'auth-ldap', 'index.ts');
    const refused = specifiers.filter((s) => refusal(file, s));
    expect(refused).to.have.members(['../../runtime/errors.ts', '../auth-basic/index.ts', '../../runtime/storage/objects.ts', '../query/jobs.ts', 'metadata-service/runtime/config.ts']);
    expect(refusal(join(PLUGINS, 'index.ts'), './auth-ldap/index.ts')).to.equal(null);
    expect(refusal(join(PLUGINS, 'index.ts'), './auth-ldap/settings.ts')).to.match(/index\.ts only/);
    // The pages in the browser use the typed client; the web plugin's server side does not, nor does any other plugin.
    expect(refusal(join(BROWSER_APP, 'api.ts'), '../../../client/index.ts')).to.equal(null);
    expect(refusal(join(PLUGINS, 'web', 'index.ts'), '../../client/index.ts')).to.match(/outside plugins/);
    expect(refusal(join(BROWSER_APP, 'api.ts'), '../../../runtime/errors.ts')).to.match(/outside plugins/);
  });
});
