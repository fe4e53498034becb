/**
 * Turns write payloads into stored objects: merge (PUT replaces, PATCH
 * merges), defaults, owner and label derivation, generated validation and
 * reference checks. Nothing is written here; the caller writes the prepared
 * objects in its transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Metamodel, TypeDef } from '../metamodel/model.ts';
import { SYSTEM_PROPERTIES } from '../metamodel/model.ts';
import { createError, type Violation } from '../errors.ts';
import type { ObjectStore, StoredObject } from '../storage/objects.ts';
import { violationsOf } from '../validation.ts';
import { placeName, placeTypes, type ListPlace, UUID } from './paths.ts';

export type Validators = Record<string, ((data: unknown) => boolean) & { errors?: unknown }>;

export interface WriteRequest {
  payload: unknown;
  mode: 'put' | 'patch' | 'post';
  place: ListPlace;
  existing?: StoredObject;
  /** The key of the path that named a missing object: its id or label. */
  key?: { value: string; isId: boolean };
  /** Where in a list payload this item stands, for violation paths. */
  index?: number;
}

export interface PreparedWrite {
  object: StoredObject;
  created: boolean;
  /** Write-only values (e.g. a password) for the plugins that keep them. */
  secrets: Record<string, unknown>;
  /** Where each violation path of this item starts in the request. */
  prefix: string;
}

/** HAL properties and read-only properties are ignored in write payloads, so a read object can be written back. */
const IGNORED = new Set<string>(['_links', '_embedded', ...SYSTEM_PROPERTIES.filter((p) => !['label', 'title', 'description', 'status'].includes(p))]);

const KEYWORD_MESSAGES: Record<string, (params: Record<string, unknown>) => Pick<Violation, 'key' | 'params'>> = {
  required: () => ({ key: 'mandatory' }),
  unknownProperty: () => ({ key: 'unknownProperty' }),
  type: (p) => ({ key: 'wrongType', params: { expected: p.type } }),
  enum: (p) => ({ key: 'notAllowedValue', params: { allowed: (p.allowedValues as string[] | undefined)?.join(', ') } }),
  format: (p) => ({ key: 'invalidFormat', params: { format: p.format } }),
  maxLength: (p) => ({ key: 'tooLong', params: { limit: p.limit } }),
  minLength: (p) => (p.limit === 1 ? { key: 'mandatory' } : { key: 'tooShort', params: { limit: p.limit } }),
};

export class Writer {
  constructor(
    private readonly model: Metamodel,
    private readonly validators: Validators,
    private readonly store: ObjectStore,
    private readonly tenant: string,
    private readonly actor: string,
  ) {}

  /** Prepares one object; violations are collected, not thrown, so a list reports all of them. */
  async prepare(req: WriteRequest, now: number, violations: Violation[]): Promise<PreparedWrite | null> {
    const prefix = req.index === undefined ? '' : `${req.index}.`;
    const add = (path: string, key: string, params?: Record<string, unknown>) => violations.push({ path: prefix + path, key, ...(params ? { params } : {}) });
    const payload = req.payload;
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
      add(prefix ? '' : '_type', 'invalidValue');
      return null;
    }
    const body = payload as Record<string, unknown>;
    const type = this.typeOf(body, req, add);
    if (!type) return null;

    const state = this.mergedState(type, body, req);
    const secrets: Record<string, unknown> = {};
    for (const p of type.properties) {
      if (p.writeOnly && p.name in state) {
        secrets[p.name] = state[p.name];
      }
    }
    const place = req.place;
    const owner = place.kind === 'children' && !place.list.inverseOf ? place.owner : null;
    if (type.ownerProperty) {
      if (owner) {
        if (state[type.ownerProperty] != null && state[type.ownerProperty] !== owner.id) add(type.ownerProperty, 'invalidValue');
        state[type.ownerProperty] = owner.id;
      }
    }
    if (state.label == null && type.labelFrom) {
      const parts = type.labelFrom.map((p) => state[p]).filter((v) => v !== undefined && v !== null && v !== '');
      if (parts.length) state.label = parts.join(' ');
    }
    if (state.label == null && req.key && !req.key.isId) state.label = req.key.value;
    const before = violations.length;
    const valid = this.validators[type.name](state);
    if (!valid) {
      for (const v of violationsOf(this.validators[type.name].errors as never)) {
        const message = (KEYWORD_MESSAGES[v.keyword] ?? (() => ({ key: 'invalidValue' })))(v.params);
        add(v.path, message.key, message.params);
      }
    }
    // A label derived from missing properties would only repeat their violations.
    if (state.label == null && violations.length === before) add('label', 'mandatory');
    if (violations.length > before) return null;

    const id = req.existing?.id ?? (req.key?.isId ? req.key.value.toLowerCase() : this.requestedId(body)) ?? randomUUID();
    let parentId: string | null = owner?.id ?? null;
    let list = placeName(place);
    let modelId: string | null = owner ? (owner.modelId ?? owner.id) : id;
    if (!owner && type.ownerProperty && typeof state[type.ownerProperty] === 'string') {
      // Created at the top level (e.g. a person under /persons): the owner reference names the parent.
      parentId = state[type.ownerProperty] as string;
      list = place.kind === 'all' ? type.plural : list;
      modelId = null; // filled in after the owner is checked
    }
    if (req.existing && place.kind === 'all') {
      parentId = req.existing.parentId;
      list = req.existing.list;
      modelId = req.existing.modelId;
    }
    const props: Record<string, unknown> = {};
    for (const p of type.properties) {
      if (p.readOnly || p.writeOnly || (SYSTEM_PROPERTIES as readonly string[]).includes(p.name)) continue;
      if (state[p.name] !== undefined && state[p.name] !== null) props[p.name] = state[p.name];
    }
    for (const p of type.properties) {
      // Read-only properties of the type (e.g. a subject identifier) survive every write.
      if (p.readOnly && !(SYSTEM_PROPERTIES as readonly string[]).includes(p.name) && req.existing?.props[p.name] !== undefined) {
        props[p.name] = req.existing.props[p.name];
      }
    }
    const existing = req.existing;
    return {
      object: {
        id,
        type: type.name,
        // A tenant owns itself.
        tenant: type.name === 'Tenant' ? id : this.tenant,
        parentId,
        list,
        label: String(state.label),
        title: (state.title as string | undefined) ?? null,
        description: (state.description as string | undefined) ?? null,
        status: (state.status as string | undefined) ?? null,
        modelId,
        version: existing ? existing.version + 1 : 1,
        createdBy: existing ? existing.createdBy : this.actor,
        dateCreated: existing ? existing.dateCreated : now,
        modifiedBy: this.actor,
        dateModified: now,
        props,
        custom: state.customProperties && typeof state.customProperties === 'object'
          ? state.customProperties as Record<string, unknown>
          : (req.mode === 'patch' && existing ? existing.custom : {}),
      },
      created: !existing,
      secrets,
      prefix,
    };
  }

  /** Checks that every reference names an existing object of its range type; fills parents found through owners. */
  async checkReferences(prepared: PreparedWrite[], violations: Violation[]): Promise<void> {
    const wanted = new Set<string>();
    for (const { object } of prepared) {
      for (const p of this.model.types[object.type].properties) {
        if (p.dataType === 'REFERENCE' && typeof object.props[p.name] === 'string') wanted.add(object.props[p.name] as string);
      }
    }
    const inBatch = new Map(prepared.map((w) => [w.object.id, w.object]));
    const missing = [...wanted].filter((id) => !inBatch.has(id));
    const found = new Map((await this.store.byIds(this.tenant, missing)).map((o) => [o.id, o]));
    for (const [id, o] of inBatch) found.set(id, o);
    for (const w of prepared) {
      const type = this.model.types[w.object.type];
      for (const p of type.properties) {
        if (p.dataType !== 'REFERENCE') continue;
        const value = w.object.props[p.name];
        if (typeof value !== 'string') continue;
        const target = found.get(value);
        const range = this.model.types[p.range!];
        if (!target || !range.concreteTypes.includes(target.type)) {
          violations.push({ path: w.prefix + p.name, key: 'referenceNotFound', params: { type: p.range } });
        } else if (p.owner && w.object.modelId === null) {
          w.object.modelId = target.modelId ?? target.id;
        }
      }
    }
  }

  private requestedId(body: Record<string, unknown>): string | undefined {
    return typeof body.id === 'string' && UUID.test(body.id) ? body.id.toLowerCase() : undefined;
  }

  private typeOf(body: Record<string, unknown>, req: WriteRequest, add: (path: string, key: string, params?: Record<string, unknown>) => void): TypeDef | null {
    const allowed = placeTypes(this.model, req.place);
    const given = body._type;
    if (given === undefined || given === null) {
      if (req.existing) return this.model.types[req.existing.type];
      if (allowed.length === 1 && req.mode !== 'post') return this.model.types[allowed[0]];
      add('_type', 'typeMissing');
      return null;
    }
    if (typeof given !== 'string' || !this.model.types[given] || this.model.types[given].abstract) {
      add('_type', 'unknownType', { type: String(given) });
      return null;
    }
    if (req.existing && req.existing.type !== given) {
      add('_type', 'typeChange');
      return null;
    }
    if (!allowed.includes(given)) {
      add('_type', 'wrongTypeInList', { type: given, list: placeName(req.place) });
      return null;
    }
    return this.model.types[given];
  }

  private mergedState(type: TypeDef, body: Record<string, unknown>, req: WriteRequest): Record<string, unknown> {
    const state: Record<string, unknown> = {};
    if (req.mode === 'patch' && req.existing) {
      const e = req.existing;
      Object.assign(state, { label: e.label, title: e.title, description: e.description, status: e.status });
      for (const p of type.properties) {
        if (!p.readOnly && !p.writeOnly && e.props[p.name] !== undefined) state[p.name] = e.props[p.name];
      }
      if (Object.keys(e.custom).length) state.customProperties = e.custom;
    }
    for (const [name, value] of Object.entries(body)) {
      if (name === '_type' || IGNORED.has(name)) continue;
      if (type.properties.some((p) => p.name === name && p.readOnly)) continue;
      state[name] = value;
    }
    // null unsets; unset properties fall back to their defaults.
    for (const name of Object.keys(state)) if (state[name] === null) delete state[name];
    for (const p of type.properties) {
      if (state[p.name] === undefined && p.default !== undefined && !p.readOnly) state[p.name] = p.default;
    }
    return state;
  }
}

/** Rejects payloads that name the same object twice or the same label twice. */
export function duplicateViolations(prepared: PreparedWrite[]): Violation[] {
  const violations: Violation[] = [];
  const seen = new Map<string, string>();
  for (const w of prepared) {
    const key = `${w.object.parentId}\u0000${w.object.list}\u0000${w.object.label}`;
    if (seen.has(key) && seen.get(key) !== w.object.id) violations.push({ path: `${w.prefix}label`, key: 'labelTaken' });
    seen.set(key, w.object.id);
  }
  return violations;
}

export function assertNoViolations(violations: Violation[], typeName: string, created: boolean) {
  if (violations.length) {
    throw createError('INVALID_PAYLOAD', { type: typeName, action: created ? 'actionCreate' : 'actionUpdate' }, violations);
  }
}
