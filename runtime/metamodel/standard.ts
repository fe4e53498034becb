/** Reads the checked-in standard metamodel definition that `meta` is created from. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { RawMetamodel } from './model.ts';

export const STANDARD_METAMODEL_PATH = fileURLToPath(new URL('./standard-metamodel.yaml', import.meta.url));

export function readStandardMetamodel(): RawMetamodel {
  return parse(readFileSync(STANDARD_METAMODEL_PATH, 'utf8')) as RawMetamodel;
}
