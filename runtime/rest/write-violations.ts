/**
 * How a write reports what is wrong with it: violations on dotted paths of
 * the payload (`2.label`), the messages of the generated validators'
 * keywords, and the one error a write throws for all its violations (409
 * when keys are taken, else 400).
 */
import { createError, type Violation, type ViolationList } from '../errors.ts';
import { placeItemType, type ListPlace } from './paths.ts';
import { wrongTypeKey } from '../validation.ts';

export type Report = (path: string, key: string, params?: Record<string, unknown>) => void;

/** Violations that mean "taken by another object" (409) rather than "invalid" (400). */
const CLASHES = new Set(['labelTaken', 'idTaken', 'loginIdTaken']);

export const KEYWORD_MESSAGES: Record<string, (params: Record<string, unknown>) => Pick<Violation, 'key' | 'params'>> = {
  required: () => ({ key: 'mandatory' }),
  unknownProperty: () => ({ key: 'unknownProperty' }),
  type: (p) => ({ key: wrongTypeKey(p.type) }),
  enum: (p) => ({ key: 'notAllowedValue', params: { allowed: (p.allowedValues as string[] | undefined)?.join(', ') } }),
  // The generated validators check one pattern: a technical key's (generator/property-kinds.ts).
  pattern: () => ({ key: 'mustBeTechnicalKey' }),
  maxLength: (p) => ({ key: 'tooLong', params: { limit: p.limit } }),
  // Whole numbers and times are bounded (generator/property-kinds.ts).
  minimum: (p) => ({ key: 'outOfRange', params: { comparison: p.comparison, limit: p.limit } }),
  maximum: (p) => ({ key: 'outOfRange', params: { comparison: p.comparison, limit: p.limit } }),
  minLength: (p) => (p.limit === 1 ? { key: 'mandatory' } : { key: 'tooShort', params: { limit: p.limit } }),
};

/** The path of a violation in the request: `label`, or `2.label` for the third item of a list. */
export function itemPath(index: number | undefined, path: string): string {
  if (index === undefined) return path;
  return path ? `${index}.${path}` : String(index);
}

/** Reports into the list with the item's path (a function made per item: kept cheap, a list may have millions). */
export function reporterOf(violations: ViolationList, index: number | undefined): Report {
  return (path, key, params) => violations.push({ path: itemPath(index, path), key, ...(params ? { params } : {}) });
}

/** Throws the error payload for collected violations: 409 when keys are taken, else 400. */
export function assertNoViolations(violations: ViolationList, place: ListPlace | string, created: boolean) {
  if (!violations.length) return;
  const params = { type: typeof place === 'string' ? place : placeItemType(place), action: created ? 'actionCreate' : 'actionUpdate' };
  violations.kept.sort((a, b) => comparePaths(a.path, b.path));
  if (violations.omitted || !violations.kept.every((v) => CLASHES.has(v.key))) throw createError('INVALID_PAYLOAD', params, violations);
  const taken = (key: string) => violations.kept.some((v) => v.key === key);
  throw createError(taken('labelTaken') ? 'LABEL_CLASH' : taken('loginIdTaken') ? 'LOGIN_ID_CLASH' : 'ID_CLASH', params, violations);
}

/** Violation paths in payload order: item 2 before item 10, then by property. */
function comparePaths(a: string, b: string): number {
  const [ia, ib] = [parseInt(a, 10), parseInt(b, 10)];
  if (!Number.isNaN(ia) && !Number.isNaN(ib) && ia !== ib) return ia - ib;
  return a < b ? -1 : a > b ? 1 : 0;
}
