/**
 * Embeds the caller's checked statement in the statements the service runs:
 * a `limit 0` run that tells the result's columns, then the COPY (or the
 * cursor) that formats them. The caller's text stands on lines of its own,
 * so a trailing `--` comment cannot eat what follows it, and every composed
 * statement is parsed again and must have exactly the intended shape: the
 * template's tree, with the caller's tree — unchanged — in its one place.
 * Text that closed the parenthesis early or opened a second statement would
 * change either tree and is refused before it runs.
 */
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'libpg-query';
import { withoutLocations, type CheckedStatement } from './sandbox.ts';
import { TEXT_ROW_DELIMITER, TEXT_ROW_QUOTE, uniqueNames, XmlFrame, xmlTextSql, type Format } from './formats.ts';
import { literal } from '../../runtime/host.ts';

const byteLiteral = (byte: number) => `E'\\x${byte.toString(16).padStart(2, '0')}'`;

/** A column of the result, as the `limit 0` run described it. */
export interface Column {
  name: string;
  /** PostgreSQL type OID. */
  type: number;
}

const BOOL = 16;
const TIMESTAMP = 1114;
const TIMESTAMPTZ = 1184;
const TIMESTAMP_FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.MS'`;
const PLACEHOLDER = `select 'the caller''s statement' as placeholder`;

/** The composed statement refused: should never happen for a statement that passed the check. */
export class CompositionRefused extends Error {}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * How one column is written: `text` gives every value as its text (CSV
 * fetched, XML); `copy` leaves the text to COPY, which writes a value as its
 * type's text anyway (CSV over COPY: a cast per value costs time for
 * nothing); `json` keeps JSON types. Timestamps and booleans are formatted in
 * every mode but json's booleans.
 */
function columnSql(column: Column, i: number, mode: 'text' | 'copy' | 'json'): string {
  const ref = `q.c${i + 1}`;
  if (column.type === TIMESTAMP) return `to_char(${ref}, ${TIMESTAMP_FORMAT})`;
  if (column.type === TIMESTAMPTZ) return `to_char(${ref} at time zone 'UTC', ${TIMESTAMP_FORMAT})`;
  if (mode === 'json') return ref;
  // boolean's cast to text is 'true'/'false' (its output function writes t/f); cheaper than a CASE per value.
  if (column.type === BOOL) return `${ref}::text`;
  return mode === 'copy' ? ref : `${ref}::text`;
}

/** `select <formatted columns> from (\n<statement>\n) q(c1, …)`; output names given by `names`. */
function formattedSelect(columns: Column[], names: string[], mode: 'text' | 'copy' | 'json', inner: string): string {
  const list = columns.length ? columns.map((c, i) => `${columnSql(c, i, mode)} as ${ident(names[i])}`).join(', ') : '';
  const aliases = columns.length ? `(${columns.map((_, i) => `c${i + 1}`).join(', ')})` : '';
  return `select ${list} from (\n${inner}\n) q${aliases}`;
}

/** The statement that finds the result's columns without reading rows. */
export function describeSql(inner: string): string {
  return `select * from (\n${inner}\n) q limit 0`;
}


/** Types whose text never holds &, <, > or a carriage return: their values need no escaping. */
const PLAIN_TYPES = new Set([BOOL, 20, 21, 23, 26, 700, 701, 1700, 2950, 1082, TIMESTAMP, TIMESTAMPTZ]);

/** One XML row per result row, written by PostgreSQL: each column's tags around its escaped text, nothing for null. */
function xmlRowsSql(columns: Column[], inner: string): string {
  const frame = new XmlFrame(columns.map((c) => c.name));
  const parts = columns.map((c, i) => {
    const text = columnSql(c, i, 'text');
    return `coalesce(${literal(frame.open[i])} || ${PLAIN_TYPES.has(c.type) ? text : xmlTextSql(text)} || ${literal(frame.close[i])}, '')`;
  });
  return `select ${['\'<row>\'', ...parts, '\'</row>\''].join(' || ')} as x from (\n${inner}\n) q${columns.length ? `(${columns.map((_, i) => `c${i + 1}`).join(', ')})` : ''}`;
}

/**
 * The statement that produces the result: CSV rows for CSV; one text per
 * row for JSON (its object) and XML (its row element). Over COPY
 * (PostgreSQL) it streams out of COPY … TO STDOUT; over a cursor (embedded)
 * the same select is fetched.
 */
export function resultSql(format: Format, columns: Column[], via: 'copy' | 'cursor', inner: string, cursor = 'query_result'): string {
  let select: string;
  if (format === 'CSV') select = formattedSelect(columns, columns.map((c) => c.name), via === 'copy' ? 'copy' : 'text', inner);
  else if (format === 'JSON') select = `select row_to_json(f)::text as j from (${formattedSelect(columns, uniqueNames(columns.map((c) => c.name)), 'json', inner)}) f`;
  else select = xmlRowsSql(columns, inner);
  if (via === 'cursor') return `declare ${cursor} no scroll cursor for ${select}`;
  // JSON and XML: one text per row, through CSV with a quote and delimiter those texts never hold unescaped (copy-out.ts).
  return format === 'CSV'
    ? `copy (${select}) to stdout with (format csv, header)`
    : `copy (${select}) to stdout with (format csv, delimiter ${byteLiteral(TEXT_ROW_DELIMITER)}, quote ${byteLiteral(TEXT_ROW_QUOTE)})`;
}

type Json = Record<string, unknown>;
type Path = (string | number)[];

function find(node: unknown, target: unknown, path: Path = []): Path | null {
  if (isDeepStrictEqual(node, target)) return path;
  if (!node || typeof node !== 'object') return null;
  for (const [k, v] of Object.entries(node as Json)) {
    const found = find(v, target, [...path, Array.isArray(node) ? Number(k) : k]);
    if (found) return found;
  }
  return null;
}

function at(node: unknown, path: Path): unknown {
  return path.reduce<unknown>((n, k) => (n && typeof n === 'object' ? (n as Json)[k as string] : undefined), node);
}

function replaced(node: unknown, path: Path, value: unknown): unknown {
  if (!path.length) return value;
  const [head, ...rest] = path;
  if (Array.isArray(node)) return node.map((v, i) => (i === head ? replaced(v, rest, value) : v));
  return { ...(node as Json), [head]: replaced((node as Json)[head as string], rest, value) };
}

async function statementTree(sql: string): Promise<unknown> {
  const stmts = (await parse(sql)).stmts ?? [];
  if (stmts.length !== 1) throw new CompositionRefused(`the composed statement is ${stmts.length} statements`);
  return withoutLocations(stmts[0].stmt);
}

let placeholderTree: Promise<unknown> | undefined;
const placeholder = () => (placeholderTree ??= statementTree(PLACEHOLDER));

/**
 * Parsed templates by their text: the same few (one per format and column
 * list) come back with every run, and each parse walks the whole tree.
 * Bounded: a template names the result's columns, which callers choose.
 */
const templates = new Map<string, Promise<{ template: unknown; path: Path }>>();
const TEMPLATES_KEPT = 200;

function templateOf(sql: string): Promise<{ template: unknown; path: Path }> {
  let found = templates.get(sql);
  if (!found) {
    found = (async () => {
      const template = await statementTree(sql);
      const path = find(template, await placeholder());
      if (!path) throw new CompositionRefused('the template has no place for the statement');
      return { template, path };
    })();
    found.catch(() => templates.delete(sql));
    if (templates.size >= TEMPLATES_KEPT) templates.delete(templates.keys().next().value!);
    templates.set(sql, found);
  }
  return found;
}

/**
 * Characters (as PostgreSQL counts them: code points) before the caller's
 * statement in `compose(…)`: a database error's position minus these is a
 * position in the checked text. The templates put the same text before the
 * statement whatever it is.
 */
export function statementOffset(compose: (inner: string) => string): number {
  const sql = compose(PLACEHOLDER);
  return Array.from(sql.slice(0, sql.indexOf(PLACEHOLDER))).length;
}

/**
 * Builds `compose(inner)` around the checked statement and proves its shape:
 * the same composition around a placeholder gives the template tree; the real
 * one must equal it with the caller's tree where the placeholder was.
 */
export async function composeChecked(statement: CheckedStatement, compose: (inner: string) => string): Promise<string> {
  const placeholderTree = await placeholder();
  const { template, path } = await templateOf(compose(PLACEHOLDER));
  const sql = compose(statement.text);
  let actual: unknown;
  try {
    actual = await statementTree(sql);
  } catch (err) {
    throw new CompositionRefused(String((err as Error).message ?? err));
  }
  // Both trees are without source positions (sandbox.ts, POSITION_FIELDS): the embedded copy's offsets are larger by
  // the template's prefix; every other field must be equal. While the list offsets of PostgreSQL 18's parser
  // (list_start, rexpr_list_start …) were not counted as positions, every IN (…), NOT IN (…) and ARRAY[…] failed here.
  if (!isDeepStrictEqual(at(actual, path), statement.tree)) throw new CompositionRefused('the statement changed when embedded');
  if (!isDeepStrictEqual(replaced(actual, path, placeholderTree), template)) throw new CompositionRefused('the composed statement changed shape');
  return sql;
}
