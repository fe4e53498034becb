/**
 * The check of `customProperties` on every REST write, against the tenant's
 * annotations (decisions §6, §7.5). A value of base type ID must be free
 * among the objects of its type in the tenant (`takenIds`).
 *
 * What is checked, and when:
 * - A write that states the object's custom properties is checked whole:
 *   POST and PUT always do (they state the whole object: sending none means
 *   none), PATCH does when it sends `customProperties` (which replaces the
 *   object's set as one property). Every value must be declared for the
 *   type, its supertypes, or a literal the object has; values are checked by
 *   base type, cardinality and literals; mandatory ones must be there.
 * - A PATCH that creates the object is checked whole, as a PUT is; so is a
 *   PATCH that changes a property whose literals bring custom properties
 *   (e.g. `status` to FINAL): what applies to the object changed, so its
 *   stored custom properties are checked against what applies now.
 * - Any other PATCH without `customProperties` leaves the stored values as
 *   they are, unchecked: an object written before a declaration was dropped,
 *   changed or made mandatory can still be changed in its other properties.
 *
 * The REST core gives this check the merged state only, so the request is
 * seen once before its transaction (a REST extension that handles nothing):
 * it marks the `customProperties` objects the client sent (the merged state
 * holds the very same object), reads the annotations' revision once for the
 * whole request, and collects the technical keys custom references name, so
 * that a list of thousands is checked with one lookup of references.
 */
import { isDeepStrictEqual } from 'node:util';
import { turnsEvery, WRITABLE_SYSTEM_PROPERTIES, type CustomPropertiesCheck, type ObjectStore, type WriteObserver, type StoredObject, type Violation } from '../../runtime/host.ts';
import { TenantProfiles, type AnnotationCache } from './cache.ts';
import { STANDARD_FILES } from './catalog.ts';
import { kindOf, KIND_TYPE, type CustomPropertyRule, type TypeRules } from './rules.ts';
import { checkScalar, UNSTORABLE, UUID_PATTERN } from './values.ts';

interface WriteRequest {
  method: string;
  db: string;
  tenant: string;
  /** The tenant's profiles and the schemes that name profiles, as the request's one lookup found them. */
  profiles: TenantProfiles;
  /** Technical keys named in the custom properties of the payload, looked up together. */
  references: Set<string>;
  /** Technical keys the payload's objects give themselves: a reference to one of them is to an object of the same write. */
  written: Set<string>;
  /** Texts in the custom properties of the payload, by name: the values an ID may have, looked up together. */
  texts: Map<string, Set<string>>;
}

/** Looked up at once; a larger payload looks up what each object names. */
const PREFETCH_LIMIT = 50_000;

type Values = Record<string, unknown>;

function isPlainObject(value: unknown): value is Values {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

export class CustomPropertiesChecker {
  /**
   * What `observe` saw of each REST write, by its request (the Koa context, which the REST core hands the check as
   * `request`). Not an AsyncLocalStorage: once one is entered, every promise of the process pays its hooks, reads
   * included (4-5 % of a GET's CPU).
   */
  private readonly requests = new WeakMap<object, WriteRequest>();
  /** The `customProperties` objects of payloads: only these were sent by a client. */
  private readonly sent = new WeakSet<object>();
  /** Technical keys known to exist, per write transaction. */
  private readonly existing = new WeakMap<ObjectStore, { known: Set<string>; prefetched: boolean }>();
  /**
   * Per write transaction (a retried one starts afresh): the values of `ID`
   * custom properties written so far (by scope, name and value: the object's
   * state), and which objects hold which values (by scope and name).
   */
  private readonly ids = new WeakMap<ObjectStore, { written: Map<string, object>; held: Map<string, { asked: Set<string>; holders: Map<string, string[]> }> }>();
  /** Per write transaction: the root object (scheme) of parents named by owner references. */
  private readonly models = new WeakMap<ObjectStore, Map<string, string | null>>();

  constructor(private readonly cache: AnnotationCache, private readonly log: { warn(o: object, m: string): void }) {}

  /** Sees every write (a REST request, a plugin's write of many objects) before its objects are checked. */
  readonly observe: WriteObserver = async ({ request: served, method, principal, db, body }) => {
    if (!principal.tenant) return;
    const request: WriteRequest = {
      method, db, tenant: principal.tenant, profiles: TenantProfiles.empty, references: new Set(), written: new Set(), texts: new Map(),
    };
    this.requests.set(served, request);
    // An upload's write of 100,000 objects took 100-225 ms here: requests are served meanwhile, every few ms.
    const turn = turnsEvery();
    for (const [i, item] of (Array.isArray(body) ? body : [body]).entries()) {
      if (i % 1024 === 1023) await turn();
      if (!isPlainObject(item)) continue;
      if (typeof item.id === 'string' && UUID_PATTERN.test(item.id)) request.written.add(item.id.toLowerCase());
      if (!('customProperties' in item)) continue;
      // `null` unsets the whole set, as `{}` does; as an object it can be told from stored values.
      if (item.customProperties === null) item.customProperties = {};
      if (!isPlainObject(item.customProperties)) continue;
      this.sent.add(item.customProperties);
      if (request.references.size < PREFETCH_LIMIT) collectKeys(item.customProperties, request.references);
      collectTexts(item.customProperties, request.texts);
    }
    request.profiles = await this.cache.current(db, principal.tenant);
  };

  readonly check: CustomPropertiesCheck = async ({ db, tenant, type, state, existing, store, placement, request: served }) => {
    const request = served && this.requests.get(served);
    const current = request && request.db === db && request.tenant === tenant ? request : undefined;
    const profiles = current?.profiles ?? this.cache.known(db, tenant) ?? TenantProfiles.empty;
    const kind = kindOf(this.cache.model, type.name, state);
    let named: string[];
    if (kind !== undefined || type.name === KIND_TYPE) {
      // A scheme: its own `profiles` apply to it, and they must name profiles of the tenant.
      named = Array.isArray(state.profiles) ? state.profiles.filter((n): n is string => typeof n === 'string') : [];
      if (!isDeepStrictEqual(state.profiles ?? null, existing?.props.profiles ?? null)) {
        const unknown = [...new Set(named.filter((n) => !profiles.has(n) && !Object.hasOwn(STANDARD_FILES, n)))];
        if (unknown.length) return unknown.map((value) => ({ path: 'profiles', key: 'schemeProfileUnknown', params: { value } }));
      }
    } else {
      // Where no scheme of the tenant names profiles, where the object stands does not matter (and costs no lookup).
      named = profiles.schemes.size ? profiles.profilesOf(await this.modelOf(store, tenant, placement, existing)) : [];
    }
    const rules = profiles.annotations(named, this.cache.model).rulesOf(type.name, kind);
    const custom = state.customProperties;
    const sent = isPlainObject(custom) && this.sent.has(custom);
    const wholeWrite = current !== undefined && current.method !== 'PATCH';
    if (!sent && !wholeWrite && existing && !literalsChanged(rules, state, existing)) return [];
    if (!current) this.log.warn({ db, type: type.name }, 'custom properties checked outside an observed write: annotations may be stale');
    const values = (custom ?? {}) as Values;
    const declared = applicable(rules, state, values);
    const violations: Violation[] = [];
    const normalized: Values = {};
    const references: { name: string; keys: string[] }[] = [];
    for (const [name, value] of Object.entries(values)) {
      if (value === null) continue;
      const rule = declared.get(name);
      if (!rule) {
        violations.push({ path: `customProperties.${name}`, key: 'customPropertyUnknown', params: { type: type.name } });
        continue;
      }
      const checked = checkValue(rule, value);
      if ('violation' in checked) {
        violations.push({ path: `customProperties.${name}`, ...checked.violation });
        continue;
      }
      if (checked.value === undefined) continue;
      normalized[name] = checked.value;
      if (rule.baseType === 'REFERENCE') references.push({ name, keys: ([] as string[]).concat(checked.value as string | string[]) });
    }
    for (const rule of declared.values()) {
      if (rule.mandatory && normalized[rule.name] === undefined && !violations.some((v) => v.path === `customProperties.${rule.name}`)) {
        violations.push({ path: `customProperties.${rule.name}`, key: 'mandatory' });
      }
    }
    if (references.length && !violations.length) {
      const missing = await this.missing(store, tenant, references.flatMap((r) => r.keys), current);
      for (const r of references) {
        const gone = r.keys.find((k) => missing.has(k));
        if (gone) violations.push({ path: `customProperties.${r.name}`, key: 'customPropertyReferenceNotFound', params: { value: gone } });
      }
    }
    if (!violations.length) violations.push(...await this.takenIds(store, tenant, declared, normalized, state, existing, current));
    if (violations.length) return violations;
    if (Object.keys(normalized).length) state.customProperties = normalized;
    else delete state.customProperties;
    return [];
  };

  /**
   * The root object (scheme) an object belongs to: where the write places
   * it, else where it stood; one that moves under the parent its owner
   * reference names belongs to that parent's (one lookup per parent and
   * transaction; a parent the write does not find is refused by the write).
   */
  private async modelOf(store: ObjectStore, tenant: string, placement: { modelId: string | null; parentId: string | null; ownerPending: boolean }, existing: StoredObject | null): Promise<string | null> {
    if (!placement.ownerPending) return placement.modelId ?? existing?.modelId ?? null;
    const parent = placement.parentId;
    if (parent === null || !UUID_PATTERN.test(parent)) return null;
    let memo = this.models.get(store);
    if (!memo) {
      memo = new Map();
      this.models.set(store, memo);
    }
    if (!memo.has(parent)) {
      const [found] = await store.byIds(tenant, [parent.toLowerCase()]);
      memo.set(parent, found ? found.modelId ?? found.id : null);
    }
    return memo.get(parent)!;
  }

  /**
   * Values of `ID` custom properties that another object of the type holds:
   * one stored (other than this one), or one written before in the same
   * request. Checked when the value is new to the object, so that an object
   * holding a value that clashes (it was declared an ID later) can still be
   * written without changing it.
   */
  private async takenIds(store: ObjectStore, tenant: string, declared: Map<string, CustomPropertyRule>, values: Values, state: Values, existing: StoredObject | null, request: WriteRequest | undefined): Promise<Violation[]> {
    const violations: Violation[] = [];
    let memo = this.ids.get(store);
    if (!memo) {
      memo = { written: new Map(), held: new Map() };
      this.ids.set(store, memo);
    }
    for (const rule of declared.values()) {
      const value = values[rule.name];
      if (rule.baseType !== 'ID' || typeof value !== 'string') continue;
      const taken = () => violations.push({ path: `customProperties.${rule.name}`, key: 'customPropertyIdTaken', params: { value } });
      const key = JSON.stringify([rule.scope, rule.name, value]);
      const earlier = memo.written.get(key);
      if (earlier && earlier !== state) {
        taken();
        continue;
      }
      memo.written.set(key, state);
      if (existing?.custom[rule.name] === value) continue;
      const scope = JSON.stringify([rule.scope, rule.name]);
      let held = memo.held.get(scope);
      if (!held) {
        held = { asked: new Set(), holders: new Map() };
        memo.held.set(scope, held);
      }
      if (!held.asked.has(value)) {
        // The first asks for every text the payload has under this name: a list write looks its IDs up at once.
        const ask = [value, ...[...request?.texts.get(rule.name) ?? []].filter((v) => !held.asked.has(v))];
        for (const v of ask) held.asked.add(v);
        for (const [v, ids] of await store.customValueHolders(tenant, rule.scope, rule.name, ask)) held.holders.set(v, ids);
      }
      if ((held.holders.get(value) ?? []).some((id) => id !== existing?.id)) taken();
    }
    return violations;
  }

  /** Keys that name no object of the tenant (nor one the same write creates); one lookup per transaction for the whole payload. */
  private async missing(store: ObjectStore, tenant: string, keys: string[], request: WriteRequest | undefined): Promise<Set<string>> {
    let memo = this.existing.get(store);
    if (!memo) {
      memo = { known: new Set(request?.written ?? []), prefetched: false };
      this.existing.set(store, memo);
    }
    if (!memo.prefetched && request?.references.size) {
      memo.prefetched = true;
      for (const o of await store.byIds(tenant, [...request.references])) memo.known.add(o.id);
    }
    const unknown = [...new Set(keys.filter((k) => !memo.known.has(k)))];
    if (unknown.length) for (const o of await store.byIds(tenant, unknown)) memo.known.add(o.id);
    return new Set(keys.filter((k) => !memo.known.has(k)));
  }
}

/** Properties a client writes that the objects table keeps in columns, not in `props`. */
const COLUMNS = new Set<string>(WRITABLE_SYSTEM_PROPERTIES);

/** Whether the write changes a property whose literals bring custom properties of their own. */
function literalsChanged(rules: TypeRules, state: Values, existing: StoredObject): boolean {
  for (const property of rules.byProperty.keys()) {
    const before = COLUMNS.has(property) ? (existing as unknown as Values)[property] : existing.props[property];
    if (!isDeepStrictEqual(before ?? null, state[property] ?? null)) return true;
  }
  return false;
}

/** Every UUID-like text among the values, lower case (references are compared as stored). */
function collectKeys(values: Values, into: Set<string>) {
  for (const value of Object.values(values)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string' && UUID_PATTERN.test(v)) into.add(v.toLowerCase());
    }
  }
}

/** The texts among the values, by name, up to PREFETCH_LIMIT in all. */
function collectTexts(values: Values, into: Map<string, Set<string>>) {
  for (const [name, value] of Object.entries(values)) {
    if (typeof value !== 'string') continue;
    const texts = into.get(name) ?? new Set<string>();
    if (texts.size >= PREFETCH_LIMIT) continue;
    texts.add(value);
    into.set(name, texts);
  }
}

/** The text a value is compared with against literals, or null when it cannot match one. */
function comparable(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/**
 * The custom properties that apply to an object: the type's, and those of
 * every literal its properties and custom properties have (which may bring
 * custom properties with literals of their own).
 */
function applicable(rules: TypeRules, state: Values, values: Values): Map<string, CustomPropertyRule> {
  const declared = new Map(rules.always);
  const pending = [...declared.values()];
  const add = (list: CustomPropertyRule[] | undefined) => {
    for (const rule of list ?? []) {
      if (declared.has(rule.name)) continue;
      declared.set(rule.name, rule);
      pending.push(rule);
    }
  };
  for (const [property, byLiteral] of rules.byProperty) {
    const value = state[property];
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== undefined && v !== null) add(byLiteral.get(String(v)));
    }
  }
  while (pending.length) {
    const rule = pending.pop()!;
    if (!rule.dependents.size) continue;
    const value = values[rule.name];
    for (const v of Array.isArray(value) ? value : [value]) {
      const text = comparable(v);
      if (text !== null) add(rule.dependents.get(text));
    }
  }
  return declared;
}

type CheckedValue = { value: unknown } | { violation: Pick<Violation, 'key' | 'params'> };

function checkValue(rule: CustomPropertyRule, value: unknown): CheckedValue {
  if (rule.many) {
    if (!Array.isArray(value)) return { violation: { key: 'customPropertyNeedsArray' } };
    const values: unknown[] = [];
    for (const item of value) {
      const checked = checkOne(rule, item);
      if ('violation' in checked) return checked;
      values.push(checked.value);
    }
    // An empty list is no value: a mandatory property needs at least one.
    return { value: values.length ? values : undefined };
  }
  if (Array.isArray(value)) return { violation: { key: 'customPropertyNeedsSingle' } };
  return checkOne(rule, value);
}

function checkOne(rule: CustomPropertyRule, value: unknown): CheckedValue {
  if (typeof value === 'string' && UNSTORABLE.test(value)) return { violation: { key: 'customPropertyUnstorable' } };
  const checked = checkScalar(rule.baseType, value);
  if (!checked.ok) return { violation: { key: `customPropertyValue${rule.baseType}` } };
  if (rule.literals && !rule.literals.has(comparable(checked.value) ?? '')) {
    return { violation: { key: 'notAllowedValue', params: { allowed: [...rule.literals].join(', ') } } };
  }
  return { value: checked.value };
}
