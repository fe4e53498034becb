/**
 * The generic handlers behind every REST path: one per method and path kind,
 * driven by the generated metamodel and dispatched by the generated route
 * table (route-table.ts): a path is resolved, the route of its last step
 * names the handler, and a method the route table does not have there is
 * 405 with the methods it has. Every write is one transaction, locked
 * as locks.ts says and repeated when it loses a race (retry.ts); its answer
 * is sent only once an attempt committed.
 */
import { epochMillis } from '../versions.ts';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Metamodel } from '../metamodel/model.ts';
import { createError, ViolationList } from '../errors.ts';
import type { Principal } from '../auth/types.ts';
import { requireLevel } from '../auth/middleware.ts';
import type { SecretHandler } from '../plugins.ts';
import { ObjectStore, plainObject, type LinkFacts, type StoredObject } from '../storage/objects.ts';
import { listPlanOf } from '../metamodel/relations.ts';
import { halList, halObject, halStored, objectHref, type Links } from './hal.ts';
import { placeItemType, placeName, placeTypes, resolvePath, scopeTenant, type ListPlace, type PathKey, type Scope, type Target } from './paths.ts';
import { resolvePathAt } from './as-of.ts';
import { listItems, pagedAsOf, readList } from './lists.ts';
import { changesNothing, isForeign, type CustomPropertiesCheck, type PreparedWrite, type StatusCheck, type Validators, Writer } from './writer.ts';
import { assertNoViolations, itemPath } from './write-violations.ts';
import { removalOf } from './removal.ts';
import { hasBody } from '../body.ts';
import { lockListed, lockTarget } from './locks.ts';
import { RaceLost, retryingTransaction } from '../storage/retry.ts';
import { checkUserWrites } from '../auth/user-writes.ts';
import { removeTenant } from './tenant-removal.ts';
import { routePathOf, type RestHandlerName, type RouteTable } from './route-table.ts';
import { readHistory } from './history.ts';
import type { ObjectLink, WriteObserver } from '../plugins.ts';

export interface RestDeps {
  model: Metamodel;
  /** The generated route table (generated/routes.gen.ts). */
  routes: RouteTable;
  validators: Validators;
  knex: Knex;
  secretHandlers: Map<string, SecretHandler>;
  /** Validates custom properties against the tenant's annotations (profiles plugin). */
  customProperties?: CustomPropertiesCheck;
  /** Admits the statuses a tenant declares and checks changes of status (profiles plugin). */
  statusCheck?: StatusCheck;
  /** Told after a write committed, with the types it touched (caches of users and tenants listen). */
  changed?(db: string, types: string[]): void;
  /** Lists that plugins serve below objects (a user's `accessKeys`), linked from the objects (runtime/plugins.ts). */
  objectLinks?: ObjectLink[];
  /** See each write before its objects are checked (runtime/plugins.ts WriteObserver). */
  writeObservers?: WriteObserver[];
}

export interface Call {
  ctx: Context;
  deps: RestDeps;
  principal: Principal;
  db: string;
  links: Links;
  scope: Scope;
}

/**
 * What a write needs of its call: the request only to tell the checks which write they serve (a REST request's
 * context; a plugin's write of many objects has a token of its own, object-writes.ts).
 */
export type WriteCall = Pick<Call, 'deps' | 'principal' | 'db' | 'scope'> & { ctx?: Context; request?: object };

const METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'];

/** What a write answers, kept until its transaction committed. */
interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export async function handleRest(ctx: Context, deps: RestDeps, principal: Principal, db: string, segments: string[], base: Links) {
  const links: Links = deps.objectLinks?.length ? { ...base, more: moreLinksOf(deps.objectLinks, principal) } : base;
  const call: Call = { ctx, deps, principal, db, links, scope: { tenant: principal.tenant!, allTenants: principal.systemAdmin } };
  if (!METHODS.includes(ctx.method)) throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: METHODS.join(', ') });
  try {
    if (isHistoryPath(deps.model, segments)) {
      // The route table has only GET here: any other method is 405 with the methods the path has.
      const { handler } = deps.routes.find(ctx.method, `/rest/{db}/${segments[0]}/{key}/history`);
      if (handler !== 'readHistory') throw new Error(`route table: ${handler} serves a history path`);
      return await readHistory(call, segments, (types) => authorize(principal, types, false));
    }
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return await read(call, segments);
    const { answer, touched } = await retryingTransaction(deps.knex, (trx) => write(call, trx, segments));
    deps.changed?.(db, touched);
    ctx.status = answer.status;
    for (const [name, value] of Object.entries(answer.headers ?? {})) ctx.set(name, value);
    if (answer.body !== undefined) ctx.body = answer.body;
  } catch (err) {
    throw translateDatabaseError(err);
  }
}

async function write(call: Call, trx: Knex.Transaction, segments: string[]): Promise<{ answer: Answer; touched: string[] }> {
  const { deps, ctx } = call;
  const store = new ObjectStore(trx, call.db);
  const found = await resolvePath(store, deps.model, call.scope, segments);
  authorize(call.principal, targetTypes(deps.model, found), true);
  const target = await lockTarget(store, deps.model, call.scope, found, ctx.method, payloadOf(ctx));
  const touched = target.kind === 'list' ? placeTypes(deps.model, target.place) : [...new Set([...targetTypes(deps.model, target), ...placeTypes(deps.model, target.place)])];
  const { handler } = deps.routes.find(ctx.method, routePathOf(deps.model, target));
  const answer = await WRITE_HANDLERS[handler as WriteHandlerName](call, trx, store, target);
  return { answer, touched };
}

/** `<plural>/<key>/history`: no list is called `history` (the metamodel refuses the name), so the path is an object's history. */
function isHistoryPath(model: Metamodel, segments: string[]): boolean {
  return segments.length === 3 && segments[2] === 'history' && model.plurals[segments[0]] !== undefined;
}

function translateDatabaseError(err: unknown): unknown {
  const e = err as { code?: string };
  // A database dropped by another instance a moment ago: its tables are gone before every cache knows.
  if (e?.code === '42P01' || e?.code === '3F000') return createError('NOT_FOUND');
  // Invalid text (a NUL), numbers out of range …: the error middleware answers 400 for every interface.
  return err;
}

function targetTypes(model: Metamodel, target: Target): string[] {
  return target.kind === 'object' ? [target.object.type] : placeTypes(model, target.place);
}

export function authorize(principal: Principal, types: string[], write: boolean) {
  if (types.includes('User')) requireLevel(principal, 'ADMINISTRATOR');
  if (write && types.includes('Tenant') && !principal.systemAdmin) throw createError('FORBIDDEN');
  if (write) requireLevel(principal, 'EDITOR');
}

function notFound(place: ListPlace, key: PathKey) {
  return createError('OBJECT_NOT_FOUND', { type: placeItemType(place), key: key.value });
}

/**
 * The names of the plugins' lists below an object that this caller may read. (Made by a function rather than
 * written as a property of \`links\`: tsx names a function written so on every request, 0.7 % of a GET's CPU.)
 */
function moreLinksOf(objectLinks: ObjectLink[], principal: Principal): (plain: Record<string, unknown>) => string[] {
  return (plain) => {
    const object = { id: plain.id as string, type: plain._type as string, tenant: plain.tenant as string };
    return objectLinks.filter((l) => l.type === object.type && l.visible(principal, object)).map((l) => l.name);
  };
}

/** An object with its links; what they need is looked up in one statement unless the read that found it did. */
async function render(call: Call, store: ObjectStore, o: StoredObject) {
  const facts = o.links ?? (await store.linkFacts(listPlanOf(call.deps.model), [o]))[0];
  return halStored(call.deps.model, call.links, call.db, o, facts);
}

/** Objects with their links, what those need looked up in one statement for all of them. */
export async function renderAll(call: Call, store: ObjectStore, objects: StoredObject[]): Promise<Record<string, unknown>[]> {
  const facts = await store.linkFacts(listPlanOf(call.deps.model), objects);
  return objects.map((o, i) => halStored(call.deps.model, call.links, call.db, o, facts[i]));
}

/** Objects as they were at a time (from history), with their links as of then, in one statement. */
export async function renderAllAt(call: Call, store: ObjectStore, plains: Record<string, unknown>[], at: (plain: Record<string, unknown>, index: number) => number): Promise<Record<string, unknown>[]> {
  const facts: (LinkFacts | null)[] = await store.linkFacts(listPlanOf(call.deps.model), plains.map((p, i) => ({
    id: p.id as string, type: p._type as string, tenant: p.tenant as string, parentId: (p.parentId as string | null) ?? null, at: at(p, i),
  })));
  return plains.map((p, i) => halObject(call.deps.model, call.links, p, facts[i]));
}

async function read(call: Call, segments: string[]) {
  const { ctx, deps } = call;
  const at = asOf(ctx);
  if (at !== undefined) return readAsOf(call, segments, at);
  const store = new ObjectStore(deps.knex, call.db);
  const target = await resolvePath(store, deps.model, call.scope, segments, { forRead: true, links: listPlanOf(deps.model) });
  authorize(call.principal, targetTypes(deps.model, target), false);
  const { handler } = deps.routes.find(ctx.method, routePathOf(deps.model, target));
  if (handler === 'readList') return readList(call, store, listPlaceOf(target));
  if (handler !== 'readObject') throw new Error(`route table: ${handler} serves a read`);
  if (target.kind === 'missing') throw notFound(target.place, target.key);
  if (target.kind !== 'object') throw new Error('route table: readObject serves a list');
  ctx.set('ETag', `W/"${target.object.version}"`);
  ctx.body = await render(call, store, target.object);
}

type WriteHandlerName = Exclude<RestHandlerName, 'readList' | 'readObject' | 'readHistory'>;
type ObjectTarget = Exclude<Target, { kind: 'list' }>;

/** The route table names list handlers for lists and object handlers for objects; anything else is a bug in it. */
function listPlaceOf(target: Target): ListPlace {
  if (target.kind !== 'list') throw new Error('route table: a list handler serves an object');
  return target.place;
}

function objectTargetOf(target: Target): ObjectTarget {
  if (target.kind === 'list') throw new Error('route table: an object handler serves a list');
  return target;
}

/** The write handlers the route table names, by name. */
const WRITE_HANDLERS: Record<WriteHandlerName, (call: Call, trx: Knex.Transaction, store: ObjectStore, target: Target) => Promise<Answer>> = {
  createInList: (call, trx, store, target) => createInList(call, trx, store, listPlaceOf(target)),
  replaceList: (call, trx, store, target) => writeListItems(call, trx, store, listPlaceOf(target), 'put'),
  updateList: (call, trx, store, target) => writeListItems(call, trx, store, listPlaceOf(target), 'patch'),
  deleteList: (call, trx, store, target) => deleteList(call, trx, store, listPlaceOf(target)),
  replaceObject: (call, trx, store, target) => writeObject(call, trx, store, objectTargetOf(target), 'put'),
  updateObject: (call, trx, store, target) => writeObject(call, trx, store, objectTargetOf(target), 'patch'),
  deleteObject: (call, trx, store, target) => deleteObject(call, trx, store, objectTargetOf(target)),
};

async function readAsOf(call: Call, segments: string[], at: number) {
  const { ctx, deps } = call;
  const store = new ObjectStore(deps.knex, call.db);
  const result = await resolvePathAt(store, deps.model, call.scope, segments, at);
  authorize(call.principal, result.types, false);
  if (result.kind === 'object') {
    ctx.set('ETag', `W/"${result.object._version}"`);
    ctx.body = (await renderAllAt(call, store, [result.object], () => at))[0];
    return;
  }
  const page = pagedAsOf(ctx, result.items);
  ctx.body = halList(result.name, ctx.href, result.items.length, await renderAllAt(call, store, page.items, () => at), page.next);
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
  return place.type.concreteTypes.some((t) => model.types[t].owners.length || model.types[t].root);
}

export function writerOf(call: WriteCall, store: ObjectStore) {
  return new Writer(call.deps.model, call.deps.validators, store, call.scope.tenant, call.principal.loginId, call.deps.customProperties,
    call.deps.statusCheck && { check: call.deps.statusCheck, accessLevel: call.principal.accessLevel }, call.ctx ?? call.request);
}

async function deleteObject(call: Call, trx: Knex.Transaction, store: ObjectStore, target: ObjectTarget): Promise<Answer> {
  const existing = target.kind === 'object' ? target.object : undefined;
  checkIfMatch(call.ctx, existing);
  if (!existing) throw notFound(target.place, target.key);
  if (existing.type === 'Tenant') await removeTenant(trx, store, existing, call.principal.loginId);
  else await store.remove(await removalOf(call.deps.model, store, call.scope.tenant, [existing]), call.principal.loginId);
  return { status: 204 };
}

/** PUT replaces, PATCH merges; either creates the object where it is missing. */
async function writeObject(call: Call, trx: Knex.Transaction, store: ObjectStore, target: ObjectTarget, mode: 'put' | 'patch'): Promise<Answer> {
  const { ctx, deps } = call;
  const existing = target.kind === 'object' ? target.object : undefined;
  checkIfMatch(ctx, existing);
  if (!existing && !creatable(deps.model, target.place)) throw notFound(target.place, target.key);
  if (!existing && await keyOfOtherTenant(call, store, target.key)) throw notFound(target.place, target.key);
  const writer = writerOf(call, store);
  const violations = new ViolationList();
  const request = { payload: payloadOf(ctx), mode, place: target.place, existing, key: target.key } as const;
  const prepared = await writer.prepare(request, await store.now(), violations);
  await applyWrites(call, trx, store, writer, { prepared: prepared ? [prepared] : [], leaving: [], violations, place: target.place, creates: !existing });
  return objectAnswer(call, store, prepared!.object, !existing);
}

/** A technical key in the path that another tenant has or had answers as one that names nothing: what other tenants hold is not the caller's to learn. */
async function keyOfOtherTenant(call: Call, store: ObjectStore, key: PathKey): Promise<boolean> {
  if (!key.isId || call.scope.allTenants) return false;
  const use = (await store.keyUses([key.value.toLowerCase()])).values().next().value;
  return !!use && isForeign(use, call.scope.tenant);
}

/** The parsed request body; undefined when the request has none (the body parser would give `{}`). */
function payloadOf(ctx: Context): unknown {
  return hasBody(ctx) ? ctx.request.body : undefined;
}

/** Rendered in the write's transaction, so that the links show the lists as the write left them. */
async function objectAnswer(call: Call, store: ObjectStore, object: StoredObject, created: boolean): Promise<Answer> {
  const headers: Record<string, string> = { ETag: `W/"${object.version}"` };
  if (created) headers.Location = objectHref(call.deps.model, call.links, object.type, object.id);
  return { status: created ? 201 : 200, headers, body: await render(call, store, object) };
}

/** Which lists take new objects is the route table's to say (a POST route); the check here only guards the handler. */
async function createInList(call: Call, trx: Knex.Transaction, store: ObjectStore, place: ListPlace): Promise<Answer> {
  if (!creatable(call.deps.model, place)) throw new Error(`route table: ${placeName(place)} takes no new objects`);
  const writer = writerOf(call, store);
  const violations = new ViolationList();
  const prepared = await writer.prepare({ payload: payloadOf(call.ctx), mode: 'post', place }, await store.now(), violations);
  await applyWrites(call, trx, store, writer, { prepared: prepared ? [prepared] : [], leaving: [], violations, place, creates: true });
  return objectAnswer(call, store, prepared!.object, true);
}

/** Tenants in the list go by the rules of deleting one (the default tenant and one that holds objects refuse, 409), in the same transaction. */
async function deleteList(call: Call, trx: Knex.Transaction, store: ObjectStore, place: ListPlace): Promise<Answer> {
  const items = await listItems(call, store, place);
  const tenants = items.filter((o) => o.type === 'Tenant');
  for (const tenant of tenants) await removeTenant(trx, store, tenant, call.principal.loginId);
  const others = items.filter((o) => o.type !== 'Tenant');
  if (others.length) await store.remove(await removalOf(call.deps.model, store, call.scope.tenant, others), call.principal.loginId);
  return { status: 204 };
}

/** PUT replaces the list (unlisted objects go), PATCH updates the listed objects (and replaces with `operation=REPLACE`). */
async function writeListItems(call: Call, trx: Knex.Transaction, store: ObjectStore, place: ListPlace, mode: 'put' | 'patch'): Promise<Answer> {
  const { ctx } = call;
  const writer = writerOf(call, store);
  const violations = new ViolationList();
  const operation = ctx.query.operation;
  if (operation !== undefined && operation !== 'REPLACE') throw createError('INVALID_PARAMETER', { name: 'operation' });
  const items = payloadOf(ctx);
  if (!Array.isArray(items)) throw createError('INVALID_PAYLOAD', { type: placeItemType(place), action: 'actionUpdate' }, [{ path: '', key: 'mustBeList' }]);
  const replace = mode === 'put' || operation === 'REPLACE';
  const existing = await lockedItems(call, store, place, items, replace);
  const prepared = await prepareItems(writer, store, place, items, existing, violations, mode);
  const listed = new Set(prepared.flatMap((w) => (w.existing ? [w.existing.id] : [])));
  const leaving = replace ? existing.filter((o) => !listed.has(o.id)) : [];
  await applyWrites(call, trx, store, writer, { prepared, leaving, violations, place, creates: false });
  const result = await listItems(call, store, place);
  return { status: 200, body: halList(placeName(place), ctx.href, result.length, await renderAll(call, store, result)) };
}

/**
 * The list's objects, those the write changes or removes locked and read
 * again: every one when it replaces the list, else those its items name, so
 * that list writes of different objects of one list do not wait for each
 * other. Objects removed or moved meanwhile drop out; when the items then
 * name an object that is not locked (one renamed onto a named label), the
 * write runs again.
 */
async function lockedItems(call: Call, store: ObjectStore, place: ListPlace, items: unknown[], replace: boolean): Promise<StoredObject[]> {
  const { model } = call.deps;
  const listed = await listItems(call, store, place);
  const named = replace ? listed : [...new Set(matchItems(items, listed, model, new ViolationList()).filter((o) => o !== undefined))];
  const locked = new Map((await lockListed(store, scopeTenant(call.scope, placeTypes(model, place)), place, named)).map((o) => [o.id, o]));
  const gone = new Set(named.filter((o) => !locked.has(o.id)).map((o) => o.id));
  const existing = listed.filter((o) => !gone.has(o.id)).map((o) => locked.get(o.id) ?? o);
  if (matchItems(items, existing, model, new ViolationList()).some((o) => o !== undefined && !locked.has(o.id))) throw new RaceLost();
  return existing;
}

/**
 * Each item replaces or modifies the listed object it names by technical key
 * or label, or is created. Once the error payload is full, the remaining
 * items are only checked for what needs no database, to count them.
 */
async function prepareItems(writer: Writer, store: ObjectStore, place: ListPlace, items: unknown[], existing: StoredObject[], violations: ViolationList, mode: 'put' | 'patch') {
  const matches = matchItems(items, existing, writer.model, violations);
  const now = await store.now();
  const prepared: PreparedWrite[] = [];
  for (const [index, item] of items.entries()) {
    const draft = writer.draft({ payload: item, mode, place, existing: matches[index], index }, violations);
    if (!draft || violations.omitted) continue;
    const w = await writer.complete(draft, now, violations);
    if (w) prepared.push(w);
  }
  return prepared;
}

/**
 * The listed object each item names: by technical key first, then by label
 * among the objects no key named, so that one item may rename an object and
 * another create a new one under its old label.
 */
function matchItems(items: unknown[], existing: StoredObject[], model: Metamodel, violations: ViolationList): (StoredObject | undefined)[] {
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

export interface WriteBatch {
  prepared: PreparedWrite[];
  /** Objects the request removes (their descendants and dependents go with them). */
  leaving: StoredObject[];
  violations: ViolationList;
  /** Where the objects are written, or the type to name in the message of an error. */
  place: ListPlace | string;
  /** Whether the request creates its object (POST, or PUT/PATCH of a missing object), for the message. */
  creates: boolean;
}

/**
 * Checks everything, then removes and writes; objects a write would not
 * change keep their version. Returns what it removed (the objects left out
 * with their descendants and dependents).
 */
export async function applyWrites(call: WriteCall, trx: Knex.Transaction, store: ObjectStore, writer: Writer, batch: WriteBatch): Promise<StoredObject[]> {
  const { prepared, violations } = batch;
  // A full error payload is not made fuller by asking the database.
  if (violations.omitted) assertNoViolations(violations, batch.place, batch.creates);
  const below = await writer.checkTargets(prepared, violations);
  // Tenants a list write leaves out go by the rules of deleting one (tenant-removal.ts), the rest with their descendants.
  const leavingTenants = batch.leaving.filter((o) => o.type === 'Tenant');
  const leaving = await removalOf(call.deps.model, store, call.scope.tenant, batch.leaving.filter((o) => o.type !== 'Tenant'));
  const freed = [...leaving, ...leavingTenants].map((o) => o.id);
  await writer.checkKeys(prepared, freed, violations, call.scope.allTenants);
  await checkUserWrites(trx, call.db, call.principal, prepared, freed, violations);
  assertNoViolations(violations, batch.place, batch.creates);
  for (const tenant of leavingTenants) await removeTenant(trx, store, tenant, call.principal.loginId);
  await store.remove(leaving, call.principal.loginId);
  for (const w of prepared) if (changesNothing(w)) w.object = w.existing!;
  const changed = prepared.filter((w) => w.object !== w.existing);
  const rendered = (o: StoredObject) => plainObject(o, call.db);
  // Changes first, so that a new object may take a label an existing one gives up.
  await store.update(changed.filter((w) => w.existing).map((w) => w.object), rendered, call.principal.loginId);
  // What stands below an object that moved to another model follows it there.
  await store.update(writer.followModel(below), rendered, call.principal.loginId);
  await store.insert(changed.filter((w) => !w.existing).map((w) => w.object), rendered, call.principal.loginId);
  await keepSecrets(call, trx, changed, batch);
  return [...leavingTenants, ...leaving];
}

/** Write-only values go to the plugin that keeps them; its violations undo the whole request. */
export async function keepSecrets(call: WriteCall, trx: Knex.Transaction, written: PreparedWrite[], batch: WriteBatch) {
  const violations = new ViolationList();
  for (const w of written) {
    for (const [name, value] of Object.entries(w.secrets)) {
      const handler = call.deps.secretHandlers.get(`${w.object.type}.${name}`);
      const found = handler ? (await handler({ trx, db: call.db, object: w.object, value })) ?? [] : [{ path: name, key: 'unknownProperty' }];
      violations.push(...found.map((v) => ({ ...v, path: itemPath(w.index, v.path) })));
    }
  }
  assertNoViolations(violations, batch.place, batch.creates);
}
