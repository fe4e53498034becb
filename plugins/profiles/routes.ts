/**
 * The profile interface (specification, "Profile interface"; decisions §7.5),
 * per login tenant:
 * `GET /api/<db>/profiles` (the names the caller can see),
 * `POST /api/<db>/profiles` (create a named profile),
 * `GET /api/<db>/profiles/<name>` (what it is),
 * `DELETE /api/<db>/profiles/<name>` (a named one),
 * `PUT /api/<db>/profiles/<name>/upload` and
 * `GET /api/<db>/profiles/<name>/download`.
 * The tenant's annotations answer to `annotations` and to the tenant's label.
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type Router from '@koa/router';
import { createError, requireLevel, type JsonBodyReader, type Principal, type Violation, attachment, readSingleFile } from '../../runtime/host.ts';
import type { AnnotationCache } from './cache.ts';
import { namedInitial, PROFILE_NAME, reservedName, TENANT_PROFILES, type StandardProfile, type TenantProfile } from './catalog.ts';
import type { ProfileReader } from './reader.ts';
import { ProfileStore, type ProfileEntry } from './store.ts';
import { replaceStatusLabels, type StatusCache } from './statuses.ts';

/** How this interface words and answers a refused upload (runtime/multipart.ts). */
const UPLOAD_RULES = { messages: 'profile', restStatuses: false };

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
  jsonBody: JsonBodyReader;
}

/** A profile by name: own entries only (a name such as `constructor` or `__proto__` is no profile). */
const lookup = <T>(table: Record<string, T>, name: string): T | undefined => (Object.hasOwn(table, name) ? table[name] : undefined);

function callerOf(ctx: Context): { principal: Principal; db: string; tenant: string } {
  const principal = ctx.state.principal as Principal;
  // Every call below /api/<db> is signed in to a tenant of that database.
  return { principal, db: (ctx.state.db as { name: string }).name, tenant: principal.tenant! };
}

/** Create, delete and upload: administrators of the tenant (or a system administrator signed in to it). */
function requireAdministrator(principal: Principal) {
  if (!principal.systemAdmin) requireLevel(principal, 'ADMINISTRATOR');
}

/** What a name stands for in the caller's tenant. */
type Target =
  | { origin: 'standard'; name: string; profile: StandardProfile }
  /** `name`: the stored name (`annotations` also for the tenant's label); `asked`: the name in the request. */
  | { origin: 'tenant'; name: string; asked: string; profile: TenantProfile }
  | { origin: 'named'; name: string; profile: TenantProfile };

const notFound = (name: string) => createError('PROFILE_NOT_FOUND', { name }, [{ path: 'name', key: 'profileUnknown', params: { name } }]);

async function targetOf(store: ProfileStore, tenant: string, name: string, standard: Record<string, StandardProfile>): Promise<Target | null> {
  const s = lookup(standard, name);
  if (s) return { origin: 'standard', name, profile: s };
  const t = lookup(TENANT_PROFILES, name);
  if (t) return { origin: 'tenant', name, asked: name, profile: t };
  // The tenant's label names its annotations (as the original product names them); it wins over a named profile of that name.
  if (name === await store.tenantLabel(tenant)) return { origin: 'tenant', name: 'annotations', asked: name, profile: TENANT_PROFILES.annotations };
  if (await store.read(tenant, name)) return { origin: 'named', name, profile: namedInitial(name) };
  return null;
}

/** A profile as the listing and the creation describe it. */
function describe(name: string, origin: Target['origin'], kind: string, filename: string, stored: ProfileEntry | null | undefined, aliasOf?: string) {
  return {
    name, kind, origin, ...(aliasOf ? { aliasOf } : {}), filename: stored?.filename ?? filename,
    modifiedBy: stored?.uploadedBy ?? null, dateModified: stored?.uploadedAt ?? null,
  };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

export function profileRoutes(api: Router, o: ProfileRoutesOptions) {
  api.get('/profiles', async (ctx) => {
    const { tenant, db } = callerOf(ctx as unknown as Context);
    const store = new ProfileStore(o.knex, db);
    const stored = await store.list(tenant);
    const byName = new Map(stored.map((p) => [p.name, p]));
    const label = await store.tenantLabel(tenant);
    ctx.body = [
      ...Object.entries(o.standard).map(([name, s]) => describe(name, 'standard', s.kind, s.filename, null)),
      ...Object.entries(TENANT_PROFILES).map(([name, t]) => describe(name, 'tenant', t.kind, t.filename, byName.get(name))),
      ...(label !== null ? [describe(label, 'tenant', 'annotations', TENANT_PROFILES.annotations.filename, byName.get('annotations'), 'annotations')] : []),
      ...stored.filter((p) => !lookup(TENANT_PROFILES, p.name) && p.name !== label).map((p) => describe(p.name, 'named', 'annotations', p.filename, p)),
    ];
    ctx.set('Cache-Control', 'no-cache');
  });

  api.get('/profiles/:name', async (ctx) => {
    const { tenant, db } = callerOf(ctx as unknown as Context);
    const store = new ProfileStore(o.knex, db);
    const target = await targetOf(store, tenant, ctx.params.name, o.standard);
    if (!target) throw notFound(ctx.params.name);
    const stored = target.origin === 'standard' ? null : (await store.list(tenant)).find((p) => p.name === target.name);
    ctx.body = target.origin === 'tenant'
      ? describe(target.asked, 'tenant', target.profile.kind, target.profile.filename, stored, target.asked !== target.name ? target.name : undefined)
      : describe(target.name, target.origin, target.profile.kind, target.profile.filename, stored);
    ctx.set('Cache-Control', 'no-cache');
  });

  api.post('/profiles', async (ctx) => {
    const { principal, db, tenant } = callerOf(ctx as unknown as Context);
    await o.jsonBody(ctx as unknown as Context, 'ADMINISTRATOR');
    requireAdministrator(principal);
    const body = ctx.request.body;
    if (!isPlainObject(body)) throw createError('INVALID_PAYLOAD', {}, [{ path: '', key: 'mustBeObject' }]);
    const violations: Violation[] = Object.keys(body).filter((k) => k !== 'name').map((k) => ({ path: k, key: 'unknownProperty' }));
    const name = body.name;
    if (name === undefined || name === null) violations.push({ path: 'name', key: 'mandatory' });
    else if (typeof name !== 'string' || !PROFILE_NAME.test(name)) violations.push({ path: 'name', key: 'profileInvalidProfileName' });
    if (violations.length) throw createError('INVALID_PAYLOAD', {}, violations);
    const store = new ProfileStore(o.knex, db);
    const given = name as string;
    if (reservedName(given, await store.tenantLabel(tenant))) throw createError('CONFLICT', {}, [{ path: 'name', key: 'profileNameReserved', params: { name: given } }]);
    const named = namedInitial(given);
    const created = await store.create(tenant, given, { filename: named.filename, bytes: named.initial, parsed: {} }, principal.loginId);
    if (!created) throw createError('CONFLICT', {}, [{ path: 'name', key: 'profileExists', params: { name: given } }]);
    o.log.info({ db, tenant, profile: given }, 'profile created');
    ctx.status = 201;
    ctx.set('Location', `/api/${encodeURIComponent(db)}/profiles/${encodeURIComponent(given)}`);
    ctx.body = describe(given, 'named', 'annotations', named.filename, created);
  });

  api.delete('/profiles/:name', async (ctx) => {
    const { principal, db, tenant } = callerOf(ctx as unknown as Context);
    requireAdministrator(principal);
    const name = ctx.params.name;
    const target = await targetOf(new ProfileStore(o.knex, db), tenant, name, o.standard);
    if (!target) throw notFound(name);
    if (target.origin === 'standard') throw createError('FORBIDDEN', {}, [{ path: 'name', key: 'profileStandardReadOnly', params: { name } }]);
    if (target.origin === 'tenant') throw createError('FORBIDDEN', {}, [{ path: 'name', key: 'profileTenantNotDeletable', params: { name } }]);
    await o.knex.transaction(async (trx) => {
      const store = new ProfileStore(trx, db);
      if (!(await store.lock(tenant, name))) throw notFound(name);
      const schemes = await store.schemesNaming(tenant, name);
      if (schemes.length) throw createError('CONFLICT', {}, [{ path: 'name', key: 'profileInUse', params: { name, schemes: schemes.join(', ') } }]);
      await store.remove(tenant, name);
    });
    o.cache.forgetProfile(db, tenant, name);
    o.log.info({ db, tenant, profile: name }, 'profile deleted');
    ctx.status = 204;
  });

  api.put('/profiles/:name/upload', async (ctx) => {
    const { principal, db, tenant } = callerOf(ctx as unknown as Context);
    const name = ctx.params.name;
    const target = await targetOf(new ProfileStore(o.knex, db), tenant, name, o.standard);
    if (target?.origin === 'standard') throw createError('FORBIDDEN', {}, [{ path: 'name', key: 'profileStandardReadOnly', params: { name } }]);
    if (!target) throw notFound(name);
    const profile = target.profile;
    const file = await readSingleFile(ctx as unknown as Context, o.limit, 'ADMINISTRATOR', UPLOAD_RULES);
    const read = await o.reader.read(profile.kind, file.bytes);
    if (!read.ok) throw createError('BAD_REQUEST', {}, read.violations);
    const store = new ProfileStore(o.knex, db);
    // The never-uploaded profile is its initial document: uploading that changes nothing.
    const unchangedInitial = target.origin === 'tenant' && file.bytes.equals(profile.initial) && !(await store.read(tenant, target.name));
    const upload = { filename: file.filename ?? profile.filename, bytes: file.bytes, parsed: read.document };
    // The profile's statuses label the query views (`status_labels`): stored with it, in one transaction.
    const revision = unchangedInitial ? null : await o.knex.transaction(async (trx) => {
      const inTrx = new ProfileStore(trx, db);
      // A named profile deleted meanwhile is not made again by its upload.
      if (target.origin === 'named' && !(await inTrx.lock(tenant, target.name))) throw notFound(name);
      const saved = await inTrx.save(tenant, target.name, upload, principal.loginId);
      if (saved !== null && profile.kind === 'profile') await replaceStatusLabels(trx, db, tenant, o.statuses.remember(db, tenant, saved, read.document));
      return saved;
    });
    if (revision !== null && profile.kind === 'annotations') o.cache.remember(db, tenant, target.name, revision, read.document);
    o.log.info({ db, tenant, profile: target.name, bytes: file.bytes.length, changed: revision !== null, revision }, 'profile uploaded');
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(revision !== null);
  });

  api.get('/profiles/:name/download', async (ctx) => {
    const { tenant, db } = callerOf(ctx as unknown as Context);
    const name = ctx.params.name;
    const store = new ProfileStore(o.knex, db);
    const target = await targetOf(store, tenant, name, o.standard);
    if (!target) throw notFound(name);
    const stored = target.origin === 'standard' ? null : await store.read(tenant, target.name);
    const { filename, bytes } = target.origin === 'standard' ? target.profile : stored ?? { filename: target.profile.filename, bytes: target.profile.initial };
    ctx.status = 200;
    ctx.set('Content-Disposition', attachment(filename));
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = bytes;
    ctx.set('Content-Type', 'application/yaml');
  });
}
