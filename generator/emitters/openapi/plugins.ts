/**
 * The plugins' parts of the OpenAPI document: every `plugins/<name>/openapi.ts`
 * (runtime/openapi-fragment.ts), found by looking, so that a built-in plugin
 * that serves calls documents them by adding that one file. Sorted by plugin
 * name, so that the output does not depend on the file system's order.
 */
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { OpenApiFragment } from '../../../runtime/openapi-fragment.ts';

const PLUGINS = new URL('../../../plugins/', import.meta.url);

async function load(): Promise<{ plugin: string; fragment: OpenApiFragment }[]> {
  const names = readdirSync(fileURLToPath(PLUGINS), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  const found = [];
  for (const plugin of names) {
    const file = new URL(`${plugin}/openapi.ts`, PLUGINS);
    if (!existsSync(fileURLToPath(file))) continue;
    const module = (await import(file.href)) as { openapi?: OpenApiFragment };
    if (!module.openapi?.paths) throw new Error(`OpenAPI: plugins/${plugin}/openapi.ts exports no fragment named openapi with paths`);
    found.push({ plugin, fragment: module.openapi });
  }
  return found;
}

export const pluginFragments = await load();
