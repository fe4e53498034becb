/**
 * The file formats of upload and download by name (decisions §8). Each is a
 * TransferFormat (records.ts): it knows files, not the store.
 */
import type { TransferFormat } from '../records.ts';
import { csv } from './csv.ts';
import { json } from './json.ts';
import { xlsx } from './xlsx.ts';
import { xml } from './xml.ts';
import { yaml } from './yaml.ts';

export const FORMATS: Partial<Record<TransferFormat['name'], TransferFormat>> = { JSON: json, YAML: yaml, CSV: csv, XLSX: xlsx, XML: xml };

/** The names the service accepts, for messages and the OpenAPI document. */
export const formatNames = (): string[] => Object.keys(FORMATS);

/** A format by the name a client gives (any case); undefined for one the service does not have. */
export function formatNamed(name: string): TransferFormat | undefined {
  const upper = name.toUpperCase();
  return Object.hasOwn(FORMATS, upper) ? FORMATS[upper as TransferFormat['name']] : undefined;
}

/** The format a file name's extension says (`Finance.yml` → YAML, `Finance.csv.zip` → CSV); undefined when none does. */
export function formatOfFilename(filename: string | undefined): TransferFormat | undefined {
  const name = (filename ?? '').toLowerCase();
  if (name.endsWith('.yml')) return FORMATS.YAML;
  // A zip is the CSV format's (one file per type), whether named `Finance.csv.zip` as its download is or `Finance.zip`.
  if (name.endsWith('.zip')) return FORMATS.CSV;
  return Object.values(FORMATS).find((f) => name.endsWith(`.${f!.extension}`));
}
