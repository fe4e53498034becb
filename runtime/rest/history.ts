/**
 * An object's history (`GET /rest/<db>/<plural>/<key>/history`): its
 * versions from the history table, newest first, each with the properties
 * that changed from the version before and the object as it read then.
 *
 * Who may read it is decided as for reading the object: the caller's
 * tenant only (system administrators reach every tenant object), the
 * object's type as GET would allow it. A deleted object's history stays
 * readable by its technical key, so that the user interface can show what
 * became of it; a label names only an object that exists now.
 */
import { isDeepStrictEqual } from 'node:util';
import { createError } from '../errors.ts';
import type { Metamodel } from '../metamodel/model.ts';
import { ObjectStore, type VersionRow } from '../storage/objects.ts';
import { halList } from './hal.ts';
import { nextHref, pageOf } from './lists.ts';
import { placeTypes, resolvePath, scopeTenant, UUID, type ListPlace } from './paths.ts';
import { renderAllAt, type Call } from './handlers.ts';

/** What every version carries and no change is about: who and when, the key, the version itself. */
const BOOKKEEPING = new Set(['_type', 'id', '_version', 'tenant', 'db', 'href', '_links', 'createdBy', 'dateCreated', 'modifiedBy', 'dateModified']);

/**
 * Serves the history of the object `segments[1]` names in the top-level list
 * `segments[0]`; `authorize` is the object read's own check.
 */
export async function readHistory(call: Call, segments: string[], authorize: (types: string[]) => void) {
  const { ctx, deps } = call;
  if (ctx.query.version !== undefined || ctx.get('Accept-Version')) throw createError('INVALID_PARAMETER', { name: 'version' });
  const page = pageOf(ctx);
  const store = new ObjectStore(deps.knex, call.db);
  const target = await resolvePath(store, deps.model, call.scope, segments.slice(0, 1), { forRead: true });
  if (target.kind !== 'list') throw new Error('route table: a history route names no top-level list');
  const place = target.place;
  const types = placeTypes(deps.model, place);
  const key = segments[1];
  const id = await technicalKey(call, store, segments.slice(0, 2));
  const tenant = scopeTenant(call.scope, types);
  const { total, type } = id ? await store.versionCount(tenant, id) : { total: 0, type: null };
  if (!type || !types.includes(type)) {
    // As GET answers a missing object: the list's types decide whether the caller may ask at all.
    authorize(types);
    throw createError('OBJECT_NOT_FOUND', { type: itemTypeOf(place), key });
  }
  authorize([type]);
  if (page.after && (page.after.id !== id || !/^\d{1,9}$/.test(page.after.label))) throw createError('INVALID_PARAMETER', { name: 'cursor' });
  const before = page.after ? Number(page.after.label) : undefined;
  // One more than the page: it tells whether there is a next page and what the page's oldest version changed.
  const rows = await store.versions(tenant, id!, { before, limit: page.limit ? page.limit + 1 : undefined });
  const shown = page.limit ? rows.slice(0, page.limit) : rows;
  // Each version links the lists it had when it was written (a deletion's, none), found for the page in one statement.
  const objects = await renderAllAt(call, store, shown.map((row) => row.row), (_, i) => shown[i].validFrom);
  const entries = shown.map((row, i) => entryOf(deps.model, objects[i], row, rows[i + 1]));
  const next = page.limit && rows.length > page.limit ? nextHref(ctx, { label: String(shown[shown.length - 1].version), id }) : undefined;
  ctx.body = halList('history', ctx.href, total, entries, next);
}

/** The technical key the path names: as given, or that of the object its label names now. */
async function technicalKey(call: Call, store: ObjectStore, segments: string[]): Promise<string | undefined> {
  if (UUID.test(segments[1])) return segments[1].toLowerCase();
  const found = await resolvePath(store, call.deps.model, call.scope, segments, { forRead: true });
  return found.kind === 'object' ? found.object.id : undefined;
}

function itemTypeOf(place: ListPlace): string {
  return place.kind === 'all' ? place.type.name : place.list.itemType;
}

function entryOf(model: Metamodel, object: Record<string, unknown>, row: VersionRow, previous: VersionRow | undefined) {
  return {
    version: row.version,
    operation: row.operation,
    validFrom: row.validFrom,
    validTo: row.validTo,
    changedBy: row.changedBy,
    changes: changesOf(model, row, previous),
    object,
  };
}

/** The properties whose values differ from the version before; for a create, those it set; for a delete, none. */
function changesOf(model: Metamodel, row: VersionRow, previous: VersionRow | undefined): string[] {
  if (row.operation === 'delete') return [];
  const secret = new Set((model.types[row.type]?.properties ?? []).filter((p) => p.writeOnly).map((p) => p.name));
  const shown = (name: string) => !BOOKKEEPING.has(name) && !secret.has(name);
  const now = row.row;
  if (row.operation === 'create' || !previous) {
    return Object.keys(now).filter((name) => shown(name) && now[name] !== null && now[name] !== undefined).sort();
  }
  const before = previous.row;
  const names = new Set([...Object.keys(now), ...Object.keys(before)]);
  return [...names].filter((name) => shown(name) && !isDeepStrictEqual(now[name] ?? null, before[name] ?? null)).sort();
}
