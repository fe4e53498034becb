/**
 * Reading lists: the objects of a list place, keyset paging (`limit`,
 * `cursor`) with a HAL `next` link, and `total` over the whole list.
 */
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { createError } from '../errors.ts';
import type { ObjectStore, Page, StoredObject } from '../storage/objects.ts';
import { halList } from './hal.ts';
import { placeName, placeTypes, scopeTenant, UUID, type ListPlace } from './paths.ts';
import { renderAll, type Call } from './handlers.ts';

const MAX_LIMIT = 10_000;

type Plain = Record<string, unknown>;

export function listItems(call: Call, store: ObjectStore, place: ListPlace, page: Page = {}): Promise<StoredObject[]> {
  const types = placeTypes(call.deps.model, place);
  const tenant = scopeTenant(call.scope, types);
  if (place.kind === 'root') return store.children(tenant, null, place.list.name, page);
  if (place.kind === 'all') return store.ofTypes(call.scope.tenant, types, page);
  if (place.list.inverseOf) return store.referencing(call.scope.tenant, types, place.list.inverseOf, place.owner.id, page);
  return store.children(call.scope.tenant, place.owner.id, place.list.name, page);
}

function countItems(call: Call, store: ObjectStore, place: ListPlace, filters?: Record<string, string>): Promise<number> {
  const types = placeTypes(call.deps.model, place);
  if (place.kind === 'root') return store.count(scopeTenant(call.scope, types), { parentId: null, list: place.list.name }, filters);
  if (place.kind === 'all') return store.count(call.scope.tenant, { types }, filters);
  if (place.list.inverseOf) return store.count(call.scope.tenant, { types, property: place.list.inverseOf, target: place.owner.id }, filters);
  return store.count(call.scope.tenant, { parentId: place.owner.id, list: place.list.name }, filters);
}

const NOT_FILTERS = new Set(['limit', 'cursor', 'version', 'operation', 'language']);

/** Other query parameters filter by a readable property of the items, e.g. `users?loginId=bob`. */
function filtersOf(call: Call, place: ListPlace): Record<string, string> | undefined {
  const model = call.deps.model;
  const itemType = model.types[place.kind === 'all' ? place.type.name : place.list.itemType];
  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries(call.ctx.query)) {
    if (NOT_FILTERS.has(name)) continue;
    const property = itemType.properties.find((p) => p.name === name);
    // Write-only properties (passwords) are never an oracle.
    if (!property || property.writeOnly || property.many || ['id', 'tenant', '_version', 'db', 'href', 'dateCreated', 'dateModified', 'modelId', 'parentId', 'createdBy', 'modifiedBy'].includes(name) || typeof value !== 'string') {
      throw createError('INVALID_PARAMETER', { name });
    }
    filters[name] = value;
  }
  return Object.keys(filters).length ? filters : undefined;
}

/** `limit` and `cursor` as given; a cursor is only ever one this service made. */
export function pageOf(ctx: Context): Page {
  const { limit, cursor } = ctx.query;
  const page: Page = {};
  if (limit !== undefined) {
    if (typeof limit !== 'string' || !/^\d{1,5}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT) {
      throw createError('INVALID_PARAMETER', { name: 'limit' });
    }
    page.limit = Number(limit);
  }
  if (cursor !== undefined) page.after = decodeCursor(cursor);
  return page;
}

function decodeCursor(cursor: unknown): Page['after'] {
  try {
    const [label, id] = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8'));
    if (typeof cursor === 'string' && typeof label === 'string' && typeof id === 'string' && UUID.test(id)) return { label, id: id.toLowerCase() };
  } catch {
    // not JSON: reported below like any other cursor the service did not make
  }
  throw createError('INVALID_PARAMETER', { name: 'cursor' });
}

function cursorOf(o: { label: unknown; id: unknown }): string {
  return Buffer.from(JSON.stringify([o.label, o.id]), 'utf8').toString('base64url');
}

/** The `next` link of a keyset page: the cursor names the page's last item (history uses its version as the label). */
export function nextHref(ctx: Context, last: { label: unknown; id: unknown }): string {
  const url = new URL(ctx.href);
  url.searchParams.set('cursor', cursorOf(last));
  return url.toString();
}

const STREAM_CHUNK = 1000;

/**
 * A whole list is streamed: read in keyset chunks and written as they come,
 * so that memory does not grow with the list. `total` stands last, where its
 * count is known.
 */
async function streamList(call: Call, store: ObjectStore, place: ListPlace, filters?: Record<string, string>) {
  const { ctx, deps } = call;
  const read = (after?: Page['after']) => listItems(call, store, place, { limit: STREAM_CHUNK, after, filters });
  // The first chunk is read before the status is sent, so that a failing database is still a 503, not a cut-off 200.
  const first = await read();
  async function* body() {
    yield `{"_links":${JSON.stringify({ self: { href: ctx.href } })},"_embedded":{${JSON.stringify(placeName(place))}:[`;
    let total = 0;
    for (let chunk = first; ; ) {
      // One statement finds what the links of the whole chunk need.
      const text = (await renderAll(call, store, chunk)).map((o) => JSON.stringify(o)).join(',');
      if (text) yield (total ? ',' : '') + text;
      total += chunk.length;
      if (chunk.length < STREAM_CHUNK) break;
      const last = chunk[chunk.length - 1];
      chunk = await read({ label: last.label, id: last.id });
    }
    yield `]},"total":${total}}`;
  }
  ctx.type = 'application/json';
  ctx.body = Readable.from(body(), { objectMode: false });
}

/** One more than the page is read, so that a next link is given only when there is a next page. */
export async function readList(call: Call, store: ObjectStore, place: ListPlace) {
  const { ctx, deps } = call;
  const page = { ...pageOf(ctx), filters: filtersOf(call, place) };
  if (!page.limit && !page.after) return streamList(call, store, place, page.filters);
  const items = await listItems(call, store, place, page.limit ? { ...page, limit: page.limit + 1 } : page);
  const more = page.limit !== undefined && items.length > page.limit;
  if (more) items.pop();
  const total = page.limit || page.after ? await countItems(call, store, place, page.filters) : items.length;
  const rendered = await renderAll(call, store, items);
  ctx.body = halList(placeName(place), ctx.href, total, rendered, more ? nextHref(ctx, items[items.length - 1]) : undefined);
}

/** A list as of a time is read whole from history; paging cuts it after the object the cursor names. */
export function pagedAsOf(ctx: Context, items: Plain[]): { items: Plain[]; next?: string } {
  const page = pageOf(ctx);
  let start = 0;
  if (page.after) {
    start = items.findIndex((o) => o.id === page.after!.id) + 1;
    if (start === 0) throw createError('INVALID_PARAMETER', { name: 'cursor' });
  }
  const end = page.limit ? start + page.limit : items.length;
  const slice = items.slice(start, end);
  return { items: slice, next: end < items.length ? nextHref(ctx, slice[slice.length - 1] as { label: unknown; id: unknown }) : undefined };
}
