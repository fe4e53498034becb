/**
 * The two openings of a database's interfaces: `/rest/<db>/…` (the generic
 * metadata objects, then the plugins' REST extensions) and `/api/<db>/…`
 * (the plugins' interfaces: query, profiles). Both find the database and
 * authenticate the caller the same way, in `openDatabase`; what follows
 * differs.
 */
import type { Context, Middleware } from 'koa';
import type Router from '@koa/router';
import { createError } from './errors.ts';
import { splitPath } from './rest/paths.ts';
import { handleRest, type RestDeps } from './rest/handlers.ts';
import { handleSearch, isSearchPath } from './rest/search.ts';
import type { Databases } from './storage/databases.ts';
import type { Authenticator } from './auth/middleware.ts';
import type { DatabaseInfo } from './auth/types.ts';
import type { JsonBodyReader } from './body.ts';
import type { RestExtension } from './plugins.ts';

interface Opening {
  databases: Databases;
  authenticator: Authenticator;
}

/**
 * Finds the database named after `prefix` and authenticates the caller
 * against it (`ctx.state.principal`). Only the database name is read before
 * authentication; the rest of the path (returned, undefined when there is
 * none) is judged after it. An unknown database is told only to a system
 * administrator; anyone else cannot tell it from a wrong password.
 */
async function openDatabase(ctx: Context, prefix: string, { databases, authenticator }: Opening): Promise<{ db: DatabaseInfo; rest: string | undefined }> {
  const path = ctx.path.slice(prefix.length);
  const slash = path.indexOf('/');
  const [dbName] = splitPath(slash < 0 ? path : path.slice(0, slash));
  const db = await databases.get(dbName);
  if (!db) {
    ctx.state.principal = await authenticator.authenticate(ctx, null);
    throw createError('DATABASE_NOT_FOUND', { name: dbName });
  }
  ctx.state.principal = await authenticator.authenticate(ctx, db);
  return { db, rest: slash < 0 ? undefined : path.slice(slash + 1) };
}

export function restOpening(opening: Opening & {
  deps: RestDeps;
  extensions: RestExtension[];
  readJson: JsonBodyReader;
  base: (ctx: Context) => string;
}): Middleware {
  const { deps, extensions, readJson, base } = opening;
  return async function rest(ctx, next) {
    if (!ctx.path.startsWith('/rest/')) return next();
    const { db, rest } = await openDatabase(ctx, '/rest/', opening);
    if (!rest) throw createError('NOT_FOUND');
    const segments = splitPath(rest);
    const principal = ctx.state.principal;
    const writes = ctx.method === 'POST' || ctx.method === 'PUT' || ctx.method === 'PATCH';
    // Nothing in /rest can be written below EDITOR: a READ_ONLY caller's body is refused unread.
    if (writes) await readJson(ctx, 'EDITOR');
    if (isSearchPath(deps.model, segments)) {
      return handleSearch({ ctx, model: deps.model, knex: deps.knex, principal, links: { base: base(ctx), db: db.name } });
    }
    for (const extension of extensions) {
      if (await extension({ ctx, principal, db: db.name, segments, base: base(ctx) })) return;
    }
    // Writes of objects only: what an extension serves (access keys, rules) is no object the checks see.
    if (writes) for (const observe of deps.writeObservers ?? []) await observe({ request: ctx, method: ctx.method as 'POST' | 'PUT' | 'PATCH', principal, db: db.name, body: ctx.request.body });
    return handleRest(ctx, deps, principal, db.name, segments, { base: base(ctx), db: db.name });
  };
}

/** The plugins' interfaces of a database: their routes see `ctx.state.principal` and `ctx.state.db`. */
export function apiOpening(opening: Opening & { router: Router }): Middleware {
  const routes = opening.router.routes();
  return async function api(ctx, next) {
    if (!ctx.path.startsWith('/api/')) return next();
    const { db } = await openDatabase(ctx, '/api/', opening);
    ctx.state.db = db;
    await routes(ctx as never, async () => {
      throw createError('NOT_FOUND');
    });
  };
}
