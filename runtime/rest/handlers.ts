/**
 * The generic handlers behind every REST path: one per method and path kind,
 * driven by the generated metamodel. Every write is one transaction.
 */
import { epochMillis } from '../versions.ts';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Metamodel } from '../metamodel/model.ts';
import { createError, type Violation } from '../errors.ts';
import type { Principal } from '../auth/types.ts';
import { requireLevel } from '../auth/middleware.ts';
import type { SecretHandler } from '../plugins.ts';
import { ObjectStore, plainObject, type StoredObject } from '../storage/objects.ts';
import { halList, halObject, halStored, objectHref, type Links } from './hal.ts';
import { placeItemType, placeName, placeTypes, resolvePath, type ListPlace, type PathKey, type Scope, type Target } from './paths.ts';
import { resolvePathAt } from './as-of.ts';
import { listItems, pagedAsOf, readList } from './lists.ts';
import { assertNoViolations, changesNothing, itemPath, type CustomPropertiesCheck, type PreparedWrite, type Validators, Writer } from './writer.ts';
import { removalOf } from './removal.ts';
import { checkUserWrites } from '../auth/user-writes.ts';
import { removeTenant } from './tenant-removal.ts';

export interface RestDeps {
  model: Metamodel;
  validators: Validators;
  knex: Knex;
  secretHandlers: Map<string, SecretHandler>;
  /** Validates custom properties against the tenant's annotations (profiles plugin). */
  customProperties?: CustomPropertiesCheck;
  /** Told after a write committed, with the types it touched (caches of users and tenants listen). */
  changed?(db: string, types: string[]): void;
}

export interface Call {
  ctx: Context;
  deps: RestDeps;
  principal: Principal;
  db: string;
  links: Links;
  scope: Scope;
}

const METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'];

export async function handleRest(ctx: Context, deps: RestDeps, principal: Principal, db: string, segments: string[], links: Links) {
  const call: Call = { ctx, deps, principal, db, links, scope: { tenant: principal.tenant!, allTenants: principal.systemAdmin } };
  if (!METHODS.includes(ctx.method)) throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: METHODS.join(', ') });
  try {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return await read(call, segments);
    let touched: string[] = [];
    await deps.knex.transaction(async (trx) => {
      const store = new ObjectStore(trx, db);
      const target = await resolvePath(store, deps.model, call.scope, segments);
      touched = target.kind === 'list' ? placeTypes(deps.model, target.place) : [...new Set([...targetTypes(deps.model, target), ...placeTypes(deps.model, target.place)])];
      authorize(principal, targetTypes(deps.model, target), true);
      if (target.kind === 'list') return writeList(call, trx, store, target.place);
      return writeObject(call, trx, store, target);
    });
    deps.changed?.(db, touched);
  } catch (err) {
    throw translateDatabaseError(err);
  }
}

/** A unique index the checks before writing could not foresee (a concurrent request took the key first) is still a clash. */
function translateDatabaseError(err: unknown): unknown {
  const e = err as { code?: string; constraint?: string };
  if (e?.code === '23505') {
    if (e.constraint === 'objects_pkey') return createError('CONFLICT', {}, [{ path: 'id', key: 'idTaken' }]);
    if (e.constraint?.startsWith('objects_')) return createError('CONFLICT', {}, [{ path: 'label', key: 'labelTaken' }]);
    return createError('CONCURRENT_CHANGE');
  }
  // A database dropped by another instance a moment ago: its tables are gone before every cache knows.
  if (e?.code === '42P01' || e?.code === '3F000') return createError('NOT_FOUND');
  // Invalid text (a NUL), numbers out of range …: the error middleware answers 400 for every interface.
  return err;
}

function targetTypes(model: Metamodel, target: Target): string[] {
  return target.kind === 'object' ? [target.object.type] : placeTypes(model, target.place);
}

function authorize(principal: Principal, types: string[], write: boolean) {
  if (types.includes('User')) requireLevel(principal, 'ADMINISTRATOR');
  if (write && types.includes('Tenant') && !principal.systemAdmin) throw createError('FORBIDDEN');
  if (write) requireLevel(principal, 'EDITOR');
}

function notFound(place: ListPlace, key: PathKey) {
  return createError('OBJECT_NOT_FOUND', { type: placeItemType(place), key: key.value });
}

function render(call: Call, o: StoredObject) {
  return halStored(call.deps.model, call.links, call.db, o);
}

async function read(call: Call, segments: string[]) {
  const { ctx, deps } = call;
  const at = asOf(ctx);
  if (at !== undefined) return readAsOf(call, segments, at);
  const store = new ObjectStore(deps.knex, call.db);
  const target = await resolvePath(store, deps.model, call.scope, segments, { forRead: true });
  authorize(call.principal, targetTypes(deps.model, target), false);
  if (target.kind === 'missing') throw notFound(target.place, target.key);
  if (target.kind === 'list') return readList(call, store, target.place);
  ctx.set('ETag', `W/"${target.object.version}"`);
  ctx.body = render(call, target.object);
}

async function readAsOf(call: Call, segments: string[], at: number) {
  const { ctx, deps } = call;
  const result = await resolvePathAt(new ObjectStore(deps.knex, call.db), deps.model, call.scope, segments, at);
  authorize(call.principal, result.types, false);
  if (result.kind === 'object') {
    ctx.set('ETag', `W/"${result.object._version}"`);
    ctx.body = halObject(deps.model, call.links, result.object);
    return;
  }
  const page = pagedAsOf(ctx, result.items);
  ctx.body = halList(result.name, ctx.href, result.items.length, page.items.map((o) => halObject(deps.model, call.links, o)), page.next);
}

/** `version` wins over `Accept-Version`; both are epoch milliseconds. */
function asOf(ctx: Context): number | undefined {
  const text = ctx.query.version ?? (ctx.get('Accept-Version') || undefined);
  if (text === undefined) return undefined;
  const ms = typeof text === 'string' ? epochMillis(text) : undefined;
  if (ms === undefined) throw createError('INVALID_PARAMETER', { name: 'version' });
  return ms;
}

function checkIfMatch(ctx: Context, existing: StoredObject | undefined) {
  const header = ctx.get('If-Match');
  if (!header) return;
  if (!existing) throw createError('PRECONDITION_FAILED', { version: 0 });
  if (header.trim() === '*') return;
  const versions = header.split(',').map((v) => v.trim().replace(/^W\//, '').replace(/"/g, ''));
  if (!versions.includes(String(existing.version))) throw createError('PRECONDITION_FAILED', { version: existing.version });
}

/** Objects are created in lists of children, at the root, or in a list of all objects whose types name their parent or stand at the root. */
function creatable(model: Metamodel, place: ListPlace): boolean {
  if (place.kind !== 'all') return !(place.kind === 'children' && place.list.inverseOf);
  return place.type.concreteTypes.some((t) => model.types[t].ownerProperty || model.types[t].root);
}

function writerOf(call: Call, store: ObjectStore) {
  return new Writer(call.deps.model, call.deps.validators, store, call.scope.tenant, call.principal.loginId, call.deps.customProperties);
}

async function writeObject(call: Call, trx: Knex.Transaction, store: ObjectStore, target: Exclude<Target, { kind: 'list' }>) {
  const { ctx, deps } = call;
  const existing = target.kind === 'object' ? target.object : undefined;
  checkIfMatch(ctx, existing);
  if (ctx.method === 'POST') throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: 'GET, HEAD, PUT, PATCH, DELETE' });
  if (ctx.method === 'DELETE') {
    if (!existing) throw notFound(target.place, target.key);
    if (existing.type === 'Tenant') await removeTenant(trx, store, existing, call.principal.loginId);
    else await store.remove(await removalOf(deps.model, store, call.scope.tenant, [existing]), call.principal.loginId);
    ctx.status = 204;
    return;
  }
  if (!existing && !creatable(deps.model, target.place)) throw notFound(target.place, target.key);
  const writer = writerOf(call, store);
  const violations: Violation[] = [];
  const request = { payload: payloadOf(ctx), mode: ctx.method === 'PUT' ? 'put' : 'patch', place: target.place, existing, key: target.key } as const;
  const prepared = await writer.prepare(request, await store.now(), violations);
  await applyWrites(call, trx, store, writer, { prepared: prepared ? [prepared] : [], leaving: [], violations, place: target.place, creates: !existing });
  respondWithObject(call, prepared!.object, !existing);
}

/** The parsed request body; undefined when the request has none (the body parser would give `{}`). */
function payloadOf(ctx: Context): unknown {
  const bodyless = !ctx.get('transfer-encoding') && !Number(ctx.get('content-length') || 0);
  return bodyless ? undefined : ctx.request.body;
}

function respondWithObject(call: Call, object: StoredObject, created: boolean) {
  const { ctx, deps } = call;
  ctx.status = created ? 201 : 200;
  ctx.set('ETag', `W/"${object.version}"`);
  if (created) ctx.set('Location', objectHref(deps.model, call.links, object.type, object.id));
  ctx.body = render(call, object);
}

async function writeList(call: Call, trx: Knex.Transaction, store: ObjectStore, place: ListPlace) {
  const { ctx, deps } = call;
  if (place.kind === 'children' && place.list.inverseOf) throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: 'GET, HEAD' });
  const writer = writerOf(call, store);
  const violations: Violation[] = [];
  if (ctx.method === 'POST') {
    if (!creatable(deps.model, place)) throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: 'GET, HEAD, PUT, PATCH, DELETE' });
    const prepared = await writer.prepare({ payload: payloadOf(ctx), mode: 'post', place }, await store.now(), violations);
    await applyWrites(call, trx, store, writer, { prepared: prepared ? [prepared] : [], leaving: [], violations, place, creates: true });
    return respondWithObject(call, prepared!.object, true);
  }
  const existing = await listItems(call, store, place);
  if (ctx.method === 'DELETE') {
    await store.remove(await removalOf(deps.model, store, call.scope.tenant, existing), call.principal.loginId);
    ctx.status = 204;
    return;
  }
  const operation = ctx.query.operation;
  if (operation !== undefined && operation !== 'REPLACE') throw createError('INVALID_PARAMETER', { name: 'operation' });
  const items = payloadOf(ctx);
  if (!Array.isArray(items)) throw createError('INVALID_PAYLOAD', { type: placeItemType(place), action: 'actionUpdate' }, [{ path: '', key: 'wrongType', params: { expected: 'array' } }]);
  const prepared = await prepareItems(call, writer, store, place, items, existing, violations);
  const listed = new Set(prepared.flatMap((w) => (w.existing ? [w.existing.id] : [])));
  const replace = ctx.method === 'PUT' || operation === 'REPLACE';
  const leaving = replace ? existing.filter((o) => !listed.has(o.id)) : [];
  await applyWrites(call, trx, store, writer, { prepared, leaving, violations, place, creates: false });
  const result = await listItems(call, store, place);
  ctx.status = 200;
  ctx.body = halList(placeName(place), ctx.href, result.length, result.map((o) => render(call, o)));
}

/** Each item replaces or modifies the listed object it names by technical key or label, or is created. */
async function prepareItems(call: Call, writer: Writer, store: ObjectStore, place: ListPlace, items: unknown[], existing: StoredObject[], violations: Violation[]) {
  const matches = matchItems(items, existing, call.deps.model, violations);
  const now = await store.now();
  const mode = call.ctx.method === 'PUT' ? 'put' : 'patch';
  const prepared: PreparedWrite[] = [];
  for (const [index, item] of items.entries()) {
    const w = await writer.prepare({ payload: item, mode, place, existing: matches[index], index }, now, violations);
    if (w) prepared.push(w);
  }
  return prepared;
}

/**
 * The listed object each item names: by technical key first, then by label
 * among the objects no key named, so that one item may rename an object and
 * another create a new one under its old label.
 */
function matchItems(items: unknown[], existing: StoredObject[], model: Metamodel, violations: Violation[]): (StoredObject | undefined)[] {
  const byId = new Map(existing.map((o) => [o.id, o]));
  const fields = items.map((item) => (item && typeof item === 'object' && !Array.isArray(item) ? item as Record<string, unknown> : {}));
  const named = new Set<string>();
  const matches = fields.map((o, index) => {
    const match = typeof o.id === 'string' ? byId.get(o.id.toLowerCase()) : undefined;
    if (match && named.has(match.id)) violations.push({ path: itemPath(index, 'id'), key: 'listedTwice' });
    if (match) named.add(match.id);
    return match;
  });
  const byLabel = new Map(existing.filter((o) => !named.has(o.id)).map((o) => [o.label, o]));
  return matches.map((match, index) => match ?? byLabel.get(labelOf(fields[index], model) ?? ''));
}

function labelOf(o: Record<string, unknown>, model: Metamodel): string | undefined {
  if (typeof o.label === 'string') return o.label;
  const type = typeof o._type === 'string' ? model.types[o._type] : undefined;
  const parts = (type?.labelFrom ?? []).map((p) => o[p]).filter((v) => v !== undefined && v !== null && v !== '');
  return parts.length ? parts.join(' ') : undefined;
}

interface WriteBatch {
  prepared: PreparedWrite[];
  /** Objects the request removes (their descendants and dependents go with them). */
  leaving: StoredObject[];
  violations: Violation[];
  place: ListPlace;
  /** Whether the request creates its object (POST, or PUT/PATCH of a missing object), for the message. */
  creates: boolean;
}

/** Checks everything, then removes and writes; objects a write would not change keep their version. */
async function applyWrites(call: Call, trx: Knex.Transaction, store: ObjectStore, writer: Writer, batch: WriteBatch) {
  const { prepared, violations } = batch;
  await writer.checkReferences(prepared, violations);
  const leaving = await removalOf(call.deps.model, store, call.scope.tenant, batch.leaving);
  await writer.checkKeys(prepared, leaving.map((o) => o.id), violations);
  await checkUserWrites(trx, call.db, call.principal, prepared, leaving.map((o) => o.id), violations);
  assertNoViolations(violations, batch.place, batch.creates);
  await store.remove(leaving, call.principal.loginId);
  for (const w of prepared) if (changesNothing(w)) w.object = w.existing!;
  const changed = prepared.filter((w) => w.object !== w.existing);
  const rendered = (o: StoredObject) => plainObject(o, call.db);
  // Changes first, so that a new object may take a label an existing one gives up.
  if (!await store.update(changed.filter((w) => w.existing).map((w) => w.object), rendered, call.principal.loginId)) {
    throw createError('CONCURRENT_CHANGE');
  }
  await store.insert(changed.filter((w) => !w.existing).map((w) => w.object), rendered, call.principal.loginId);
  await keepSecrets(call, trx, changed, batch);
}

/** Write-only values go to the plugin that keeps them; its violations undo the whole request. */
async function keepSecrets(call: Call, trx: Knex.Transaction, written: PreparedWrite[], batch: WriteBatch) {
  const violations: Violation[] = [];
  for (const w of written) {
    for (const [name, value] of Object.entries(w.secrets)) {
      const handler = call.deps.secretHandlers.get(`${w.object.type}.${name}`);
      const found = handler ? (await handler({ trx, db: call.db, object: w.object, value })) ?? [] : [{ path: name, key: 'unknownProperty' }];
      violations.push(...found.map((v) => ({ ...v, path: itemPath(w.index, v.path) })));
    }
  }
  assertNoViolations(violations, batch.place, batch.creates);
}
