/**
 * Validation of an object's writable state: the interface the generated
 * validators (generated/validators.gen.ts) implement, and the translation of
 * their ajv errors into the `violations` of the error payload.
 */
import type { ErrorObject } from 'ajv';

/** One violated constraint; `path` names the offending property, e.g. `customProperties.size`. */
export interface Violation {
  path: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** A precompiled validator of the writable state of one concrete type. */
export interface WritableStateValidator {
  (state: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * A generated validator as a type guard: what it admits is the type's
 * `<Type>State` of generated/models.gen.ts.
 */
export interface WritableStateGuard<T> extends WritableStateValidator {
  (state: unknown): state is T;
}

/** JSON Pointer (`/tags/0`) to the dotted path of the error payload (`tags.0`). */
function dottedPath(instancePath: string): string {
  return instancePath.split('/').slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

const childPath = (parent: string, name: unknown) => (parent ? `${parent}.${String(name)}` : String(name));

/** Messages of a value of the wrong JSON type, by the type it must have: the type's name means nothing to a reader. */
const TYPE_MESSAGES: Record<string, string> = {
  string: 'mustBeText', integer: 'mustBeWholeNumber', number: 'mustBeNumber', boolean: 'mustBeBoolean', object: 'mustBeObject', array: 'mustBeList',
  'object,string': 'mustBeTextOrObject',
};

/** The message key for a value that is not of the type `expected` (ajv's `type` parameter: `string`, `string,null`, [`string`, `object`]). */
export function wrongTypeKey(expected: unknown): string {
  const types = [expected].flat().join(',').split(',').filter((t) => t && t !== 'null').sort();
  return TYPE_MESSAGES[types.join(',')] ?? 'invalidValue';
}

/** Errors about a missing or unknown property are reported on that property, not on its object. */
function violationOf(error: ErrorObject): Violation {
  const at = dottedPath(error.instancePath);
  const { keyword, params } = error;
  if (keyword === 'required') return { path: childPath(at, params.missingProperty), keyword, params };
  if (keyword === 'additionalProperties') {
    return { path: childPath(at, params.additionalProperty), keyword: 'unknownProperty', params };
  }
  return { path: at, keyword, params };
}

/** An `anyOf` error only restates the errors of its branches at or below its path. */
function restatesAnother(v: Violation, all: Violation[]): boolean {
  return v.keyword === 'anyOf' && all.some((o) => o !== v && (o.path === v.path || o.path.startsWith(`${v.path}.`)));
}

/**
 * One violation per offending property, sorted by path. An optional property
 * is `anyOf: [value, null]`, so one bad value also fails the null branch and
 * the `anyOf`; those restatements are dropped.
 */
export function violationsOf(errors: ErrorObject[] | null | undefined): Violation[] {
  const byPath = new Map<string, Violation>();
  for (const error of errors ?? []) {
    if (error.keyword === 'type' && error.params.type === 'null') continue;
    const v = violationOf(error);
    const known = byPath.get(v.path);
    if (!known || known.keyword === 'anyOf') byPath.set(v.path, v);
  }
  const all = [...byPath.values()];
  return all
    .filter((v) => !restatesAnother(v, all))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Unknown properties an object may have before `oversized` reports it without ajv. */
const MAX_UNKNOWN_PROPERTIES = 100;

interface SizedSchema {
  [keyword: string]: unknown;
  maxItems?: number;
  items?: SizedSchema;
  properties?: Record<string, SizedSchema>;
  additionalProperties?: boolean | SizedSchema;
  patternProperties?: Record<string, SizedSchema>;
  anyOf?: readonly SizedSchema[];
}

/**
 * The first place where the data is larger than its schema allows in a way
 * ajv, with allErrors, reports item by item: an array longer than its
 * maxItems, or an object with more than a hundred properties that
 * `additionalProperties: false` refuses. Checked before ajv: a PUT of two
 * million access rules cost it 4 s and 700 MB to list every one.
 */
export function oversized(schema: SizedSchema, data: unknown, path = ''): Violation | undefined {
  if (Array.isArray(data)) {
    if (schema.maxItems !== undefined && data.length > schema.maxItems) return { path, keyword: 'maxItems', params: { limit: schema.maxItems } };
    for (let i = 0; schema.items && i < data.length; i++) {
      const found = oversized(schema.items, data[i], childPath(path, i));
      if (found) return found;
    }
  } else if (data && typeof data === 'object') {
    const known = schema.properties ?? {};
    if (schema.additionalProperties === false && !schema.patternProperties) {
      const unknown = Object.keys(data).filter((name) => !Object.hasOwn(known, name));
      if (unknown.length > MAX_UNKNOWN_PROPERTIES) return { path: childPath(path, unknown[0]), keyword: 'unknownProperty', params: { count: unknown.length } };
    }
    for (const [name, sub] of Object.entries(known)) {
      const found = Object.hasOwn(data, name) ? oversized(sub, (data as Record<string, unknown>)[name], childPath(path, name)) : undefined;
      if (found) return found;
    }
  }
  for (const branch of schema.anyOf ?? []) {
    const found = oversized(branch, data, path);
    if (found) return found;
  }
  return undefined;
}
