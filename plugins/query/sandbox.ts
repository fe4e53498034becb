/**
 * The first wall of the query sandbox: the caller's statement is parsed with
 * PostgreSQL's own parser (libpg-query) and its tree inspected before anything
 * reaches the database. Only one plain SELECT (WITH, UNION, VALUES included)
 * over the generated views passes, calling only allow-listed functions and
 * casting only to allow-listed types. Everything is allow-listed — node kinds
 * too — so that a construct this file does not know is refused, not passed.
 *
 * The database checks again (read-only role, read-only transaction, one
 * statement over the extended protocol); this check exists so that a refusal
 * is a clear 400 and so that nothing that could change a setting, take a lock
 * or call out of the database ever runs. It is the only wall against
 * set_config on the tenant and time settings: PUBLIC may execute set_config,
 * and taking that away would change the whole database for every role.
 *
 * libpg-query parses with standard_conforming_strings on, and every run pins
 * that setting in its transaction, so parser and server read strings alike.
 *
 * A view may be named with a schema, `<schema>.<view>`, where `<schema>` is
 * SERVICE_QUERY_SCHEMA (decisions §7.4: reports of the original product run
 * unchanged). That name is the caller's word for the database's own schema,
 * not a schema of the server: the checked statement's text has it replaced by
 * the database's schema (the one its search_path names), and the text is
 * parsed again and must give the checked tree with just that name changed.
 * Any other schema, and this one before anything but a view, is refused.
 */
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'libpg-query';

/** Longer statements are refused before parsing (bytes of UTF-8). */
export const MAX_STATEMENT_BYTES = 100 * 1024;
/** Deeper parse trees are refused (about 140 nested subqueries, or 500 chained operators). */
export const MAX_TREE_DEPTH = 1000;

export type RefusalKey =
  | 'statementEmpty' | 'statementTooLong' | 'statementNul' | 'statementSyntax' | 'statementTooDeep' | 'statementNotOne'
  | 'statementNotSelect' | 'statementInto' | 'statementLocking' | 'statementRelation' | 'statementQualified'
  | 'statementFunction' | 'statementType' | 'statementConstruct' | 'statementParameter';

/**
 * The statement was refused: `key` names the message, `detail` what was
 * refused, `position` where in the caller's statement (1-based, in
 * characters, as PostgreSQL counts them) when the parser or the refused
 * node tells. `location` is the parse tree's byte offset it comes from.
 */
export class StatementRefused extends Error {
  position?: number;
  location?: number;

  constructor(readonly key: RefusalKey, readonly detail: Record<string, unknown> = {}, at: { position?: number; location?: number } = {}) {
    super(`${key} ${JSON.stringify(detail)}`);
    this.position = at.position;
    this.location = at.location;
  }
}

/** The names a statement may read. */
export interface QueryNames {
  /** The views of the database. */
  views: ReadonlySet<string>;
  /** SERVICE_QUERY_SCHEMA: the one schema a view may be named with (`service.scheme_view`). */
  schema: string;
  /** The database's own schema, which that schema name stands for when the statement runs. */
  target: string;
}

/** SERVICE_QUERY_SCHEMA's default. */
export const DEFAULT_QUERY_SCHEMA = 'service';

export interface CheckedStatement {
  /** The statement's own text, without a trailing semicolon or what follows it. */
  text: string;
  /** Its parse tree without positions, to compare with the tree of a statement it is embedded in. */
  tree: unknown;
  /** Where `text` stands in the caller's statement, to give the database's error positions in the caller's terms (callerPosition). */
  origin?: TextOrigin;
}

/**
 * How the checked text came out of the caller's statement: its bytes from
 * `start` on, with the schema names that `requalified` replaced. Offsets
 * are bytes of the text with the replacements made (which begin after
 * `start`, so `start` is the same in both).
 */
export interface TextOrigin {
  source: string;
  start: number;
  /** Replaced names: where (bytes of the rewritten statement), how long now, how long in the caller's statement. */
  edits: { at: number; length: number; original: number }[];
}

/** The 1-based character position (PostgreSQL's way of counting) of a byte offset of a text. */
export function characterPosition(text: string, byteOffset: number): number {
  return Array.from(Buffer.from(text, 'utf8').subarray(0, byteOffset).toString('utf8')).length + 1;
}

/**
 * A position in the checked text (0-based, in characters) as a position in
 * the caller's statement (1-based, in characters); a position within a
 * replaced schema name is that name's start. Undefined outside the text
 * (in the part of a composed statement that the service wrote).
 */
export function callerPosition(statement: CheckedStatement, offset: number): number | undefined {
  const { origin } = statement;
  const chars = Array.from(statement.text);
  if (!origin || !Number.isInteger(offset) || offset < 0 || offset >= chars.length) return undefined;
  let byte = origin.start + Buffer.byteLength(chars.slice(0, offset).join(''), 'utf8');
  let shift = 0;
  for (const edit of origin.edits) {
    if (byte < edit.at) break;
    if (byte < edit.at + edit.length) {
      byte = edit.at;
      break;
    }
    shift += edit.original - edit.length;
  }
  return characterPosition(origin.source, byte + shift);
}

type Json = Record<string, unknown>;

/** Node kinds a plain read may be built of; anything else is refused. */
const ALLOWED_NODES = new Set([
  'SelectStmt', 'ResTarget', 'ColumnRef', 'A_Star', 'A_Const', 'String', 'Integer', 'Float', 'Boolean', 'BitString',
  'A_Expr', 'A_Indirection', 'A_Indices', 'A_ArrayExpr', 'BoolExpr', 'NullTest', 'BooleanTest', 'CaseExpr', 'CaseWhen',
  'CoalesceExpr', 'MinMaxExpr', 'SubLink', 'RangeVar', 'RangeSubselect', 'RangeFunction', 'JoinExpr', 'SortBy',
  'WindowDef', 'FuncCall', 'TypeCast', 'CommonTableExpr', 'WithClause', 'List', 'RowExpr', 'SQLValueFunction',
  'GroupingSet', 'GroupingFunc', 'CollateClause', 'Alias',
]);

/**
 * Functions a statement may call: string, number, date/time, JSON, array,
 * aggregate and window functions that read only their arguments. Left out on
 * purpose: anything that reads or sets configuration (current_setting,
 * set_config), sleeps, locks, touches files, large objects, sequences, other
 * databases or other sessions, and the functions that build huge values from
 * tiny input in one call (repeat, lpad, rpad, generate_series). That ban only
 * makes it harder: a recursive query that doubles a string gets there too.
 * What bounds memory is the database: PostgreSQL refuses a value over 1 GB,
 * and the embedded database, whose memory never shrinks, is reopened once
 * such a statement is over (runtime/storage/pglite/host.ts).
 */
const ALLOWED_FUNCTIONS = new Set([
  // strings
  'lower', 'upper', 'initcap', 'length', 'char_length', 'character_length', 'octet_length', 'bit_length',
  'substr', 'substring', 'left', 'right', 'strpos', 'position', 'split_part', 'replace', 'translate', 'reverse',
  'trim', 'btrim', 'ltrim', 'rtrim', 'concat', 'concat_ws', 'format', 'starts_with', 'ascii', 'chr', 'md5',
  'quote_ident', 'quote_literal', 'quote_nullable', 'to_hex', 'encode', 'decode', 'string_to_array', 'array_to_string',
  'regexp_replace', 'regexp_match', 'regexp_matches', 'regexp_like', 'regexp_count', 'regexp_instr', 'regexp_substr',
  'regexp_split_to_array', 'regexp_split_to_table', 'string_to_table', 'unistr', 'normalize', 'casefold',
  // numbers
  'abs', 'ceil', 'ceiling', 'floor', 'round', 'trunc', 'mod', 'div', 'power', 'pow', 'sqrt', 'cbrt', 'exp', 'ln', 'log',
  'log10', 'sign', 'pi', 'degrees', 'radians', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'width_bucket',
  'greatest', 'least', 'num_nulls', 'num_nonnulls', 'scale', 'gcd', 'lcm', 'factorial', 'random',
  // date and time
  'now', 'clock_timestamp', 'statement_timestamp', 'transaction_timestamp', 'date_trunc', 'date_part', 'extract',
  'date_bin', 'age', 'make_date', 'make_time', 'make_timestamp', 'make_timestamptz', 'make_interval', 'to_char',
  'to_date', 'to_timestamp', 'to_number', 'justify_days', 'justify_hours', 'justify_interval', 'isfinite', 'timezone',
  'overlaps',
  // JSON
  'to_json', 'to_jsonb', 'row_to_json', 'array_to_json', 'json_build_object', 'jsonb_build_object', 'json_build_array',
  'jsonb_build_array', 'json_object', 'jsonb_object', 'json_agg', 'jsonb_agg', 'json_object_agg', 'jsonb_object_agg',
  'json_array_elements', 'jsonb_array_elements', 'json_array_elements_text', 'jsonb_array_elements_text', 'json_each',
  'jsonb_each', 'json_each_text', 'jsonb_each_text', 'json_object_keys', 'jsonb_object_keys', 'json_typeof',
  'jsonb_typeof', 'json_array_length', 'jsonb_array_length', 'json_extract_path', 'jsonb_extract_path',
  'json_extract_path_text', 'jsonb_extract_path_text', 'jsonb_strip_nulls', 'json_strip_nulls', 'jsonb_pretty',
  'jsonb_set', 'jsonb_insert', 'jsonb_path_exists', 'jsonb_path_match', 'jsonb_path_query', 'jsonb_path_query_array',
  'jsonb_path_query_first',
  // arrays
  'array_length', 'array_lower', 'array_upper', 'array_ndims', 'cardinality', 'array_position', 'array_positions',
  'array_append', 'array_prepend', 'array_cat', 'array_remove', 'array_replace', 'unnest',
  // aggregates and windows
  'count', 'sum', 'avg', 'min', 'max', 'string_agg', 'array_agg', 'bool_and', 'bool_or', 'every', 'bit_and', 'bit_or',
  'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp', 'corr', 'covar_pop', 'covar_samp',
  'percentile_cont', 'percentile_disc', 'mode', 'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist',
  'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value',
  // identifiers
  'gen_random_uuid', 'uuidv4',
]);

/** Functions PostgreSQL's grammar writes as `pg_catalog.f` for SQL syntax (EXTRACT(…FROM…), TRIM(BOTH…), AT TIME ZONE …). */
const SQL_SYNTAX_FUNCTIONS = new Set([
  'extract', 'substring', 'btrim', 'ltrim', 'rtrim', 'position', 'overlay', 'timezone', 'normalize', 'overlaps',
  'like_escape', 'similar_to_escape', 'similar_escape', 'date_part',
]);

/** Value functions that would name the service's own login (the statement runs as the read-only role) or database. */
const HIDDEN_VALUE_FUNCTIONS: Record<string, string> = { SVFOP_SESSION_USER: 'SESSION_USER', SVFOP_CURRENT_CATALOG: 'CURRENT_CATALOG' };

/** Types a value may be cast to: the ordinary data types, never reg* (catalog lookups) nor a type of another schema. */
const ALLOWED_TYPES = new Set([
  'bool', 'boolean', 'int2', 'int4', 'int8', 'smallint', 'integer', 'int', 'bigint', 'numeric', 'decimal', 'float4',
  'float8', 'real', 'float', 'text', 'varchar', 'bpchar', 'char', 'character', 'uuid', 'date', 'time', 'timetz',
  'timestamp', 'timestamptz', 'interval', 'json', 'jsonb', 'bytea', 'bit', 'varbit', 'name',
]);

/** A parse-tree node's kind as the statement's words: `CreateTableAsStmt` is CREATE TABLE AS. */
function statementKind(node: string): string {
  return node.replace(/Stmt$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();
}

/**
 * Parses the statement and checks it; throws StatementRefused, with the
 * position in `sql` where the parser or the refused node gives one.
 * `names`: what a statement may read.
 */
export async function checkStatement(sql: string, names: QueryNames): Promise<CheckedStatement> {
  try {
    return await check(sql, names);
  } catch (err) {
    if (err instanceof StatementRefused && err.position === undefined && err.location !== undefined && err.location >= 0) {
      err.position = characterPosition(sql, err.location);
    }
    throw err;
  }
}

async function check(sql: string, names: QueryNames): Promise<CheckedStatement> {
  if (!sql.trim()) throw new StatementRefused('statementEmpty');
  const bytes = Buffer.byteLength(sql, 'utf8');
  if (bytes > MAX_STATEMENT_BYTES) throw new StatementRefused('statementTooLong', { limit: MAX_STATEMENT_BYTES });
  // PostgreSQL refuses NUL in a query string; the parser would stop at it and check less than the database would see.
  if (sql.includes('\u0000')) throw new StatementRefused('statementNul');
  let parsed: { stmts?: { stmt: Json; stmt_location?: number; stmt_len?: number }[] };
  try {
    parsed = (await parse(sql)) as typeof parsed;
  } catch (err) {
    const message = String((err as Error)?.message ?? err);
    if (err instanceof RangeError || /stack|memory exhausted/i.test(message)) throw new StatementRefused('statementTooDeep', { limit: MAX_TREE_DEPTH });
    // libpg-query's cursor is 0-based, in characters.
    const cursor = (err as { sqlDetails?: { cursorPosition?: unknown } })?.sqlDetails?.cursorPosition;
    throw new StatementRefused('statementSyntax', { error: message }, typeof cursor === 'number' && cursor >= 0 ? { position: cursor + 1 } : {});
  }
  const stmts = parsed.stmts ?? [];
  // Placed where the second statement starts (libpg-query's location skips the white space and comments before it).
  if (stmts.length !== 1) throw new StatementRefused('statementNotOne', { count: stmts.length }, { location: stmts[1]?.stmt_location });
  const [{ stmt, stmt_location: start = 0, stmt_len: len }] = stmts;
  if (treeDepth(stmt) > MAX_TREE_DEPTH) throw new StatementRefused('statementTooDeep', { limit: MAX_TREE_DEPTH });
  const kind = Object.keys(stmt)[0];
  if (kind !== 'SelectStmt') throw new StatementRefused('statementNotSelect', { kind: statementKind(kind) }, { location: start });
  const checker = new Checker(names);
  checker.select(stmt.SelectStmt as Json, new Set());
  if (checker.qualified.length) return requalified(sql, stmt, names, checker.qualified);
  return { text: statementText(sql, start, len), tree: withoutLocations(stmt), origin: { source: sql, start, edits: [] } };
}

/** Locations are byte offsets: the statement's own bytes (no trailing `;` or comment after it). */
function statementText(sql: string, start: number, len: number | undefined): string {
  const raw = Buffer.from(sql, 'utf8');
  return raw.subarray(start, len === undefined || len === 0 ? raw.length : start + len).toString('utf8');
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * End (byte offset) of the identifier that starts at `at`: `"…"` (with `""`
 * inside), `U&"…"`, or an unquoted name; -1 when none starts there.
 */
function identifierEnd(raw: Buffer, at: number): number {
  let i = at;
  if ((raw[i] === 0x55 || raw[i] === 0x75) && raw[i + 1] === 0x26 && raw[i + 2] === 0x22) i += 2; // U&"
  if (raw[i] === 0x22) {
    for (i += 1; i < raw.length; i++) {
      if (raw[i] !== 0x22) continue;
      if (raw[i + 1] === 0x22) i++;
      else return i + 1;
    }
    return -1;
  }
  const start = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f || b >= 0x80;
  if (!start(raw[i])) return -1;
  for (i += 1; i < raw.length && (start(raw[i]) || (raw[i] >= 0x30 && raw[i] <= 0x39) || raw[i] === 0x24); i++);
  return i;
}

/**
 * The statement with every `<SERVICE_QUERY_SCHEMA>.<view>` naming the
 * database's schema instead. Only the schema's identifier is replaced (a
 * RangeVar's location is where its first name starts); the result is parsed
 * again and must be the checked tree with just those schema names changed,
 * or it is refused (a form of writing the name this does not know, such as
 * `U&"…" UESCAPE`, is refused rather than guessed at).
 */
async function requalified(sql: string, stmt: Json, names: QueryNames, found: Qualified[]): Promise<CheckedStatement> {
  const refuse = () => new StatementRefused('statementQualified', { name: found[0].name, schema: names.schema });
  let raw = Buffer.from(sql, 'utf8');
  const starts = [...new Set(found.map((q) => q.location))];
  const spans = starts.map((at) => [at, identifierEnd(raw, at)]).sort((a, b) => b[0] - a[0]);
  if (spans.some(([from, to]) => !(from >= 0) || to < 0)) throw refuse();
  const replacement = Buffer.from(quoted(names.target), 'utf8');
  for (const [from, to] of spans) raw = Buffer.concat([raw.subarray(0, from), replacement, raw.subarray(to)]);
  // Where each replacement stands in the rewritten statement: every one before it changed the length by its own difference.
  let delta = 0;
  const edits = [...spans].reverse().map(([from, to]) => {
    const edit = { at: from + delta, length: replacement.length, original: to - from };
    delta += replacement.length - (to - from);
    return edit;
  });
  for (const q of found) q.rename(names.target);
  const tree = withoutLocations(stmt);
  const rewritten = raw.toString('utf8');
  let stmts: { stmt: Json; stmt_location?: number; stmt_len?: number }[];
  try {
    stmts = ((await parse(rewritten)) as { stmts?: typeof stmts }).stmts ?? [];
  } catch {
    throw refuse();
  }
  if (stmts.length !== 1 || !isDeepStrictEqual(withoutLocations(stmts[0].stmt), tree)) throw refuse();
  const start = stmts[0].stmt_location ?? 0;
  return { text: statementText(rewritten, start, stmts[0].stmt_len), tree, origin: { source: sql, start, edits } };
}

/** Depth of a JSON tree, without recursion (the tree may be deeper than the stack). */
export function treeDepth(root: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > max) max = depth;
    if (depth > MAX_TREE_DEPTH) return depth;
    if (node && typeof node === 'object') for (const v of Object.values(node)) if (v && typeof v === 'object') stack.push([v, depth + 1]);
  }
  return max;
}

/**
 * The fields of a parse tree that hold a byte offset (or length) in the
 * statement's text rather than anything the statement means. They differ
 * when the same statement is embedded in another (compose.ts), so the trees
 * are compared without them. `location` is the common one; PostgreSQL 18's
 * parser (libpg-query 18) also records where a list starts and ends in
 * `ARRAY[…]` (A_ArrayExpr, ArrayExpr: list_start, list_end) and in an IN list
 * (A_Expr: rexpr_list_start, rexpr_list_end, for pg_stat_statements), and
 * where a JSON_TABLE path's name stands (name_location). Left in, those made
 * every `NOT IN (…)`, `IN (…)` and `ARRAY[…]` (`unnest(array[…])`) "change
 * when embedded": the embedded copy's offsets are larger by the template's
 * prefix. The list is every offset field of @pgsql/types 18, the tree's own
 * declaration (a test reads it); a field added by a later parser makes the
 * comparison fail closed — refused, never passed.
 */
export const POSITION_FIELDS: ReadonlySet<string> = new Set([
  'location', 'stmt_location', 'stmt_len', 'list_start', 'list_end', 'rexpr_list_start', 'rexpr_list_end', 'name_location',
]);

/** The tree without source positions (POSITION_FIELDS), which differ when the same statement is embedded in another. */
export function withoutLocations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLocations);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (POSITION_FIELDS.has(k)) continue;
    out[k] = withoutLocations(v);
  }
  return out;
}

const stringsOf = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((n) => ((n as Json).String as { sval?: string } | undefined)?.sval ?? '') : [];

/** A view (or a view's column) named with SERVICE_QUERY_SCHEMA: where that name starts, and how to change it in the tree. */
interface Qualified {
  location: number;
  name: string;
  rename(schema: string): void;
}

/** Walks a statement tree; `scope` holds the names of the WITH queries visible at a point. */
class Checker {
  /** Every place that names a view with SERVICE_QUERY_SCHEMA. */
  readonly qualified: Qualified[] = [];

  constructor(private readonly names: QueryNames) {}

  select(s: Json, outer: Set<string>) {
    // The table INTO would create is where the refusal points.
    if (s.intoClause) throw new StatementRefused('statementInto', {}, { location: ((s.intoClause as Json).rel as Json | undefined)?.location as number | undefined });
    if (Array.isArray(s.lockingClause) && s.lockingClause.length) throw new StatementRefused('statementLocking');
    let scope = outer;
    const withClause = s.withClause as { ctes?: Json[]; recursive?: boolean } | undefined;
    if (withClause) {
      const ctes = (withClause.ctes ?? []).map((c) => c.CommonTableExpr as Json);
      const names = ctes.map((c) => String(c.ctename));
      // A WITH query sees the ones before it; in WITH RECURSIVE every one sees all, itself included.
      ctes.forEach((cte, i) => {
        const visible = new Set([...outer, ...(withClause.recursive ? names : names.slice(0, i))]);
        const query = cte.ctequery as Json;
        const kind = Object.keys(query)[0];
        if (kind !== 'SelectStmt') throw new StatementRefused('statementNotSelect', { kind: statementKind(kind) });
        this.select(query.SelectStmt as Json, visible);
        for (const [k, v] of Object.entries(cte)) if (k !== 'ctequery') this.visit(v, visible);
      });
      scope = new Set([...outer, ...names]);
    }
    for (const [key, value] of Object.entries(s)) {
      if (key === 'withClause') continue;
      // The two sides of UNION / INTERSECT / EXCEPT are statements without a node wrapper.
      if (key === 'larg' || key === 'rarg') this.select(value as Json, scope);
      else this.visit(value, scope);
    }
  }

  visit(node: unknown, scope: Set<string>) {
    if (Array.isArray(node)) {
      for (const item of node) this.visit(item, scope);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Json)) {
      // Node kinds start with a capital letter; fields do not.
      if (/^[A-Z]/.test(key)) this.node(key, value as Json, scope);
      else this.visit(value, scope);
    }
  }

  /** Checks a node; a refusal within it that has no place yet is placed at the node (the innermost one with a location). */
  private node(kind: string, n: Json, scope: Set<string>) {
    try {
      this.nodeChecked(kind, n, scope);
    } catch (err) {
      if (err instanceof StatementRefused && err.location === undefined && typeof n?.location === 'number' && n.location >= 0) err.location = n.location;
      throw err;
    }
  }

  private nodeChecked(kind: string, n: Json, scope: Set<string>) {
    if (kind === 'ParamRef') throw new StatementRefused('statementParameter');
    if (!ALLOWED_NODES.has(kind)) throw new StatementRefused('statementConstruct', { construct: kind });
    switch (kind) {
      case 'SelectStmt':
        return this.select(n, scope);
      case 'RangeVar':
        return this.relation(n, scope);
      case 'FuncCall':
        this.func(n);
        break;
      case 'TypeCast':
        this.type(n.typeName as Json);
        break;
      case 'ColumnRef': {
        const fields = stringsOf(n.fields);
        // `row.f` calls f(row) when no column is named f; no view column starts with pg_, every catalog function does.
        if (fields.some((f) => /^pg_/i.test(f))) throw new StatementRefused('statementFunction', { name: fields.join('.') });
        // `service.scheme_view.label` (or `.*`): a column of a view named with the schema. Views have no columns of
        // composite type, so three names starting with the schema and a view mean that (but for a whole row of a
        // view, aliased like a view inside a subquery aliased like the schema: that one now fails in the database).
        // Three names starting with any other schema pass as they are: a table not in FROM cannot be read so.
        if (fields.length === 3 && fields[0] === this.names.schema && this.names.views.has(fields[1])) {
          const list = n.fields as Json[];
          this.qualified.push({ location: n.location as number, name: fields.join('.'), rename: (schema) => { list[0] = { String: { sval: schema } }; } });
        }
        break;
      }
      case 'A_Expr':
        // `OPERATOR(schema.op)` names an operator of a chosen schema.
        if (stringsOf(n.name).length > 1) throw new StatementRefused('statementQualified', { name: stringsOf(n.name).join('.'), schema: this.names.schema });
        break;
      case 'SQLValueFunction':
        // The service's own database login and database are none of the statement's business.
        if (HIDDEN_VALUE_FUNCTIONS[n.op as string]) throw new StatementRefused('statementConstruct', { construct: HIDDEN_VALUE_FUNCTIONS[n.op as string] });
        break;
      case 'CollateClause':
        if (stringsOf(n.collname).length > 1) throw new StatementRefused('statementQualified', { name: stringsOf(n.collname).join('.'), schema: this.names.schema });
        break;
    }
    this.visit(n, scope);
  }

  private relation(n: Json, scope: Set<string>) {
    const name = String(n.relname);
    if (n.schemaname !== undefined || n.catalogname !== undefined) {
      // `<schema>.<view>`: a view and nothing else (a qualified name never names a WITH query). The schema name is
      // compared as the parser left it: unquoted names are lower-cased, so `SERVICE.x` passes and `"Service".x` does not.
      if (n.catalogname === undefined && n.schemaname === this.names.schema && this.names.views.has(name)) {
        this.qualified.push({ location: n.location as number, name: `${n.schemaname}.${name}`, rename: (schema) => { n.schemaname = schema; } });
        return;
      }
      throw new StatementRefused('statementQualified', { name: [n.catalogname, n.schemaname, name].filter((x) => x !== undefined).join('.'), schema: this.names.schema });
    }
    if (!scope.has(name) && !this.names.views.has(name)) throw new StatementRefused('statementRelation', { name });
  }

  private func(n: Json) {
    const names = stringsOf(n.funcname);
    const name = names[names.length - 1];
    const sqlSyntax = names.length === 2 && names[0] === 'pg_catalog' && n.funcformat === 'COERCE_SQL_SYNTAX';
    if (names.length > 1 && !sqlSyntax) throw new StatementRefused('statementQualified', { name: names.join('.'), schema: this.names.schema });
    if (sqlSyntax ? !SQL_SYNTAX_FUNCTIONS.has(name) : !ALLOWED_FUNCTIONS.has(name)) throw new StatementRefused('statementFunction', { name });
  }

  private type(t: Json | undefined) {
    const names = stringsOf(t?.names);
    const name = names[names.length - 1];
    const qualifiedOk = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog');
    if (!qualifiedOk) throw new StatementRefused('statementQualified', { name: names.join('.'), schema: this.names.schema });
    if (!ALLOWED_TYPES.has(name)) throw new StatementRefused('statementType', { name });
    // Type modifiers (varchar(10), numeric(10,2)) are constants; nothing else is looked at.
    this.visit(t?.typmods, new Set());
  }
}
