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
 */
import { parse } from 'libpg-query';

/** Longer statements are refused before parsing (bytes of UTF-8). */
export const MAX_STATEMENT_BYTES = 100 * 1024;
/** Deeper parse trees are refused (about 140 nested subqueries, or 500 chained operators). */
export const MAX_TREE_DEPTH = 1000;

export type RefusalKey =
  | 'statementEmpty' | 'statementTooLong' | 'statementNul' | 'statementSyntax' | 'statementTooDeep' | 'statementNotOne'
  | 'statementNotSelect' | 'statementInto' | 'statementLocking' | 'statementRelation' | 'statementQualified'
  | 'statementFunction' | 'statementType' | 'statementConstruct' | 'statementParameter';

/** The statement was refused: `key` names the message, `detail` what was refused. */
export class StatementRefused extends Error {
  constructor(readonly key: RefusalKey, readonly detail: Record<string, unknown> = {}) {
    super(`${key} ${JSON.stringify(detail)}`);
  }
}

export interface CheckedStatement {
  /** The statement's own text, without a trailing semicolon or what follows it. */
  text: string;
  /** Its parse tree without positions, to compare with the tree of a statement it is embedded in. */
  tree: unknown;
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
  'regexp_split_to_array', 'regexp_split_to_table', 'unistr', 'normalize', 'casefold',
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

/** Parses the statement and checks it; throws StatementRefused. `views`: the names a statement may read. */
export async function checkStatement(sql: string, views: ReadonlySet<string>): Promise<CheckedStatement> {
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
    throw new StatementRefused('statementSyntax', { error: message });
  }
  const stmts = parsed.stmts ?? [];
  if (stmts.length !== 1) throw new StatementRefused('statementNotOne', { count: stmts.length });
  const [{ stmt, stmt_location: start = 0, stmt_len: len }] = stmts;
  if (treeDepth(stmt) > MAX_TREE_DEPTH) throw new StatementRefused('statementTooDeep', { limit: MAX_TREE_DEPTH });
  const kind = Object.keys(stmt)[0];
  if (kind !== 'SelectStmt') throw new StatementRefused('statementNotSelect', { kind: statementKind(kind) });
  new Checker(views).select(stmt.SelectStmt as Json, new Set());
  // Locations are byte offsets: cut the statement's own bytes (no trailing `;` or comment after it).
  const raw = Buffer.from(sql, 'utf8');
  const text = raw.subarray(start, len === undefined || len === 0 ? raw.length : start + len).toString('utf8');
  return { text, tree: withoutLocations(stmt) };
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

/** The tree without source positions, which differ when the same statement is embedded in another. */
export function withoutLocations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLocations);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'location' || k === 'stmt_location' || k === 'stmt_len') continue;
    out[k] = withoutLocations(v);
  }
  return out;
}

const stringsOf = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((n) => ((n as Json).String as { sval?: string } | undefined)?.sval ?? '') : [];

/** Walks a statement tree; `scope` holds the names of the WITH queries visible at a point. */
class Checker {
  constructor(private readonly views: ReadonlySet<string>) {}

  select(s: Json, outer: Set<string>) {
    if (s.intoClause) throw new StatementRefused('statementInto');
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

  private node(kind: string, n: Json, scope: Set<string>) {
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
      case 'ColumnRef':
        // `row.f` calls f(row) when no column is named f; no view column starts with pg_, every catalog function does.
        if (stringsOf(n.fields).some((f) => /^pg_/i.test(f))) throw new StatementRefused('statementFunction', { name: stringsOf(n.fields).join('.') });
        break;
      case 'A_Expr':
        // `OPERATOR(schema.op)` names an operator of a chosen schema.
        if (stringsOf(n.name).length > 1) throw new StatementRefused('statementQualified', { name: stringsOf(n.name).join('.') });
        break;
      case 'SQLValueFunction':
        // The service's own database login and database are none of the statement's business.
        if (HIDDEN_VALUE_FUNCTIONS[n.op as string]) throw new StatementRefused('statementConstruct', { construct: HIDDEN_VALUE_FUNCTIONS[n.op as string] });
        break;
      case 'CollateClause':
        if (stringsOf(n.collname).length > 1) throw new StatementRefused('statementQualified', { name: stringsOf(n.collname).join('.') });
        break;
    }
    this.visit(n, scope);
  }

  private relation(n: Json, scope: Set<string>) {
    const name = String(n.relname);
    if (n.schemaname !== undefined || n.catalogname !== undefined) {
      throw new StatementRefused('statementQualified', { name: [n.catalogname, n.schemaname, name].filter((x) => x !== undefined).join('.') });
    }
    if (!scope.has(name) && !this.views.has(name)) throw new StatementRefused('statementRelation', { name });
  }

  private func(n: Json) {
    const names = stringsOf(n.funcname);
    const name = names[names.length - 1];
    const sqlSyntax = names.length === 2 && names[0] === 'pg_catalog' && n.funcformat === 'COERCE_SQL_SYNTAX';
    if (names.length > 1 && !sqlSyntax) throw new StatementRefused('statementQualified', { name: names.join('.') });
    if (sqlSyntax ? !SQL_SYNTAX_FUNCTIONS.has(name) : !ALLOWED_FUNCTIONS.has(name)) throw new StatementRefused('statementFunction', { name });
  }

  private type(t: Json | undefined) {
    const names = stringsOf(t?.names);
    const name = names[names.length - 1];
    const qualifiedOk = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog');
    if (!qualifiedOk) throw new StatementRefused('statementQualified', { name: names.join('.') });
    if (!ALLOWED_TYPES.has(name)) throw new StatementRefused('statementType', { name });
    // Type modifiers (varchar(10), numeric(10,2)) are constants; nothing else is looked at.
    this.visit(t?.typmods, new Set());
  }
}
