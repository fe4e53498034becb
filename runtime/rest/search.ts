/**
 * `GET /rest/<db>/search?q=…&types=…&limit=…&cursor=…` (decisions §9): the
 * objects of the caller's tenant whose label, title or description matches
 * what was typed, best first, each with its type, its business-key path and
 * the labels above it. Types the caller may not read (users, below
 * ADMINISTRATOR) are never searched; a `types` naming one is refused as a
 * read of their list would be.
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Metamodel } from '../metamodel/model.ts';
import { createError } from '../errors.ts';
import type { Principal } from '../auth/types.ts';
import { atLeast } from '../auth/middleware.ts';
import { SearchStore, type Ancestor, type SearchHit } from '../storage/search.ts';
import { objectHref, pluralOf, webHref, type Links } from './hal.ts';

export const SEARCH_PATH = 'search';
export const MAX_SEARCH_TEXT = 200;
export const MAX_SEARCH_LIMIT = 100;
const DEFAULT_LIMIT = 20;
/** Paging goes this deep at most: search is for finding, not for reading everything. */
const MAX_OFFSET = 10_000;
const PARAMETERS = new Set(['q', 'types', 'limit', 'cursor']);

interface SearchCall {
  ctx: Context;
  model: Metamodel;
  knex: Knex;
  principal: Principal;
  links: Links;
}

/** Whether the path is the search call's: a metamodel plural of that name would win. */
export function isSearchPath(model: Metamodel, segments: string[]): boolean {
  return segments.length === 1 && segments[0] === SEARCH_PATH && !model.plurals[SEARCH_PATH];
}

function parameter(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw createError('INVALID_PARAMETER', { name });
  return value;
}

function textOf(ctx: Context): string {
  const q = (parameter(ctx, 'q') ?? '').trim();
  if (!q) throw createError('INVALID_PARAMETER', { name: 'q' }, [{ path: 'q', key: 'tooShort', params: { limit: 1 } }]);
  if ([...q].length > MAX_SEARCH_TEXT) throw createError('INVALID_PARAMETER', { name: 'q' }, [{ path: 'q', key: 'tooLong', params: { limit: MAX_SEARCH_TEXT } }]);
  if (/\u0000/.test(q)) throw createError('INVALID_PARAMETER', { name: 'q' }, [{ path: 'q', key: 'invalidValue' }]);
  return q;
}

/** The concrete types to search: those named (abstract ones with their subtypes) or all, less what the caller may not read. */
function typesOf(ctx: Context, model: Metamodel, principal: Principal): string[] {
  const mayReadUsers = atLeast(principal, 'ADMINISTRATOR');
  const text = parameter(ctx, 'types');
  if (text === undefined) {
    const all = new Set(Object.values(model.types).flatMap((t) => t.concreteTypes));
    if (!mayReadUsers) all.delete('User');
    return [...all].sort();
  }
  const names = text.split(',').map((n) => n.trim()).filter(Boolean);
  if (!names.length) throw createError('INVALID_PARAMETER', { name: 'types' }, [{ path: 'types', key: 'tooShort', params: { limit: 1 } }]);
  const types = new Set<string>();
  for (const name of names) {
    const type = Object.hasOwn(model.types, name) ? model.types[name] : undefined;
    if (!type) throw createError('INVALID_PARAMETER', { name: 'types' }, [{ path: 'types', key: 'unknownType', params: { type: name } }]);
    for (const concrete of type.concreteTypes) types.add(concrete);
  }
  if (types.has('User') && !mayReadUsers) throw createError('FORBIDDEN');
  return [...types].sort();
}

function limitOf(ctx: Context): number {
  const text = parameter(ctx, 'limit');
  if (text === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > MAX_SEARCH_LIMIT) throw createError('INVALID_PARAMETER', { name: 'limit' });
  return Number(text);
}

/** A cursor is the position of the next hit, as this service wrote it. */
function offsetOf(ctx: Context): number {
  const cursor = parameter(ctx, 'cursor');
  if (cursor === undefined) return 0;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (decoded && typeof decoded === 'object' && Number.isInteger(decoded.after) && decoded.after > 0 && decoded.after <= MAX_OFFSET
      && Buffer.from(JSON.stringify({ after: decoded.after }), 'utf8').toString('base64url') === cursor) return decoded.after;
  } catch {
    // not JSON: refused below like any cursor the service did not make
  }
  throw createError('INVALID_PARAMETER', { name: 'cursor' });
}

const cursorAt = (after: number) => Buffer.from(JSON.stringify({ after }), 'utf8').toString('base64url');

/** The path the REST interface resolves: list names and labels from the root down, or the plural and technical key where no business key leads there. */
export function businessKeyPath(model: Metamodel, chain: Ancestor[]): string {
  const [root] = chain;
  const rootLists = model.rootLists as Record<string, string | undefined>;
  const segments = root.parentId === null && rootLists[root.list] ? [root.list, root.label] : [pluralOf(model, root.type), root.id];
  for (const step of chain.slice(1)) segments.push(step.list, step.label);
  return `/${segments.map(encodeURIComponent).join('/')}`;
}

function render(call: SearchCall, hit: SearchHit, chain: Ancestor[]) {
  const { model, links } = call;
  const ancestors = chain.slice(0, -1).map((a) => ({ _type: a.type, id: a.id, label: a.label }));
  const self = objectHref(model, links, hit.type, hit.id);
  return {
    _type: hit.type,
    id: hit.id,
    label: hit.label,
    ...(hit.title !== null ? { title: hit.title } : {}),
    path: businessKeyPath(model, chain),
    ancestors,
    ...(hit.excerpt !== null ? { excerpt: hit.excerpt } : {}),
    href: webHref(model, links, hit.type, hit.id),
    _links: { self: { href: self } },
  };
}

export async function handleSearch(call: SearchCall) {
  const { ctx, model, principal } = call;
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: 'GET, HEAD' });
  for (const name of Object.keys(ctx.query)) if (!PARAMETERS.has(name)) throw createError('INVALID_PARAMETER', { name });
  const text = textOf(ctx);
  const types = typesOf(ctx, model, principal);
  const limit = limitOf(ctx);
  const offset = offsetOf(ctx);
  const store = new SearchStore(call.knex, call.links.db);
  const hits = await store.find({ text, tenant: principal.tenant!, allTenants: principal.systemAdmin, types, offset, limit: limit + 1 });
  const more = hits.length > limit && offset + limit < MAX_OFFSET;
  const page = hits.slice(0, limit);
  const chains = await store.ancestors(page.map((h) => h.id));
  const alone = (hit: SearchHit): Ancestor[] => [{ id: hit.id, type: hit.type, label: hit.label, list: '', parentId: hit.id }];
  const results = page.map((hit) => render(call, hit, chains.get(hit.id) ?? alone(hit)));
  let next: string | undefined;
  if (more) {
    const url = new URL(ctx.href);
    url.searchParams.set('cursor', cursorAt(offset + limit));
    next = url.toString();
  }
  ctx.body = {
    _links: { self: { href: ctx.href }, ...(next ? { next: { href: next } } : {}) },
    _embedded: { results },
  };
}
