/**
 * The profile interface (specification, "Profile interface"):
 * `PUT /api/<db>/profiles/<name>/upload` and
 * `GET /api/<db>/profiles/<name>/download`, per login tenant.
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type Router from '@koa/router';
import { createError, type Principal } from '../../runtime/host.ts';
import type { AnnotationCache } from './cache.ts';
import { TENANT_PROFILES, type StandardProfile } from './catalog.ts';
import { attachment } from './disposition.ts';
import { readSingleFile } from './multipart.ts';
import type { ProfileReader } from './reader.ts';
import { ProfileStore } from './store.ts';
import { replaceStatusLabels, type StatusCache } from './statuses.ts';

export interface ProfileRoutesOptions {
  knex: Knex;
  /** Reads uploaded files off the event loop, with a deadline. */
  reader: ProfileReader;
  standard: Record<string, StandardProfile>;
  cache: AnnotationCache;
  /** The statuses the tenants' profiles declare (statuses.ts). */
  statuses: StatusCache;
  /** Largest file accepted, in bytes. */
  limit: number;
  log: Logger;
}

/** A profile by name: own entries only (a name such as `constructor` or `__proto__` is no profile). */
const lookup = <T>(table: Record<string, T>, name: string): T | undefined => (Object.hasOwn(table, name) ? table[name] : undefined);

function callerOf(ctx: Context): { principal: Principal; db: string; tenant: string } {
  const principal = ctx.state.principal as Principal;
  // Every call below /api/<db> is signed in to a tenant of that database.
  return { principal, db: (ctx.state.db as { name: string }).name, tenant: principal.tenant! };
}

export function profileRoutes(api: Router, o: ProfileRoutesOptions) {
  api.put('/profiles/:name/upload', async (ctx) => {
    const { principal, db, tenant } = callerOf(ctx as unknown as Context);
    const name = ctx.params.name;
    if (lookup(o.standard, name)) throw createError('FORBIDDEN', {}, [{ path: 'name', key: 'profileStandardReadOnly', params: { name } }]);
    const profile = lookup(TENANT_PROFILES, name);
    if (!profile) throw createError('PROFILE_NOT_FOUND', { name }, [{ path: 'name', key: 'profileUnknown', params: { name } }]);
    const file = await readSingleFile(ctx as unknown as Context, o.limit, 'ADMINISTRATOR');
    const read = await o.reader.read(profile.kind, file.bytes);
    if (!read.ok) throw createError('BAD_REQUEST', {}, read.violations);
    const store = new ProfileStore(o.knex, db);
    // The never-uploaded profile is its initial document: uploading that changes nothing.
    const unchangedInitial = file.bytes.equals(profile.initial) && !(await store.read(tenant, name));
    const upload = { filename: file.filename ?? profile.filename, bytes: file.bytes, parsed: read.document };
    // The profile's statuses label the query views (`status_labels`): stored with it, in one transaction.
    const revision = unchangedInitial ? null : await o.knex.transaction(async (trx) => {
      const saved = await new ProfileStore(trx, db).save(tenant, name, upload, principal.loginId);
      if (saved !== null && profile.kind === 'profile') await replaceStatusLabels(trx, db, tenant, o.statuses.remember(db, tenant, saved, read.document));
      return saved;
    });
    if (revision !== null && profile.kind === 'annotations') o.cache.remember(db, tenant, revision, read.document);
    o.log.info({ db, tenant, profile: name, bytes: file.bytes.length, changed: revision !== null, revision }, 'profile uploaded');
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(revision !== null);
  });

  api.get('/profiles/:name/download', async (ctx) => {
    const { tenant, db } = callerOf(ctx as unknown as Context);
    const name = ctx.params.name;
    const standard = lookup(o.standard, name);
    const profile = lookup(TENANT_PROFILES, name);
    if (!standard && !profile) throw createError('PROFILE_NOT_FOUND', { name }, [{ path: 'name', key: 'profileUnknown', params: { name } }]);
    const stored = standard ? null : await new ProfileStore(o.knex, db).read(tenant, name);
    const { filename, bytes } = standard ?? stored ?? { filename: profile!.filename, bytes: profile!.initial };
    ctx.status = 200;
    ctx.set('Content-Disposition', attachment(filename));
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = bytes;
    ctx.set('Content-Type', 'application/yaml');
  });
}
