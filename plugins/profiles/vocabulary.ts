/**
 * Which top-level keys of a profile document are types, and which are
 * settings (decisions §7.5), and the chain of entries whose annotations a
 * type has (its supertypes', the type it `extends`, its own).
 *
 * A top-level key is a type when the metamodel has a type of that name. It is
 * a model kind when it names one of KNOWN_LATER_TYPES (the values of a
 * scheme's `modelType`):
 * applied to the schemes of that kind.
 * Every other key is a setting of the user interface, kept as it is whatever
 * its case (`Theme`, `theme`, `startseite`), unless it looks like a type
 * meant: it holds `properties` or `customProperties`, or it differs from a
 * type name by letter case alone or by one letter. Those are refused, naming
 * the nearest type, because a typo must not pass silently.
 */
import type { Metamodel } from '../../runtime/host.ts';

/**
 * Names of decisions §7.1 that the annotations may use and the metamodel
 * has no type of: the model kinds, which the annotations address by their
 * own type name (a kind is a scheme's `modelType`, the ModelType literals).
 * Their entries apply to the schemes of that kind, on top of Scheme's
 * (rules.ts `kindOf`, resolved.ts with `?scheme=`); they are checked as
 * Scheme's entries (semantics.ts). (A name the metamodel has is a type
 * anyway, so a name left here by mistake does no harm.)
 */
export const KNOWN_LATER_TYPES: readonly string[] = [
  // Model kinds, addressed by their own type name (§7.1, "Model kinds").
  'BusinessDataModel', 'DataCatalog', 'DataDomainModel', 'DataModel', 'MeasuresCatalog', 'ProcessingDirectory',
  'ProjectDirectory', 'QualityModel', 'ReferenceDataModel', 'SystemCatalog',
];

/** Keys that only a type's entry holds: a setting that holds one is a type meant. */
const TYPE_ONLY_KEYS = ['properties', 'customProperties'];

export interface Refusal {
  key: string;
  /** profileUnknownType (holds properties), profileTypeCase (case only), profileTypeTypo (one letter). */
  reason: 'profileUnknownType' | 'profileTypeCase' | 'profileTypeTypo';
  suggestion: string;
}

export interface TopLevel {
  /** Types of the metamodel. */
  types: string[];
  /** Types known later (KNOWN_LATER_TYPES the metamodel does not have yet). */
  later: string[];
  settings: string[];
  refused: Refusal[];
}

/** The known-later types for a metamodel: those it does not have yet. */
export function laterTypes(model: Metamodel): Set<string> {
  return new Set(KNOWN_LATER_TYPES.filter((name) => !Object.hasOwn(model.types, name)));
}

/** Levenshtein distance, stopping early above `limit`. */
export function distance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, current[j]);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length];
}

/** Type names are short: a key compared beyond this many characters is no nearer to any. */
const COMPARED_LENGTH = 40;

/**
 * Refusals that name the nearest type: a file is refused at its first 50
 * problems anyway, and a file of tens of thousands of such keys must not cost
 * a comparison with every type for each.
 */
const SUGGESTED = 100;

/** The type name nearest to a key (letter case ignored); ties go to the first in alphabetical order. */
export function nearestType(key: string, names: string[]): string {
  const lower = key.slice(0, COMPARED_LENGTH).toLowerCase();
  let nearest = names[0];
  let best = Infinity;
  for (const name of [...names].sort()) {
    const d = distance(lower, name.toLowerCase(), best);
    if (d < best) {
      best = d;
      nearest = name;
    }
  }
  return nearest;
}

const holdsTypeKeys = (value: unknown) => !!value && typeof value === 'object' && !Array.isArray(value)
  && TYPE_ONLY_KEYS.some((k) => Object.hasOwn(value, k));

export function classify(document: Record<string, unknown>, model: Metamodel): TopLevel {
  const later = laterTypes(model);
  const names = [...Object.keys(model.types), ...later];
  const byLowerCase = new Map(names.map((n) => [n.toLowerCase(), n]));
  const found: TopLevel = { types: [], later: [], settings: [], refused: [] };
  for (const [key, value] of Object.entries(document)) {
    if (Object.hasOwn(model.types, key)) {
      found.types.push(key);
    } else if (later.has(key)) {
      found.later.push(key);
    } else if (byLowerCase.has(key.toLowerCase())) {
      found.refused.push({ key, reason: 'profileTypeCase', suggestion: byLowerCase.get(key.toLowerCase())! });
    } else {
      const typo = names.find((n) => distance(key, n, 1) === 1);
      if (typo) found.refused.push({ key, reason: 'profileTypeTypo', suggestion: typo });
      else if (holdsTypeKeys(value)) found.refused.push({ key, reason: 'profileUnknownType', suggestion: found.refused.length < SUGGESTED ? nearestType(key, names) : '' });
      else found.settings.push(key);
    }
  }
  return found;
}

/** Whether a top-level key is a setting (not a type of the metamodel, nor one known later). */
export function isSetting(key: string, model: Metamodel, later: Set<string>): boolean {
  return !Object.hasOwn(model.types, key) && !later.has(key);
}

/** The type a type's entry extends, as the documents say: the last that says it wins. */
export type ExtendsOf = (type: string) => string | undefined;

export function extendsIn(...documents: Record<string, unknown>[]): ExtendsOf {
  return (type) => {
    let found: string | undefined;
    for (const d of documents) {
      const entry = Object.hasOwn(d, type) ? d[type] : undefined;
      if (entry && typeof entry === 'object' && typeof (entry as Record<string, unknown>).extends === 'string') found = (entry as Record<string, string>).extends;
    }
    return found;
  };
}

/**
 * The entries whose annotations a type has, each over the ones before:
 * its supertypes' (farthest first, each with what it extends), then the
 * type it extends (with that one's chain), then its own. A name appears
 * once, where it first comes. Only types of the metamodel take part; a
 * cycle (refused on upload, possible only across documents) is cut.
 */
export function annotationChain(model: Metamodel, type: string, extendsOf: ExtendsOf): string[] {
  const chain: string[] = [];
  const visiting = new Set<string>();
  const walk = (name: string) => {
    if (!Object.hasOwn(model.types, name) || visiting.has(name)) return;
    const t = model.types[name];
    visiting.add(name);
    if (t.supertype) walk(t.supertype);
    const extended = extendsOf(name);
    if (extended !== undefined) walk(extended);
    if (!chain.includes(name)) chain.push(name);
  };
  walk(type);
  return chain;
}

/** The types a type's own entry takes its type-level keys from: what it extends (transitively), then itself. */
export function extendsChain(model: Metamodel, type: string, extendsOf: ExtendsOf): string[] {
  const chain = [type];
  for (let e = extendsOf(type); e !== undefined && Object.hasOwn(model.types, e) && !chain.includes(e); e = extendsOf(e)) chain.unshift(e);
  return chain;
}

/** Whether following supertypes and `extends` from `from` reaches `target`. */
export function reaches(model: Metamodel, from: string, target: string, extendsOf: ExtendsOf): boolean {
  const seen = new Set<string>();
  const pending = [from];
  while (pending.length) {
    const name = pending.pop()!;
    if (name === target) return true;
    if (seen.has(name) || !Object.hasOwn(model.types, name)) continue;
    seen.add(name);
    const t = model.types[name];
    if (t.supertype) pending.push(t.supertype);
    const e = extendsOf(name);
    if (e !== undefined) pending.push(e);
  }
  return false;
}
