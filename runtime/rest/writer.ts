/**
 * Turns write payloads into stored objects: merge (PUT replaces, PATCH
 * merges), defaults, placement under a parent, label derivation, generated
 * validation, and the checks that need the database (references, technical
 * keys, business keys). Nothing is written here; the caller writes the
 * prepared objects in its transaction.
 */
import { randomUUID } from 'node:crypto';
import { MODEL_TYPES, ownerFor, type Metamodel, type TypeDef } from '../metamodel/model.ts';
import { SYSTEM_PROPERTIES, WRITABLE_SYSTEM_PROPERTIES } from '../metamodel/model.ts';
import { MAX_VIOLATIONS, type Violation, type ViolationList } from '../errors.ts';
import { itemPath, KEYWORD_MESSAGES, reporterOf, type Report } from './write-violations.ts';
import type { KeyUse, ObjectStore, StoredObject } from '../storage/objects.ts';
import { violationsOf, type WritableStateGuard } from '../validation.ts';
import type { WritableStates } from '../../generated/models.gen.ts';
import { placeName, placeTypes, type ListPlace, type PathKey, UUID } from './paths.ts';
import { noTurn, type Turn } from '../interactive.ts';

/**
 * The writable state of some concrete type, as its generated validator
 * admits it (generated/models.gen.ts): what the writer stores from. Typed by
 * the generated models, so a property the writer reads that the metamodel no
 * longer has fails the type check after `npm run generate`.
 */
export type WritableState = WritableStates[keyof WritableStates] & Record<string, unknown>;

/** The generated validators (generated/validators.gen.ts), by the type name a request names at run time. */
export type Validators = Record<string, WritableStateGuard<WritableStates[keyof WritableStates]>>;

export interface WriteRequest {
  payload: unknown;
  mode: 'put' | 'patch' | 'post';
  place: ListPlace;
  existing?: StoredObject;
  /** The last key of the object path, if the request named one. */
  key?: PathKey;
  /** Where in a list payload this item stands, for violation paths. */
  index?: number;
}

/**
 * The secrets or custom properties of an object that has none: one object for all (frozen), where an empty one each
 * took 56 bytes per object that a bulk write (an upload) keeps until it commits.
 */
const NONE = Object.freeze({}) as Record<string, unknown>;

export interface PreparedWrite {
  object: StoredObject;
  /** The object as it was; absent when the write creates it. */
  existing?: StoredObject;
  /** Write-only values (e.g. a password) for the plugins that keep them. */
  secrets: Record<string, unknown>;
  /** The position in a list payload, for violation paths. */
  index?: number;
  /** The parent is named by the owner reference and is known once that reference is checked. */
  ownerPending: boolean;
}

/** An object that passed the checks that need no database. */
export interface Draft {
  req: WriteRequest;
  body: Record<string, unknown>;
  type: TypeDef;
  state: WritableState;
  placement: Placement;
}

interface Placement {
  parentId: string | null;
  list: string;
  modelId: string | null;
  ownerPending: boolean;
}

const SYSTEM = new Set<string>(SYSTEM_PROPERTIES);
const WRITABLE_SYSTEM = new Set<string>(WRITABLE_SYSTEM_PROPERTIES);

/** HAL properties and read-only properties are ignored in write payloads, so a read object can be written back. */
const IGNORED = new Set<string>(['_type', '_links', '_embedded', ...SYSTEM_PROPERTIES.filter((p) => !WRITABLE_SYSTEM.has(p))]);

function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown => (v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
    : Array.isArray(v) ? v.map(canonical) : v);
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** Whether a write would leave the object as it is: then it is not written and its version stays. */
export function changesNothing(w: PreparedWrite): boolean {
  const [o, e] = [w.object, w.existing];
  if (!e || Object.keys(w.secrets).length) return false;
  return o.parentId === e.parentId && o.list === e.list && o.label === e.label && o.title === e.title
    && o.description === e.description && o.status === e.status && o.modelId === e.modelId
    && sameJson(o.props, e.props) && sameJson(o.custom, e.custom);
}

/**
 * Checks an object's `customProperties` against what the tenant declared
 * (the profiles plugin); called for every written object, also when it has
 * none (a declared property may be mandatory). It may normalize
 * `state.customProperties` in place. Paths are relative to the object, e.g.
 * `customProperties.costCenter`.
 */
export type CustomPropertiesCheck = (args: {
  db: string;
  tenant: string;
  type: TypeDef;
  state: Record<string, unknown>;
  /** The object as stored before this write; null when the write creates it. */
  existing: StoredObject | null;
  store: ObjectStore;
  /**
   * Where the object will stand: the root object (scheme or organization) it
   * belongs to, null for a root object itself or where not known yet
   * (`ownerPending`: it moves under `parentId`, which the write checks later).
   */
  placement: { modelId: string | null; parentId: string | null; ownerPending: boolean };
  /**
   * The write the object belongs to, as the write observers saw it (runtime/plugins.ts WriteObserver): a REST
   * request's Koa context, or the token of a plugin's write of many objects.
   */
  request?: object;
}) => Promise<Violation[]>;

/**
 * Admits a status beyond the standard workflow's (one the tenant declares)
 * and checks a change of status against the transitions the tenant allows
 * (the profiles plugin; decisions §7.2). Called for an object whose write
 * sends a status that is not standard, and for every change of an existing
 * object's status. Paths are relative to the object (`status`).
 * Synchronous, beside the generated validation, so that its violations are
 * reported with the others: what it needs it reads before the write (a write
 * observer sees every write first).
 */
export type StatusCheck = (args: {
  db: string;
  tenant: string;
  type: TypeDef;
  /** The status the object will have. */
  status: string;
  /** The stored object's status; null when the write creates the object. */
  previous: string | null;
  /** The caller's access level in the tenant. */
  accessLevel: string;
  /** The write the object belongs to, as for CustomPropertiesCheck. */
  request?: object;
}) => Violation[];

export interface StatusChecking {
  check: StatusCheck;
  accessLevel: string;
}

export class Writer {
  private readonly standardStatuses: Set<string>;

  constructor(
    readonly model: Metamodel,
    private readonly validators: Validators,
    private readonly store: ObjectStore,
    private readonly tenant: string,
    private readonly actor: string,
    private readonly customProperties?: CustomPropertiesCheck,
    private readonly statuses?: StatusChecking,
    /** The write the objects belong to (a REST request's context, a plugin's write's token), passed on to the checks. */
    private readonly request?: object,
  ) {
    this.standardStatuses = new Set(model.enumerations.Status ?? []);
  }

  /** A status the generated validator does not know is left to the status check, when there is one. */
  private deferredStatus(state: Record<string, unknown>): string | undefined {
    const status = state.status;
    return this.statuses && typeof status === 'string' && !this.standardStatuses.has(status) ? status : undefined;
  }

  /** Prepares one object; violations are collected, not thrown, so a list reports all of them. */
  async prepare(req: WriteRequest, now: number, violations: ViolationList): Promise<PreparedWrite | null> {
    const draft = this.draft(req, violations);
    return draft && this.complete(draft, now, violations);
  }

  /**
   * The checks that need no database: type, merge, placement, label,
   * generated validation. Synchronous, so that a list of a million bad
   * items is counted without a promise per item.
   */
  draft(req: WriteRequest, violations: ViolationList): Draft | null {
    const report = reporterOf(violations, req.index);
    if (!req.payload || typeof req.payload !== 'object' || Array.isArray(req.payload)) {
      report('', 'mustBeObject');
      return null;
    }
    const body = req.payload as Record<string, unknown>;
    const type = this.typeOf(body, req, report);
    if (!type) return null;
    const unknown = manyUnknown(type, body);
    if (unknown) {
      for (const name of unknown) report(name, 'unknownProperty');
      return null;
    }
    const state = this.mergedState(type, body, req);
    const placement = this.placement(type, state, body, req, report);
    this.deriveLabel(type, state, req);
    const deferred = this.deferredStatus(state);
    if (deferred !== undefined) delete state.status;
    const valid = this.validate(type, state, report);
    if (deferred !== undefined) state.status = deferred;
    const statusAllowed = this.checkStatus(type, state, body, req, report);
    if (!valid || !statusAllowed || !placement) return null;
    return { req, body, type, state, placement };
  }

  /** The tenant's custom properties, then the object as it will be stored. */
  async complete(draft: Draft, now: number, violations: ViolationList): Promise<PreparedWrite | null> {
    const { req, body, type, state, placement } = draft;
    if (this.customProperties) {
      const custom = await this.customProperties({
        db: this.store.db, tenant: this.tenant, type, state, existing: req.existing ?? null, store: this.store,
        placement: { modelId: placement.modelId, parentId: placement.parentId, ownerPending: placement.ownerPending }, request: this.request,
      });
      for (const v of custom) violations.push({ ...v, path: itemPath(req.index, v.path) });
      if (custom.length) return null;
    }
    return { object: this.stored(type, state, placement, body, req, now), existing: req.existing, secrets: this.secretsOf(type, state), index: req.index, ownerPending: placement.ownerPending };
  }

  private typeOf(body: Record<string, unknown>, req: WriteRequest, report: Report): TypeDef | null {
    const allowed = placeTypes(this.model, req.place);
    const given = body._type;
    if (given === undefined || given === null) {
      // Clients should send `_type`; where the object or its list leaves no doubt, it may be left out (POST excepted).
      if (req.existing) return this.model.types[req.existing.type];
      if (allowed.length === 1 && req.mode !== 'post') return this.model.types[allowed[0]];
      report('_type', 'typeMissing');
      return null;
    }
    // Not String(given): an object whose toString is no function cannot be made text that way; nor are names of Object.prototype types.
    if (typeof given !== 'string' || !Object.hasOwn(this.model.types, given) || this.model.types[given].abstract) {
      report('_type', 'unknownType', { type: typeof given === 'string' ? given : JSON.stringify(given) });
      return null;
    }
    if (req.existing && req.existing.type !== given) {
      report('_type', 'typeChange');
      return null;
    }
    if (!allowed.includes(given)) {
      report('_type', 'wrongTypeInList', { type: given, list: placeName(req.place) });
      return null;
    }
    return this.model.types[given];
  }

  /** PUT starts from nothing, PATCH from the existing object; null unsets; unset properties fall back to their defaults. */
  private mergedState(type: TypeDef, body: Record<string, unknown>, req: WriteRequest): Record<string, unknown> {
    const state: Record<string, unknown> = req.mode === 'patch' && req.existing ? this.writableStateOf(type, req.existing) : {};
    for (const [name, value] of Object.entries(body)) {
      if (IGNORED.has(name) || type.properties.some((p) => p.name === name && p.readOnly)) continue;
      state[name] = value;
    }
    for (const name of Object.keys(state)) if (state[name] === null) delete state[name];
    for (const p of type.properties) {
      if (state[p.name] === undefined && p.default !== undefined && !p.readOnly) state[p.name] = p.default;
      // Technical keys are compared as stored: in lower case.
      if (p.dataType === 'REFERENCE' && typeof state[p.name] === 'string' && UUID.test(state[p.name] as string)) {
        state[p.name] = (state[p.name] as string).toLowerCase();
      }
    }
    return state;
  }

  private writableStateOf(type: TypeDef, e: StoredObject): Record<string, unknown> {
    const state: Record<string, unknown> = { label: e.label, title: e.title, description: e.description, status: e.status };
    for (const p of type.properties) {
      if (!p.readOnly && !p.writeOnly && e.props[p.name] !== undefined) state[p.name] = e.props[p.name];
    }
    if (Object.keys(e.custom).length) state.customProperties = e.custom;
    return state;
  }

  /**
   * Where the object stands. A new object (and an item of a list write)
   * stands under the parent the path names; a parent reference it sends must
   * agree. Else the parent reference the payload sends names the parent (so
   * writing one moves the object; decisions §7.1), else it stands where it
   * stood, else at the root if its type allows. Of a type's parent
   * references, exactly the one naming its parent is kept.
   */
  private placement(type: TypeDef, state: Record<string, unknown>, body: Record<string, unknown>, req: WriteRequest, report: Report): Placement | null {
    const { place, existing } = req;
    if (!type.owners.length) {
      if (place.kind === 'children') return { parentId: place.owner.id, list: place.list.name, modelId: place.owner.modelId ?? place.owner.id, ownerPending: false };
      if (existing) return { parentId: existing.parentId, list: existing.list, modelId: existing.modelId, ownerPending: false };
      if (type.root) return { parentId: null, list: type.plural, modelId: null, ownerPending: false };
      report('_type', 'notCreatableHere', { type: type.name, list: placeName(place) });
      return null;
    }
    const sent = type.owners.filter((o) => body[o.property] !== undefined && body[o.property] !== null);
    const named = new Set(sent.map((o) => state[o.property]));
    if (named.size > 1) {
      for (const o of sent.slice(1)) report(o.property, 'parentReferencesDisagree', { references: sent.map((x) => x.property).join(', ') });
      return null;
    }
    const keep = (property: string | undefined, parentId: string | null) => {
      for (const o of type.owners) delete state[o.property];
      if (property && parentId) state[property] = parentId;
    };
    if (place.kind === 'children' && (!existing || !req.key || !sent.length)) {
      const owner = place.owner;
      const property = ownerFor(type, owner.type)?.property;
      for (const o of sent) if (o.property !== property || state[o.property] !== owner.id) report(o.property, 'parentDisagrees', { parent: owner.label });
      keep(property, owner.id);
      return { parentId: owner.id, list: place.list.name, modelId: owner.modelId ?? owner.id, ownerPending: false };
    }
    if (sent.length) {
      const property = sent[0].property;
      const parentId = state[property];
      keep(property, typeof parentId === 'string' ? parentId : null);
      // An invalid technical key is reported by validation.
      if (typeof parentId !== 'string') return null;
      return existing && existing.parentId === parentId
        ? { parentId, list: existing.list, modelId: existing.modelId, ownerPending: false }
        : { parentId, list: '', modelId: null, ownerPending: true };
    }
    if (existing) {
      const current = type.owners.find((o) => existing.props[o.property] === existing.parentId) ?? (type.owners.length === 1 ? type.owners[0] : undefined);
      keep(current?.property, existing.parentId);
      return { parentId: existing.parentId, list: existing.list, modelId: existing.modelId, ownerPending: false };
    }
    // Where the metamodel makes the only reference mandatory, validation reports it.
    if (!(type.owners.length === 1 && type.properties.some((p) => p.name === type.owners[0].property && p.required))) {
      report(type.owners[0].property, 'parentMissing', { references: type.owners.map((o) => o.property).join(', ') });
    }
    return null;
  }

  /** A missing label comes from the properties the type names, else from the business-key path. */
  private deriveLabel(type: TypeDef, state: Record<string, unknown>, req: WriteRequest) {
    if (state.label == null && type.labelFrom) {
      const parts = type.labelFrom.map((p) => state[p]).filter((v) => v !== undefined && v !== null && v !== '');
      if (parts.length) state.label = parts.join(' ');
    }
    if (state.label == null && req.key && !req.key.isId) state.label = req.key.value;
  }

  /** A status that is not standard, and every change of status, go to the status check (when there is one). */
  private checkStatus(type: TypeDef, state: Record<string, unknown>, body: Record<string, unknown>, req: WriteRequest, report: Report): boolean {
    if (!this.statuses || typeof state.status !== 'string') return true;
    const previous = req.existing?.status ?? null;
    const sent = body.status !== undefined && body.status !== null;
    const changed = !!req.existing && previous !== state.status;
    if (!changed && !(sent && !this.standardStatuses.has(state.status))) return true;
    const refused = this.statuses.check({ db: this.store.db, tenant: this.tenant, type, status: state.status, previous, accessLevel: this.statuses.accessLevel, request: this.request });
    for (const v of refused) report(v.path, v.key, v.params);
    return !refused.length;
  }

  /** Reports every violated constraint once, on the offending property; the guard narrows the state to what the validator admits. */
  private validate(type: TypeDef, state: Record<string, unknown>, report: Report): state is WritableState {
    const validator = this.validators[type.name];
    const violations = validator(state) ? [] : violationsOf(validator.errors as never);
    for (const v of violations) {
      const message = (KEYWORD_MESSAGES[v.keyword] ?? (() => ({ key: 'invalidValue' })))(v.params);
      report(v.path, message.key, message.params);
    }
    // A label derived from missing properties would only repeat their violations.
    const blank = typeof state.label === 'string' && state.label.trim() === '';
    const labelMissing = blank || (state.label === undefined && !violations.length);
    if (labelMissing && !violations.some((v) => v.path === 'label')) report('label', 'mandatory');
    return !violations.length && !labelMissing;
  }

  private secretsOf(type: TypeDef, state: Record<string, unknown>): Record<string, unknown> {
    const secret = type.properties.filter((p) => p.writeOnly && p.name in state);
    return secret.length ? Object.fromEntries(secret.map((p) => [p.name, state[p.name]])) : NONE;
  }

  private stored(type: TypeDef, state: WritableState, placement: Placement, body: Record<string, unknown>, req: WriteRequest, now: number): StoredObject {
    const existing = req.existing;
    const id = existing?.id ?? (req.key?.isId ? req.key.value.toLowerCase() : requestedId(body)) ?? randomUUID();
    const props: Record<string, unknown> = {};
    for (const p of type.properties) {
      if (SYSTEM.has(p.name) || p.writeOnly) continue;
      // Read-only properties of the type (e.g. a subject identifier) survive every write.
      const value = p.readOnly ? existing?.props[p.name] : state[p.name];
      if (value !== undefined && value !== null) props[p.name] = value;
    }
    return {
      id,
      type: type.name,
      // A tenant owns itself.
      tenant: type.name === 'Tenant' ? id : this.tenant,
      parentId: placement.parentId,
      list: placement.list,
      label: String(state.label),
      title: state.title ?? null,
      description: state.description ?? null,
      status: state.status ?? null,
      modelId: placement.modelId ?? (placement.ownerPending ? null : id),
      version: existing ? existing.version + 1 : 1,
      createdBy: existing ? existing.createdBy : this.actor,
      dateCreated: existing ? existing.dateCreated : now,
      modifiedBy: this.actor,
      dateModified: now,
      props,
      custom: state.customProperties ?? NONE,
    };
  }

  /**
   * Checks that every new or changed reference names an existing object of
   * its range type in the tenant, and places objects under the parent their
   * owner reference names. An unchanged reference is not checked again, so
   * that an object whose referenced object is gone can still be written back.
   */
  /**
   * The checks of what the writes point at: `checkReferences`, then `checkPlaces` (which reads where the first placed
   * the objects), over one map of the batch's objects by technical key. Returns what checkPlaces returns. `turn`:
   * bulk work's way of letting requests go first (InteractiveGate.turn); REST writes do not wait.
   */
  async checkTargets(prepared: PreparedWrite[], violations: ViolationList, turn: Turn = noTurn): Promise<Map<PreparedWrite, StoredObject[]>> {
    const inBatch = await batchObjects(prepared, turn);
    await this.checkReferences(prepared, inBatch, violations, turn);
    return this.checkPlaces(prepared, inBatch, violations, turn);
  }

  private async checkReferences(prepared: PreparedWrite[], inBatch: Map<string, StoredObject>, violations: ViolationList, turn: Turn): Promise<void> {
    const checked: { w: PreparedWrite; p: TypeDef['properties'][number]; value: string }[] = [];
    for (const [i, w] of prepared.entries()) {
      if (i % TURN_EVERY === 0) await turn();
      for (const p of this.model.types[w.object.type].properties) {
        const value = w.object.props[p.name];
        if (p.dataType !== 'REFERENCE' || typeof value !== 'string') continue;
        // A parent reference is checked where it names a new parent; the path's parent, or the one the object stands under, is known.
        if (p.owner ? w.ownerPending : w.existing?.props[p.name] !== value) checked.push({ w, p, value });
      }
    }
    const wanted = [...new Set(checked.map((c) => c.value))].filter((id) => !inBatch.has(id));
    const found = new Map((await this.store.byIds(this.tenant, wanted)).map((o) => [o.id, o]));
    for (const [i, { w, p, value }] of checked.entries()) {
      if (i % TURN_EVERY === 0) await turn();
      const target = inBatch.get(value) ?? found.get(value);
      const owner = p.owner && w.ownerPending ? this.model.types[w.object.type].owners.find((o) => o.property === p.name) : undefined;
      const path = itemPath(w.index, p.name);
      if (target && owner && !owner.parentTypes.includes(target.type)) {
        violations.push({ path, key: 'parentCannotHold', params: { parentType: target.type, type: w.object.type } });
      } else if (!target || !this.model.types[p.range!].concreteTypes.includes(target.type)) {
        violations.push({ path, key: 'referenceNotFound', params: { type: p.range } });
      } else if (owner && !this.placeUnder(w, target)) {
        violations.push({ path, key: 'moveIntoOwnSubtree' });
      }
    }
  }

  /** Puts the object into the list of the parent that holds objects of its type. */
  private placeUnder(w: PreparedWrite, parent: StoredObject): boolean {
    const list = this.model.types[parent.type].lists.find((l) => !l.inverseOf && l.itemTypes.includes(w.object.type));
    if (!list || parent.id === w.object.id) return false;
    w.object.list = list.name;
    w.object.modelId = parent.modelId ?? parent.id;
    return true;
  }

  /**
   * The checks of where objects are going (after checkReferences placed
   * them): a move not into the object's own subtree, and the kind of model
   * (decisions §7.1: a scheme's `modelType` decides what it may hold, the
   * metamodel's `modelTypes` of each type): a new object, and a moved one
   * with everything below it, must suit the kind of the model it lands in;
   * a model whose kind changes must suit what it holds. Returns, per moved
   * object that changes models, what is below it (locked), whose modelId
   * follows (`followModel`).
   */
  private async checkPlaces(prepared: PreparedWrite[], inBatch: Map<string, StoredObject>, violations: ViolationList, turn: Turn): Promise<Map<PreparedWrite, StoredObject[]>> {
    const below = new Map<PreparedWrite, StoredObject[]>();
    const moved = prepared.filter((w) => w.existing && w.existing.parentId !== w.object.parentId && w.object.parentId);
    const ancestors = await this.store.ancestors(this.tenant, moved.map((w) => w.object.parentId!));
    for (const w of moved) {
      if (ancestors.get(w.object.parentId!)?.includes(w.object.id)) violations.push({ path: itemPath(w.index, this.ownerPath(w)), key: 'moveIntoOwnSubtree' });
    }
    const landing = prepared.filter((w) => w.object.modelId && w.object.modelId !== w.object.id && (!w.existing || w.existing.modelId !== w.object.modelId));
    const roots = new Map((await this.store.byIds(this.tenant, [...new Set(landing.map((w) => w.object.modelId!))].filter((id) => !inBatch.has(id)))).map((o) => [o.id, o]));
    for (const [i, w] of landing.entries()) {
      if (i % TURN_EVERY === 0) await turn();
      const root = inBatch.get(w.object.modelId!) ?? roots.get(w.object.modelId!);
      const kind = root && this.kindOf(root);
      const rest = w.existing ? await this.store.descendants(this.tenant, w.object.id) : [];
      if (w.existing) below.set(w, rest);
      if (!kind) continue;
      const unfit = [w.object.type, ...new Set(rest.map((o) => o.type))].find((t) => this.model.types[t].modelTypes && !this.model.types[t].modelTypes!.includes(kind));
      if (unfit) {
        const allowed = this.model.types[unfit].modelTypes!.join(', ');
        violations.push({ path: itemPath(w.index, w.existing ? this.ownerPath(w) : '_type'), key: 'wrongModelType', params: { modelType: kind, type: unfit, allowed } });
      }
    }
    for (const w of prepared.filter((x) => x.existing && x.object.modelId === x.object.id)) {
      const kind = this.kindOf(w.object);
      const property = this.kindProperty(w.object.type);
      if (!kind || !property || kind === w.existing!.props[property]) continue;
      const unfit = (await this.store.typesInModel(this.tenant, w.object.id)).find((t) => this.model.types[t]?.modelTypes && !this.model.types[t].modelTypes!.includes(kind));
      if (unfit) violations.push({ path: itemPath(w.index, property), key: 'modelTypeHoldsOthers', params: { modelType: kind, type: unfit } });
    }
    return below;
  }

  /**
   * Everything below a moved object that changes models, with its modelId
   * following (a new version each, so as-of reads show the model it was in).
   */
  followModel(below: Map<PreparedWrite, StoredObject[]>): StoredObject[] {
    return [...below].flatMap(([w, objects]) => objects.map((o) => ({
      ...o, modelId: w.object.modelId, version: o.version + 1, modifiedBy: this.actor, dateModified: w.object.dateModified,
    })));
  }

  /** The parent reference a moved object names its new parent by (where it has one), for violation paths. */
  private ownerPath(w: PreparedWrite): string {
    return this.model.types[w.object.type].owners.find((o) => w.object.props[o.property] === w.object.parentId)?.property ?? 'parentId';
  }

  /** The property of a root type that says its kind of model (a scheme's `modelType`). */
  private kindProperty(typeName: string): string | undefined {
    return this.model.types[typeName]?.properties.find((p) => p.dataType === 'ENUMERATION' && p.range === MODEL_TYPES)?.name;
  }

  private kindOf(root: StoredObject): string | undefined {
    const property = this.kindProperty(root.type);
    const kind = property ? root.props[property] : undefined;
    return typeof kind === 'string' ? kind : undefined;
  }

  /**
   * Checks the keys that must be unique: a new object's technical key in the
   * whole database, and every label among its siblings. Objects in `leaving`
   * (removed by the same request) give up their labels. A key another
   * tenant has or had is refused without saying so (`idUnavailable`), unless
   * the caller sees every tenant: that it exists is theirs to know.
   */
  async checkKeys(prepared: PreparedWrite[], leaving: string[], violations: ViolationList, allTenants: boolean, turn: Turn = noTurn): Promise<void> {
    const created = prepared.filter((w) => !w.existing);
    const uses = await this.store.keyUses(created.map((w) => w.object.id));
    for (const [i, w] of created.entries()) {
      if (i % TURN_EVERY === 0) await turn();
      const use = uses.get(w.object.id);
      if (use && !allTenants && isForeign(use, this.tenant)) violations.push({ path: itemPath(w.index, 'id'), key: 'idUnavailable' });
      else if (use?.liveTenant) violations.push({ path: itemPath(w.index, 'id'), key: 'idTaken' });
      // A re-created object continues the version count of the one deleted before.
      w.object.version = (use?.lastVersion ?? 0) + 1;
    }
    violations.push(...await duplicateLabels(prepared, turn));
    const written = prepared.map((w) => w.object);
    const clashing = await this.store.labelClashes(written, [...leaving, ...written.map((o) => o.id)]);
    for (const i of clashing) violations.push({ path: itemPath(prepared[i].index, 'label'), key: 'labelTaken' });
  }
}

/** Whether a tenant other than the caller's has or had an object with the key. */
export function isForeign(use: KeyUse, tenant: string): boolean {
  return [...use.tenants].some((t) => t !== tenant);
}

/**
 * The properties of a payload that has more than a hundred its type does
 * not know; undefined for any other. Merging them and the generated
 * validator, which reports each as an error object of its own, took 2.9 s
 * and 450 MB for 800,000; they are reported here instead.
 */
function manyUnknown(type: TypeDef, body: Record<string, unknown>): string[] | undefined {
  const names = Object.keys(body);
  if (names.length <= type.properties.length + IGNORED.size + MAX_VIOLATIONS) return undefined;
  const known = new Set<string>([...type.properties.map((p) => p.name), ...WRITABLE_SYSTEM, ...IGNORED, 'customProperties']);
  const unknown = names.filter((name) => !known.has(name));
  return unknown.length > MAX_VIOLATIONS ? unknown : undefined;
}

function requestedId(body: Record<string, unknown>): string | undefined {
  return typeof body.id === 'string' && UUID.test(body.id) ? body.id.toLowerCase() : undefined;
}

/** Objects between two asks of `turn` (each ask reads the clock). */
const TURN_EVERY = 256;

/** The objects of a batch by technical key (for 110,000, about 20 ms if made in one go). */
async function batchObjects(prepared: PreparedWrite[], turn: Turn): Promise<Map<string, StoredObject>> {
  const objects = new Map<string, StoredObject>();
  for (const [i, w] of prepared.entries()) {
    if (i % TURN_EVERY === 0) await turn();
    objects.set(w.object.id, w.object);
  }
  return objects;
}

/** Rejects payloads that give the same label twice among siblings. */
async function duplicateLabels(prepared: PreparedWrite[], turn: Turn): Promise<Violation[]> {
  const violations: Violation[] = [];
  const seen = new Map<string, string>();
  for (const [i, w] of prepared.entries()) {
    if (i % TURN_EVERY === 0) await turn();
    // Text that cannot be in a key separates its parts (not JSON.stringify of an array: 18 MB more for 110,000 objects).
    const key = `${w.object.parentId}\u0000${w.object.list}\u0000${w.object.label}`;
    if (seen.has(key) && seen.get(key) !== w.object.id) violations.push({ path: itemPath(w.index, 'label'), key: 'labelTaken' });
    seen.set(key, w.object.id);
  }
  return violations;
}
