/**
 * The REST paths of access keys (decisions §2):
 *
 *   POST   /rest/<db>/users/<user>/accessKeys   {description?, expiresAt?}  → 201 {id, key, tenant, expiresAt, …}
 *   GET    /rest/<db>/users/<user>/accessKeys   → the user's keys (never the key or its digest)
 *   GET    /rest/<db>/accessKeys/<id>           → one key
 *   DELETE /rest/<db>/accessKeys/<id>           → 204, revoked at once
 *
 * `<user>` is the user's technical key (or its label in the login tenant).
 * Who may: administrators of the user's tenant, and system administrators.
 * A user may not manage its own keys unless it is one of them: a key is a
 * standing credential, and who holds one is the administrator's decision.
 * Only a system administrator may make keys for a login ID listed in
 * SERVICE_ADMIN_USER. Keys and users of another tenant answer 404, as
 * objects of other tenants do.
 */
import type { Context } from 'koa';
import { Ajv } from 'ajv';
import { createError, hasBody, isObjectOf, ObjectStore, oversized, requireLevel, UUID, violationsOf, wrongTypeKey, type Directory, type ObjectOf, type Principal, type Violation } from '../../runtime/host.ts';
import type { Knex } from 'knex';
import { AccessKeyStore, hashOf, newAccessKey, type KeyInfo } from './keys.ts';

export const MAX_DESCRIPTION = 1000;
/** The latest time a JavaScript Date can hold. */
const MAX_TIME = 8_640_000_000_000_000;

export const CREATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    description: { type: ['string', 'null'], maxLength: MAX_DESCRIPTION },
    expiresAt: { type: ['integer', 'null'], maximum: MAX_TIME },
  },
} as const;
const validateCreate = new Ajv({ allErrors: true, strict: false }).compile(CREATE_SCHEMA);

export interface KeysRestDeps {
  knex: Knex;
  keys: AccessKeyStore;
  directory: Directory;
  /** Told after a key was revoked, so that nothing remembers it. */
  revoked(): void;
}

interface Call {
  ctx: Context;
  principal: Principal;
  db: string;
  base: string;
}

/** Handles the path if it is an access-key path; false otherwise. */
export async function handleAccessKeys(deps: KeysRestDeps, call: Call, segments: string[]): Promise<boolean> {
  if (segments.length === 3 && segments[0] === 'users' && segments[2] === 'accessKeys') {
    await userKeys(deps, call, segments[1]);
    return true;
  }
  if (segments.length === 2 && segments[0] === 'accessKeys') {
    await oneKey(deps, call, segments[1]);
    return true;
  }
  return false;
}

function allow(ctx: Context, methods: string[]) {
  if (!methods.includes(ctx.method)) throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: methods.join(', ') });
}

/** Non-administrators learn nothing about users or keys, not even whether they exist. */
function requireAdministrator(principal: Principal) {
  if (!principal.systemAdmin) requireLevel(principal, 'ADMINISTRATOR');
}

const scopeOf = (principal: Principal) => (principal.systemAdmin ? null : principal.tenant!);

async function userOf(deps: KeysRestDeps, call: Call, key: string): Promise<ObjectOf<'User'>> {
  const store = new ObjectStore(deps.knex, call.db);
  const found = UUID.test(key)
    ? await store.byId(scopeOf(call.principal), key.toLowerCase())
    : await store.child(call.principal.tenant!, null, 'users', key);
  if (!found || !isObjectOf(found, 'User')) throw createError('OBJECT_NOT_FOUND', { type: 'User', key });
  return found;
}

function rendered(call: Call, info: KeyInfo) {
  return { ...info, _links: { self: { href: `${call.base}/rest/${call.db}/accessKeys/${info.id}` }, user: { href: `${call.base}/rest/${call.db}/users/${info.userId}` } } };
}

async function userKeys(deps: KeysRestDeps, call: Call, userKey: string) {
  const { ctx, principal } = call;
  allow(ctx, ['GET', 'HEAD', 'POST']);
  requireAdministrator(principal);
  const user = await userOf(deps, call, userKey);
  if (ctx.method !== 'POST') {
    const list = await deps.keys.ofUser(call.db, user.id);
    ctx.body = { total: list.length, _links: { self: { href: ctx.href } }, _embedded: { accessKeys: list.map((k) => rendered(call, k)) } };
    return;
  }
  const loginId = user.props.loginId;
  // A tenant administrator could otherwise make a user with an administrator's login ID and a key for it.
  if (!principal.systemAdmin && deps.directory.isSystemAdmin(loginId)) throw createError('FORBIDDEN');
  const body = payloadOf(ctx);
  const key = newAccessKey();
  const info = await deps.keys.create(call.db, {
    userId: user.id, tenant: user.tenant, hash: hashOf(key), description: body.description ?? null, expiresAt: body.expiresAt ?? null,
    createdBy: principal.loginId, systemAdmin: principal.systemAdmin && deps.directory.isSystemAdmin(loginId),
  }).catch((err) => {
    // The user was removed since it was read.
    throw (err as { code?: string }).code === '23503' ? createError('OBJECT_NOT_FOUND', { type: 'User', key: userKey }) : err;
  });
  ctx.status = 201;
  ctx.set('Location', `${call.base}/rest/${call.db}/accessKeys/${info.id}`);
  // The one response that holds the key: no cache may keep it.
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { id: info.id, key, tenant: info.tenant, expiresAt: info.expiresAt, description: info.description, userId: info.userId, dateCreated: info.dateCreated, createdBy: info.createdBy };
}

function payloadOf(ctx: Context): { description?: string | null; expiresAt?: number | null } {
  const body = hasBody(ctx) ? ctx.request.body : {};
  const invalid = (violations: Violation[]) => createError('INVALID_ACCESS_KEY', {}, violations);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid([{ path: '', key: 'mustBeObject' }]);
  const over = oversized(CREATE_SCHEMA, body);
  if (over || !validateCreate(body)) {
    throw invalid((over ? [over] : violationsOf(validateCreate.errors)).map((v) => ({ path: v.path, ...violationKey(v.keyword, v.params) })));
  }
  const { expiresAt } = body as { expiresAt?: number | null };
  if (typeof expiresAt === 'number' && expiresAt <= Date.now()) throw invalid([{ path: 'expiresAt', key: 'expiresInPast' }]);
  return body as { description?: string | null; expiresAt?: number | null };
}

function violationKey(keyword: string, params: Record<string, unknown>): Pick<Violation, 'key' | 'params'> {
  if (keyword === 'unknownProperty') return { key: 'unknownProperty' };
  if (keyword === 'type') return { key: wrongTypeKey(params.type) };
  if (keyword === 'maxLength') return { key: 'tooLong', params: { limit: params.limit } };
  return { key: 'invalidValue' };
}

async function oneKey(deps: KeysRestDeps, call: Call, id: string) {
  const { ctx, principal } = call;
  allow(ctx, ['GET', 'HEAD', 'DELETE']);
  requireAdministrator(principal);
  const scope = scopeOf(principal);
  const notFound = () => createError('ACCESS_KEY_NOT_FOUND', { id });
  if (!UUID.test(id)) throw notFound();
  if (ctx.method === 'DELETE') {
    if (!await deps.keys.revoke(call.db, id.toLowerCase(), scope)) throw notFound();
    deps.revoked();
    ctx.status = 204;
    return;
  }
  const info = await deps.keys.byId(call.db, id.toLowerCase(), scope);
  if (!info) throw notFound();
  ctx.body = rendered(call, info);
}
