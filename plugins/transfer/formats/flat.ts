/**
 * What CSV and XLSX share: one table per type, its columns, how a value
 * becomes a cell and a cell a value, and how rows become records again.
 *
 * Columns: `_parent` (the parent's business key; empty for the root and for
 * objects directly below it), `_list` (the parent's list; empty only for the
 * root), `label`, then the type's writable properties in metamodel order,
 * then the other properties the records hold (custom properties), sorted.
 *
 * Cells (the same rule in CSV and XLSX, except where XLSX has typed cells):
 * - an empty cell is an absent value (a null is written as an empty cell);
 * - text: a cell beginning with `'` is text, that one apostrophe removed.
 *   The writer puts it before the empty text (so `'` alone is the empty
 *   string), before text beginning with `'`, and in CSV before text beginning
 *   with `=`, `+`, `-`, `@`, tab or carriage return, so that a spreadsheet
 *   program does not run it as a formula (XLSX writes text as text cells,
 *   never formulas);
 * - a column of the metamodel reads by the property's data type: text for
 *   strings, enumerations and single references; numbers; `true`/`false`;
 *   DATETIME as ISO 8601 text (`2026-01-31T12:00:00.000Z`); many-valued
 *   properties and records (time series) as JSON text. A cell that does not
 *   read as its type is kept as text, for the engine to refuse with its row;
 *   one that should be JSON and is not is a FileProblem;
 * - a column the metamodel does not know (a custom property) holds JSON when
 *   the cell parses as JSON (numbers, `true`, arrays …) and text otherwise;
 *   the writer therefore puts `'` before text that would parse as JSON.
 *
 * Writing keeps memory bounded: records arrive depth-first with types mixed,
 * and a table's header (its custom-property columns) is known only after the
 * last record, so each type's rows go to a temporary file (one JSON line per
 * row) as they come; `end` then writes the tables one after the other from
 * those files. Reading holds the rows of the file (bounded by the upload's
 * size) because one table per type must be put back into depth-first order.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { PropertyDef, TypeDef } from '../../../runtime/host.ts';
import { appended, FileProblem, formatKey, parseKey, type SourcePosition, type TransferRecord, type WriteContext } from '../records.ts';
import { temporaryDirectory } from './zip.ts';

export const PARENT = '_parent';
export const LIST = '_list';
export const LABEL = 'label';

/** Text that a spreadsheet program could take for a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A value as a flat format stores it: text, or (XLSX only) a typed cell. */
export type Cell = string | number | boolean | Date | undefined;

export interface CellStyle {
  /** CSV: every cell is text. XLSX: numbers and booleans have cells of their own. */
  typedCells: boolean;
  /** CSV: text that begins like a formula gets the apostrophe. */
  guardFormulas: boolean;
}

function literal(text: string, style: CellStyle, alsoWhen: boolean): string {
  const mark = text === '' || text.startsWith("'") || (style.guardFormulas && FORMULA_START.test(text)) || alsoWhen;
  return mark ? `'${text}` : text;
}

function parsesAsJson(text: string): boolean {
  try { JSON.parse(text); return true; } catch { return false; }
}

type Kind = 'text' | 'number' | 'boolean' | 'datetime' | 'json';

function kindOf(property: PropertyDef | undefined): Kind | undefined {
  if (!property) return undefined;
  if (property.many || property.dataType === 'RECORDS') return 'json';
  switch (property.dataType) {
    case 'INTEGER': case 'DECIMAL': return 'number';
    case 'BOOLEAN': return 'boolean';
    case 'DATETIME': return 'datetime';
    default: return 'text';
  }
}

/** A value as a cell of a column of the given property (undefined: a column the metamodel does not know). */
export function toCell(value: unknown, property: PropertyDef | undefined, style: CellStyle): Cell {
  if (value === undefined || value === null) return undefined;
  const kind = kindOf(property);
  if (typeof value === 'string') return literal(value, style, kind === undefined && parsesAsJson(value));
  if (typeof value === 'number' && kind === 'datetime' && Number.isFinite(value)) return new Date(value).toISOString();
  if ((typeof value === 'number' || typeof value === 'boolean') && style.typedCells) return value;
  return JSON.stringify(value);
}

/** A cell as the value of a column of the given property; `where` names the cell for a FileProblem. */
export function fromCell(cell: Cell, property: PropertyDef | undefined, where: () => { source: SourcePosition; column: string }): unknown {
  if (cell === undefined || cell === '') return undefined;
  const kind = kindOf(property);
  if (cell instanceof Date) return kind === 'text' ? cell.toISOString() : cell.getTime();
  if (typeof cell !== 'string') return kind === 'text' ? String(cell) : cell;
  if (cell.startsWith("'")) return cell.slice(1);
  switch (kind) {
    case undefined: return parsesAsJson(cell) ? JSON.parse(cell) : cell;
    case 'text': return cell;
    case 'number': { const n = Number(cell); return cell.trim() !== '' && Number.isFinite(n) ? n : cell; }
    case 'boolean': return /^true$/i.test(cell) ? true : /^false$/i.test(cell) ? false : cell;
    case 'datetime': {
      if (/^-?\d+$/.test(cell)) return Number(cell);
      const ms = /^\d{4}-\d\d-\d\d/.test(cell) ? Date.parse(cell) : NaN;
      return Number.isNaN(ms) ? cell : ms;
    }
    case 'json':
      try { return JSON.parse(cell); } catch {
        const { source, column } = where();
        throw new FileProblem(`${source.sheet}, row ${source.row}, column ${column}: the cell must hold JSON (a list or records), and ${JSON.stringify(cell.slice(0, 40))} is not JSON.`, source);
      }
  }
}

/** The columns of a type's table: fixed, the metamodel's writable properties, then the others found, sorted. */
export function columnsOf(type: TypeDef | undefined, found: Iterable<string>): { names: string[]; properties: (PropertyDef | undefined)[] } {
  const known = (type?.properties ?? []).filter(p => !p.readOnly && p.name !== LABEL);
  const knownNames = new Set(known.map(p => p.name));
  const extra = [...new Set(found)].filter(name => !knownNames.has(name) && name !== LABEL).sort();
  return {
    names: [PARENT, LIST, LABEL, ...known.map(p => p.name), ...extra],
    properties: [undefined, undefined, undefined, ...known, ...extra.map(() => undefined)],
  };
}

/** One row as staged: parent key, list, label, the other properties. */
type StagedRow = [string, string | null, string | null, Record<string, unknown>];

export interface Table {
  type: string;
  columns: string[];
  /** The rows' cells in column order, read back from the staging file. */
  rows(): AsyncIterable<Cell[]>;
}

/**
 * Collects records into one temporary file per type and hands the tables to
 * `emit` at the end, one after the other, each with its full header.
 */
export class TableStager {
  private readonly types = new Map<string, { file: WriteStream; path: string; found: Set<string> }>();
  private directory?: Awaited<ReturnType<typeof temporaryDirectory>>;
  private making?: Promise<void>;

  constructor(private readonly context: WriteContext, private readonly style: CellStyle) {}

  /** Undefined unless the caller must wait (for the directory, or a staging file to drain). */
  add(record: TransferRecord): Promise<void> | undefined {
    if (!this.directory) {
      this.making ??= temporaryDirectory().then((directory) => { this.directory = directory; });
      return this.making.then(() => this.add(record));
    }
    let table = this.types.get(record.type);
    if (!table) {
      const path = join(this.directory.path, `${this.types.size}.ndjson`);
      table = { file: createWriteStream(path), path, found: new Set() };
      this.types.set(record.type, table);
    }
    const { label, ...rest } = record.properties;
    for (const name of Object.keys(rest)) table.found.add(name);
    const isRoot = record.list === undefined;
    const row: StagedRow = [
      isRoot ? '' : formatKey(record.key.slice(0, -1)),
      record.list ?? null,
      typeof label === 'string' ? label : isRoot ? null : record.key[record.key.length - 1] ?? null,
      rest,
    ];
    return table.file.write(`${JSON.stringify(row)}\n`) ? undefined : once(table.file, 'drain').then(() => undefined);
  }

  /** Drops the staging files, for a writing that stops early. */
  async abort(): Promise<void> {
    // The directory may still be being made, with records waiting on it that
    // open their files as soon as it is there: let them, then close them all.
    // A destroyed stream may still be opening its file, and removing the
    // directory before it has closed let that late open fail (ENOENT) or the
    // removal fail (ENOTEMPTY), both uncaught; so wait for every file to close.
    await this.making?.catch(() => {});
    const closing = [...this.types.values()].map(({ file }) => {
      file.on('error', () => {});
      const closed = file.closed ? Promise.resolve() : new Promise<void>((resolve) => { file.once('close', () => resolve()); });
      file.destroy();
      return closed;
    });
    this.types.clear();
    await Promise.all(closing);
    await this.directory?.remove();
  }

  /** Ends the staging files and gives each table to `emit`, in the order the types first came. */
  async finish(emit: (table: Table) => Promise<void>): Promise<void> {
    try {
      for (const table of this.types.values()) {
        table.file.end();
        await once(table.file, 'close');
      }
      for (const [type, table] of this.types) {
        const { names, properties } = columnsOf(this.context.typeOf(type), table.found);
        const style = this.style;
        const textStyle = { ...style, typedCells: false };
        async function* rows(): AsyncIterable<Cell[]> {
          const lines = createInterface({ input: createReadStream(table.path, 'utf8'), crlfDelay: Infinity });
          for await (const line of lines) {
            const [parent, list, label, values] = JSON.parse(line) as StagedRow;
            const cells: Cell[] = [
              parent === '' ? undefined : literal(parent, textStyle, false),
              list === null ? undefined : literal(list, textStyle, false),
              label === null ? undefined : literal(label, textStyle, false),
            ];
            for (let i = 3; i < names.length; i++) {
              const value = values[names[i]!];
              cells.push(value === undefined || value === null ? undefined : toCell(value, properties[i], style));
            }
            yield cells;
          }
        }
        await emit({ type, columns: names, rows });
      }
    } finally {
      await this.directory?.remove();
    }
  }
}

/** A row read from a table, before it is a record. */
export interface ReadRow {
  type: string;
  parent: string[];
  list?: string;
  label?: string;
  properties: Record<string, unknown>;
  source: SourcePosition;
}

/** Reads one table's rows (header given separately) into ReadRows. */
export class TableReader {
  private readonly properties: (PropertyDef | undefined)[];
  private readonly index: { parent: number; list: number; label: number };

  constructor(readonly type: string, readonly sheet: string, header: Cell[], context: WriteContext) {
    const names = header.map(cell => (typeof cell === 'string' ? cell.trim() : cell === undefined ? '' : String(cell)));
    const seen = new Set<string>();
    names.forEach(name => {
      if (name === '') return;
      if (seen.has(name)) throw new FileProblem(`${sheet}: the header names the column ${name} twice.`, { sheet, row: 1 });
      seen.add(name);
    });
    for (const required of [PARENT, LIST, LABEL]) {
      if (!seen.has(required)) throw new FileProblem(`${sheet}: the header row has no column ${required}.`, { sheet, row: 1 });
    }
    const typeDef = context.typeOf(type);
    this.properties = names.map(name => typeDef?.properties.find(p => p.name === name && p.name !== LABEL));
    this.index = { parent: names.indexOf(PARENT), list: names.indexOf(LIST), label: names.indexOf(LABEL) };
    this.names = names;
  }

  private readonly names: string[];

  /** `cells[i]` is the cell under header column i; `row` is 1-based, the header being row 1. */
  read(cells: Cell[], row: number): ReadRow | undefined {
    if (cells.every(cell => cell === undefined || cell === '')) return undefined;
    const source = { sheet: this.sheet, row };
    cells.forEach((cell, i) => {
      if ((this.names[i] ?? '') === '' && cell !== undefined && cell !== '') {
        throw new FileProblem(`${this.sheet}, row ${row}: a value stands in column ${i + 1}, which the header does not name.`, source);
      }
    });
    const at = (i: number) => () => ({ source, column: this.names[i] ?? String(i + 1) });
    const parentText = textCell(cells[this.index.parent]);
    const parent = parseKey(parentText ?? '');
    if (!parent || parent.otherModel !== undefined) {
      throw new FileProblem(`${this.sheet}, row ${row}: ${JSON.stringify(parentText)} in column ${PARENT} is not a business key within the model.`, source);
    }
    const properties: Record<string, unknown> = {};
    const label = textCell(cells[this.index.label]);
    if (label !== undefined) properties[LABEL] = label;
    this.names.forEach((name, i) => {
      if (name === '' || i === this.index.parent || i === this.index.list || i === this.index.label) return;
      const value = fromCell(cells[i], this.properties[i], at(i));
      if (value !== undefined) properties[name] = value;
    });
    return { type: this.type, parent: parent.labels, list: textCell(cells[this.index.list]), label, properties, source };
  }
}

/** The text of a cell of a fixed column, the leading apostrophe removed. */
function textCell(cell: Cell): string | undefined {
  if (cell === undefined || cell === '') return undefined;
  const text = cell instanceof Date ? cell.toISOString() : String(cell);
  return text.startsWith("'") ? text.slice(1) : text;
}

/**
 * Puts rows of several tables back into depth-first order: the root first,
 * then each object before the objects below it, the lists of one parent in
 * the order of the parent type's lists (others after, as met), a list's
 * objects table by table in row order. Rows whose parent is not in the file
 * (an upload of part of a model) follow, shallowest parent first.
 */
export function* depthFirst(rows: ReadRow[], context: WriteContext): Generator<TransferRecord> {
  const roots = rows.filter(row => row.list === undefined);
  if (roots.length > 1) {
    const [, second] = roots;
    throw new FileProblem(`${second!.source.sheet}, row ${second!.source.row}: a second row without ${LIST}; only the model's root has none.`, second!.source);
  }
  for (const root of roots) {
    if (root.parent.length > 0) throw new FileProblem(`${root.source.sheet}, row ${root.source.row}: the root (the row without ${LIST}) cannot have a ${PARENT}.`, root.source);
  }
  const children = new Map<string, ReadRow[]>();
  for (const row of rows) {
    if (row.list === undefined) continue;
    const parentKey = formatKey(row.parent);
    const siblings = children.get(parentKey);
    if (siblings) siblings.push(row); else children.set(parentKey, [row]);
  }
  const typeOfKey = new Map<string, string>();
  const keyOf = (row: ReadRow) => (row.list === undefined ? [] : appended(row.parent, row.label ?? ''));
  for (const row of rows) typeOfKey.set(formatKey(keyOf(row)), row.type);

  const record = (row: ReadRow): TransferRecord =>
    ({ type: row.type, key: keyOf(row), ...(row.list === undefined ? {} : { list: row.list }), properties: row.properties, source: row.source });

  function* below(parentKey: string): Generator<TransferRecord> {
    const rowsBelow = children.get(parentKey);
    if (!rowsBelow) return;
    children.delete(parentKey);
    const parentType = typeOfKey.get(parentKey);
    const listOrder = (parentType && context.typeOf(parentType)?.lists.map(list => list.name)) || [];
    const lists = [...new Set(rowsBelow.map(row => row.list!))]
      .sort((a, b) => rank(listOrder, a) - rank(listOrder, b));
    for (const list of lists) {
      for (const row of rowsBelow) {
        if (row.list !== list) continue;
        yield record(row);
        yield* below(formatKey(keyOf(row)));
      }
    }
  }

  for (const root of roots) {
    yield record(root);
    yield* below('');
  }
  const orphans = [...children.keys()].sort((a, b) => depth(a) - depth(b));
  for (const parentKey of orphans) yield* below(parentKey);
}

function rank(order: string[], name: string): number {
  const i = order.indexOf(name);
  return i < 0 ? order.length : i;
}

function depth(key: string): number {
  return key === '' ? 0 : parseKey(key)!.labels.length;
}
