/**
 * The generator core: runs every emitter over the resolved metamodel and is
 * the only place that writes into the output folder. Stale generated files
 * are removed so that a dropped type leaves nothing behind.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Metamodel } from '../runtime/metamodel/model.ts';
import type { DerivedEmitter, Emitter, GeneratedFile } from './emitter.ts';
import { clientEmitter } from './emitters/client.ts';
import { indexesEmitter } from './emitters/indexes.ts';
import { limitsEmitter } from './emitters/limits.ts';
import { modelsEmitter } from './emitters/models.ts';
import { openapiEmitter } from './emitters/openapi.ts';
import { profilesEmitter } from './emitters/profiles.ts';
import { routesEmitter } from './emitters/routes.ts';
import { validatorsEmitter } from './emitters/validators.ts';
import { viewsEmitter } from './emitters/views.ts';

export const EMITTERS: Emitter[] = [routesEmitter, modelsEmitter, validatorsEmitter, viewsEmitter, indexesEmitter, openapiEmitter, profilesEmitter, limitsEmitter];

/** Run after EMITTERS, on their files. */
export const DERIVED_EMITTERS: DerivedEmitter[] = [clientEmitter];

export async function emitAll(model: Metamodel, emitters: Emitter[] = EMITTERS, derived: DerivedEmitter[] = DERIVED_EMITTERS): Promise<GeneratedFile[]> {
  const files = emitters.flatMap((e) => e.emit(model));
  for (const e of derived) files.push(...(await e.emit([...files])));
  const paths = new Set<string>();
  for (const f of files) {
    if (paths.has(f.path)) throw new Error(`two emitters write ${f.path}`);
    if (!/\.gen\.[a-z]+$/.test(f.path)) throw new Error(`generated file ${f.path} must be named *.gen.*`);
    paths.add(f.path);
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** Writes the files; returns the paths that changed (written or removed). */
export function writeGenerated(outDir: string, files: GeneratedFile[]): string[] {
  mkdirSync(outDir, { recursive: true });
  const changed: string[] = [];
  const wanted = new Set(files.map((f) => f.path));
  for (const name of readdirSync(outDir)) {
    if (/\.gen\.[a-z]+$/.test(name) && !wanted.has(name)) {
      rmSync(join(outDir, name));
      changed.push(name);
    }
  }
  for (const f of files) {
    const path = join(outDir, f.path);
    if (existsSync(path) && readFileSync(path, 'utf8') === f.content) continue;
    writeFileSync(path, f.content);
    changed.push(f.path);
  }
  return changed;
}
