/**
 * The generic handlers behind every REST path: one per method and path kind,
 * driven by the generated metamodel. Every write is one transaction.
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Metamodel } from '../metamodel/model.ts';
import { createError, type Violation } from '../errors.ts';
import type { Principal } from '../auth/types.ts';
import { requireLevel } from '../auth/middleware.ts';
import type { SecretHandler } from '../plugins.ts';
import { ObjectStore, plainObject, type Page, type StoredObject } from '../storage/objects.ts';
import { halList, halObject, objectHref, type Links } from './hal.ts';
import { placeName, placeTypes, resolvePath, scopeTenant, type ListPlace, type Scope, type Target } from './paths.ts';
import { resolvePathAt } from './as-of.ts';
import { assertNoViolations, duplicateViolations, type PreparedWrite, type Validators, Writer } from './writer.ts';

export interface RestDeps {
  model: Metamodel;
  validators: Validators;
  knex: Knex;
  secretHandlers: Map<string, SecretHandler>;
}

interface Call {
  ctx: Context;
  deps: RestDeps;
  principal: Principal;
  db: string;
  links: Links;
  scope: Scope;
}

const MAX_LIMIT = 10_000;

export async function handleRest(ctx: Context, deps: RestDeps, principal: Principal, db: string, segments: string[], links: Links) {
  const call: Call = { ctx, deps, principal, db, links, scope: { tenant: principal.tenant!, allTenants: principal.systemAdmin } };
  const method = ctx.method;
  if (method === 'GET' || method === 'HEAD') return get(call, segments);
  if (!['PUT', 'PATCH', 'POST', 'DELETE'].includes(method)) throw createError('METHOD_NOT_ALLOWED');
  try {
    await deps.knex.transaction(async (trx) => {
      const store = new ObjectStore(trx, db);
      const target = await resolvePath(store, deps.model, call.scope, segments);
      if (target.kind === 'list') return writeList(call, trx, store, target.place);
      if (method === 'POST') throw createError('METHOD_NOT_ALLOWED');
      return writeObject(call, trx, store, target);
    });
  } catch (err) {
    throw translateDatabaseError(err);
  }
}

/** A unique-index violation is a label clash: 409 with a violation on the label. */
function translateDatabaseError(err: unknown): unknown {
  const e = err as { code?: string; constraint?: string };
  if (e?.code === '23505') {
    return createError('CONFLICT', {}, [{ path: 'label', key: 'labelTaken' }]);
  }
  if (e?.code === '22P02' || e?.code === '22003' || e?.code === '54000') return createError('BAD_REQUEST');
  return err;
}

function authorize(principal: Principal, types: string[], write: boolean) {
  if (types.includes('User')) requireLevel(principal, 'ADMINISTRATOR');
  if (write && types.includes('Tenant') && !principal.systemAdmin) throw createError('FORBIDDEN');
  if (write) requireLevel(principal, 'EDITOR');
}

function notFound(model: Metamodel, place: ListPlace, key: string) {
  const typeName = place.kind === 'all' ? place.type.name : place.list.itemType;
  return createError('OBJECT_NOT_FOUND', { type: typeName, key });
}

function asOf(ctx: Context): number | undefined {
  const text = (ctx.query.version as string | undefined) ?? (ctx.get('Accept-Version') || undefined);
  if (text === undefined) return undefined;
  if (typeof text !== 'string' || !/^\d{1,15}$/.test(text)) throw createError('INVALID_PARAMETER', { name: 'version' });
  return Number(text);
}

function pageOf(ctx: Context): Page {
  const { limit, cursor } = ctx.query;
  const page: Page = {};
  if (limit !== undefined) {
    if (typeof limit !== 'string' || !/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT) {
      throw createError('INVALID_PARAMETER', { name: 'limit' });
    }
    page.limit = Number(limit);
  }
  if (cursor !== undefined) {
    try {
      const [label, id] = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8'));
      if (typeof label !== 'string' || typeof id !== 'string' || !/^[0-9a-f-]{36}$/.test(id)) throw new Error();
      page.after = { label, id };
    } catch {
      throw createError('INVALID_PARAMETER', { name: 'cursor' });
    }
  }
  return page;
}

function cursorOf(o: StoredObject): string {
  return Buffer.from(JSON.stringify([o.label, o.id]), 'utf8').toString('base64url');
}

function render(call: Call, o: StoredObject) {
  return halObject(call.deps.model, call.links, plainObject(o, call.db));
}

async function get(call: Call, segments: string[]) {
  const { ctx, deps } = call;
  const at = asOf(ctx);
  if (at !== undefined) {
    const result = await resolvePathAt(new ObjectStore(deps.knex, call.db), deps.model, call.scope, segments, at);
    authorize(call.principal, result.types, false);
    ctx.body = result.kind === 'object'
      ? halObject(deps.model, call.links, result.object)
      : halList(result.name, ctx.href, result.items.length, result.items.map((o) => halObject(deps.model, call.links, o)));
    return;
  }
  const store = new ObjectStore(deps.knex, call.db);
  const target = await resolvePath(store, deps.model, call.scope, segments);
  if (target.kind === 'missing') throw notFound(deps.model, target.place, target.key);
  if (target.kind === 'object') {
    authorize(call.principal, [target.object.type], false);
    ctx.set('ETag', `W/"${target.object.version}"`);
    ctx.body = render(call, target.object);
    return;
  }
  const place = target.place;
  authorize(call.principal, placeTypes(deps.model, place), false);
  const page = pageOf(ctx);
  const items = await listItems(call, store, place, page);
  const total = page.limit || page.after ? await countItems(call, store, place) : items.length;
  let next: string | undefined;
  if (page.limit && items.length === page.limit) {
    const url = new URL(ctx.href);
    url.searchParams.set('cursor', cursorOf(items[items.length - 1]));
    next = url.toString();
  }
  ctx.body = halList(placeName(place), ctx.href, total, items.map((o) => render(call, o)), next);
}

function listItems(call: Call, store: ObjectStore, place: ListPlace, page: Page = {}): Promise<StoredObject[]> {
  const types = placeTypes(call.deps.model, place);
  const tenant = scopeTenant(call.scope, types);
  if (place.kind === 'root') return store.children(tenant, null, place.list.name, page);
  if (place.kind === 'all') return store.ofTypes(call.scope.tenant, types, page);
  if (place.list.inverseOf) return store.referencing(call.scope.tenant, types, place.list.inverseOf, place.owner.id, page);
  return store.children(call.scope.tenant, place.owner.id, place.list.name, page);
}

function countItems(call: Call, store: ObjectStore, place: ListPlace): Promise<number> {
  const types = placeTypes(call.deps.model, place);
  if (place.kind === 'root') return store.count(scopeTenant(call.scope, types), { parentId: null, list: place.list.name });
  if (place.kind === 'all') return store.count(call.scope.tenant, { types });
  if (place.list.inverseOf) return store.count(call.scope.tenant, { types, property: place.list.inverseOf, target: place.owner.id });
  return store.count(call.scope.tenant, { parentId: place.owner.id, list: place.list.name });
}

function checkIfMatch(ctx: Context, existing: StoredObject | null) {
  const header = ctx.get('If-Match');
  if (!header) return;
  if (!existing) throw createError('PRECONDITION_FAILED', { version: 0 });
  if (header.trim() === '*') return;
  const versions = header.split(',').map((v) => v.trim().replace(/^W\//, '').replace(/"/g, ''));
  if (!versions.includes(String(existing.version))) throw createError('PRECONDITION_FAILED', { version: existing.version });
}

async function writeObject(call: Call, trx: Knex.Transaction, store: ObjectStore, target: Exclude<Target, { kind: 'list' }>) {
  const { ctx, deps } = call;
  const place = target.place;
  const existing = target.kind === 'object' ? target.object : null;
  authorize(call.principal, existing ? [existing.type] : placeTypes(deps.model, place), true);
  checkIfMatch(ctx, existing);
  if (ctx.method === 'DELETE') {
    if (!existing) throw notFound(deps.model, place, (target as { key: string }).key);
    await removeWithDescendants(call, store, [existing]);
    ctx.status = 204;
    return;
  }
  if (!existing && !creatable(place, deps.model)) throw notFound(deps.model, place, (target as { key: string }).key);
  const writer = new Writer(deps.model, deps.validators, store, call.scope.tenant, call.principal.loginId);
  const violations: Violation[] = [];
  const prepared = await writer.prepare({
    payload: ctx.request.body,
    mode: ctx.method === 'PUT' ? 'put' : 'patch',
    place,
    existing: existing ?? undefined,
    key: target.kind === 'missing' ? { value: target.key, isId: target.isId } : undefined,
  }, await store.now(), violations);
  const typeName = existing?.type ?? bodyType(ctx) ?? (place.kind === 'all' ? place.type.name : place.list.itemType);
  if (prepared) await writer.checkReferences([prepared], violations);
  assertNoViolations(violations, typeName, !existing);
  await commitWrites(call, trx, store, [prepared!]);
  ctx.status = existing ? 200 : 201;
  ctx.set('ETag', `W/"${prepared!.object.version}"`);
  if (!existing) ctx.set('Location', objectHref(deps.model, call.links, prepared!.object.type, prepared!.object.id));
  ctx.body = render(call, prepared!.object);
}

function bodyType(ctx: Context): string | undefined {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  return body && typeof body === 'object' && typeof body._type === 'string' ? body._type : undefined;
}

/** Objects are created in lists of children or at the root, or (with an owner property) in a list of all objects. */
function creatable(place: ListPlace, model: Metamodel): boolean {
  if (place.kind === 'root') return true;
  if (place.kind === 'children') return !place.list.inverseOf;
  return place.type.concreteTypes.some((t) => model.types[t].ownerProperty);
}

async function writeList(call: Call, trx: Knex.Transaction, store: ObjectStore, place: ListPlace) {
  const { ctx, deps } = call;
  const types = placeTypes(deps.model, place);
  authorize(call.principal, types, true);
  if (!creatable(place, deps.model) || (place.kind === 'all' && ctx.method !== 'POST')) throw createError('METHOD_NOT_ALLOWED');
  const writer = new Writer(deps.model, deps.validators, store, call.scope.tenant, call.principal.loginId);
  const now = await store.now();
  const violations: Violation[] = [];

  if (ctx.method === 'POST') {
    const prepared = await writer.prepare({ payload: ctx.request.body, mode: 'post', place }, now, violations);
    if (prepared && await store.byId(null, prepared.object.id)) violations.push({ path: 'id', key: 'labelTaken' });
    if (prepared) await writer.checkReferences([prepared], violations);
    assertNoViolations(violations, bodyType(ctx) ?? types[0], true);
    await commitWrites(call, trx, store, [prepared!]);
    ctx.status = 201;
    ctx.set('Location', objectHref(deps.model, call.links, prepared!.object.type, prepared!.object.id));
    ctx.set('ETag', `W/"1"`);
    ctx.body = render(call, prepared!.object);
    return;
  }

  const existing = await listItems(call, store, place);
  if (ctx.method === 'DELETE') {
    await removeWithDescendants(call, store, existing);
    ctx.status = 204;
    return;
  }
  const operation = ctx.query.operation;
  if (operation !== undefined && operation !== 'REPLACE') throw createError('INVALID_PARAMETER', { name: 'operation' });
  const items = ctx.request.body;
  if (!Array.isArray(items)) {
    throw createError('INVALID_PAYLOAD', { type: placeName(place), action: 'actionUpdate' }, [{ path: '', key: 'wrongType', params: { expected: 'array' } }]);
  }
  const byId = new Map(existing.map((o) => [o.id, o]));
  const byLabel = new Map(existing.map((o) => [o.label, o]));
  const prepared: PreparedWrite[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const match = matchExisting(item, byId, byLabel, deps.model);
    const w = await writer.prepare({ payload: item, mode: ctx.method === 'PUT' ? 'put' : 'patch', place, existing: match, index }, now, violations);
    if (w) prepared.push(w);
  }
  violations.push(...duplicateViolations(prepared));
  await writer.checkReferences(prepared, violations);
  assertNoViolations(violations, placeName(place), false);
  const kept = new Set(prepared.map((w) => w.object.id));
  if (ctx.method === 'PUT' || operation === 'REPLACE') {
    await removeWithDescendants(call, store, existing.filter((o) => !kept.has(o.id)));
  }
  await commitWrites(call, trx, store, prepared);
  ctx.status = 200;
  const result = await listItems(call, store, place);
  ctx.body = halList(placeName(place), ctx.href, result.length, result.map((o) => render(call, o)));
}

function matchExisting(item: unknown, byId: Map<string, StoredObject>, byLabel: Map<string, StoredObject>, model: Metamodel): StoredObject | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const o = item as Record<string, unknown>;
  if (typeof o.id === 'string' && byId.has(o.id.toLowerCase())) return byId.get(o.id.toLowerCase());
  if (typeof o.label === 'string') return byLabel.get(o.label);
  const type = typeof o._type === 'string' ? model.types[o._type] : undefined;
  if (type?.labelFrom) {
    const label = type.labelFrom.map((p) => o[p]).filter((v) => v !== undefined && v !== null && v !== '').join(' ');
    if (label) return byLabel.get(label);
  }
  return undefined;
}

async function commitWrites(call: Call, trx: Knex.Transaction, store: ObjectStore, prepared: PreparedWrite[]) {
  await store.write(prepared.map((w) => w.object), (o) => plainObject(o, call.db), call.principal.loginId);
  const violations: Violation[] = [];
  for (const w of prepared) {
    for (const [name, value] of Object.entries(w.secrets)) {
      const handler = call.deps.secretHandlers.get(`${w.object.type}.${name}`);
      if (!handler) {
        violations.push({ path: w.prefix + name, key: 'unknownProperty' });
        continue;
      }
      for (const v of (await handler({ trx, db: call.db, object: w.object, value })) ?? []) {
        violations.push({ ...v, path: w.prefix + v.path });
      }
    }
  }
  assertNoViolations(violations, prepared[0]?.object.type ?? 'object', prepared.some((w) => w.created));
}

async function removeWithDescendants(call: Call, store: ObjectStore, objects: StoredObject[]) {
  if (!objects.length) return;
  if (objects.some((o) => o.type === 'Tenant')) {
    throw createError('CONFLICT');
  }
  const descendants = await store.descendants(call.scope.tenant, objects.map((o) => o.id));
  await store.remove([...descendants, ...objects], call.principal.loginId);
}
