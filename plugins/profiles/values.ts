/**
 * Values of custom properties by base type: what each accepts, and the one
 * form it is stored in, so that the SQL view `customproperties_view` and
 * every reader see the same text for the same value.
 *
 * DATETIME accepts ISO 8601 with a time zone or epoch milliseconds (the
 * REST interface's own times, e.g. `dateCreated`) and is stored as ISO 8601
 * in UTC with milliseconds: readable in the SQL view, and sortable as text.
 */
import type { BaseType } from './schema.ts';

/** NUL, and halves of surrogate pairs (from escapes such as "\uD800"): PostgreSQL keeps neither in text or jsonb. */
export const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The limits of the metamodel's own STRING and TEXT properties. */
export const TEXT_LIMITS: Partial<Record<BaseType, number>> = { STRING: 1000, TEXT: 100_000, ID: 1000, ENUM: 1000 };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2}))$/;

function validDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function isDate(value: string): boolean {
  const m = DATE.exec(value);
  return !!m && validDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** ISO 8601 in UTC with milliseconds, or null when the value is no time. */
export function normalizedDateTime(value: unknown): string | null {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return null;
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  if (typeof value !== 'string') return null;
  const m = DATE_TIME.exec(value);
  if (!m) return null;
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (!validDay(Number(m[1]), Number(m[2]), Number(m[3])) || hour > 23 || minute > 59 || second > 59) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export type Checked = { ok: true; value: unknown } | { ok: false };

/** One value of a base type, in its stored form. */
export function checkScalar(baseType: BaseType, value: unknown): Checked {
  const ok = (v: unknown): Checked => ({ ok: true, value: v });
  switch (baseType) {
    case 'STRING':
    case 'TEXT':
    case 'ENUM':
      return typeof value === 'string' && value.length <= TEXT_LIMITS[baseType]! && !UNSTORABLE.test(value) ? ok(value) : { ok: false };
    case 'ID':
      // An identifier says something: not empty, not only blanks.
      return typeof value === 'string' && value.trim() !== '' && value.length <= TEXT_LIMITS.ID! && !UNSTORABLE.test(value) ? ok(value) : { ok: false };
    case 'INTEGER':
      return Number.isSafeInteger(value) ? ok(value) : { ok: false };
    case 'DECIMAL':
      return typeof value === 'number' && Number.isFinite(value) ? ok(value) : { ok: false };
    case 'BOOLEAN':
      return typeof value === 'boolean' ? ok(value) : { ok: false };
    case 'DATE':
      return typeof value === 'string' && isDate(value) ? ok(value) : { ok: false };
    case 'DATETIME': {
      const normalized = normalizedDateTime(value);
      return normalized === null ? { ok: false } : ok(normalized);
    }
    case 'REFERENCE':
      return typeof value === 'string' && UUID_PATTERN.test(value) ? ok(value.toLowerCase()) : { ok: false };
    default:
      return { ok: false };
  }
}

/** Base types whose values can be listed as literals. */
export const LITERAL_BASE_TYPES = new Set<BaseType>(['STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'DATE', 'ENUM']);

/**
 * A literal as the text a value is compared with (numbers in JavaScript's
 * form, so that `1.50` in the file matches the value 1.5), or null when the
 * literal is no value of the base type.
 */
export function literalText(baseType: BaseType, literal: string): string | null {
  switch (baseType) {
    case 'INTEGER':
      return /^-?\d+$/.test(literal) && Number.isSafeInteger(Number(literal)) ? String(Number(literal)) : null;
    case 'DECIMAL':
      return literal.trim() !== '' && Number.isFinite(Number(literal)) ? String(Number(literal)) : null;
    case 'DATE':
      return isDate(literal) ? literal : null;
    case 'STRING':
    case 'TEXT':
    case 'ENUM':
      return literal;
    default:
      return null;
  }
}

/** The entries of a set of names written as a list or as a mapping, with the path segment of each. */
export function entriesOf(set: unknown): { name: string; definition: Record<string, unknown> | null; segment: string | number }[] {
  if (Array.isArray(set)) return set.map((item, index) => ({ name: String(item), definition: null, segment: index }));
  if (set && typeof set === 'object') {
    return Object.entries(set as Record<string, unknown>).map(([name, definition]) => ({
      name, definition: (definition as Record<string, unknown> | null) ?? null, segment: name,
    }));
  }
  return [];
}
