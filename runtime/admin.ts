/**
 * Service-wide administration (decisions §2): databases are created, listed
 * and removed by system administrators through /api/admin/databases.
 */
import type { Context, Next } from 'koa';
import { createError } from './errors.ts';
import type { Authenticator } from './auth/middleware.ts';
import type { Databases } from './storage/databases.ts';
import type { JsonBodyReader } from './body.ts';

/** `dropped`: tells what remembers users of a database (sign-ins) that they are gone. */
export function adminRoutes({ databases, authenticator, readJson, dropped }: { databases: Databases; authenticator: Authenticator; readJson: JsonBodyReader; dropped(db: string): void }) {
  return async function admin(ctx: Context, next: Next) {
    const match = /^\/api\/admin\/databases(?:\/([^/]+))?\/?$/.exec(ctx.path);
    if (!match) return next();
    const principal = await authenticator.authenticate(ctx, null);
    ctx.state.principal = principal;
    if (!principal.systemAdmin) throw createError('FORBIDDEN');
    const name = match[1] === undefined ? undefined : databaseName(match[1]);
    if (name === undefined && ctx.method === 'GET') {
      const list = await databases.list();
      ctx.body = list.map((d) => ({ name: d.name, dateCreated: d.createdAt, createdBy: d.createdBy }));
      return;
    }
    if (name === undefined && ctx.method === 'POST') {
      await readJson(ctx, 'ADMINISTRATOR');
      const body = ctx.request.body as { name?: unknown } | undefined;
      if (!body || typeof body !== 'object' || typeof body.name !== 'string') {
        throw createError('INVALID_DATABASE', {}, [{ path: 'name', key: 'mandatory' }]);
      }
      const created = await databases.create(body.name, principal.loginId);
      ctx.status = 201;
      ctx.set('Location', `${ctx.href.split('?')[0].replace(/\/$/, '')}/${created.name}`);
      ctx.body = { name: created.name };
      return;
    }
    if (name !== undefined && ctx.method === 'GET') {
      const db = await databases.get(name);
      if (!db) throw createError('DATABASE_NOT_FOUND', { name });
      ctx.body = { name: db.name };
      return;
    }
    if (name !== undefined && ctx.method === 'DELETE') {
      await databases.drop(name);
      dropped(name);
      ctx.status = 204;
      return;
    }
    throw createError('METHOD_NOT_ALLOWED');
  };
}

/** The database named in the path; a segment that does not decode names no database. */
function databaseName(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw createError('DATABASE_NOT_FOUND', { name: segment });
  }
}
