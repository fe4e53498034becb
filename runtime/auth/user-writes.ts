/**
 * What a write of users may change about where people sign in (decisions
 * 7.6). The login-tenant rules send a login ID to the tenant where its user
 * is marked `defaultTenant` (rule 3), or, without a user in the default
 * tenant, to another tenant that has one (rule 5). So a tenant administrator
 * who could mark a user, or give a user another tenant's login ID, could
 * make that tenant's people sign in to theirs: under pre-authentication
 * their next writes would land where the attacker reads them; with
 * passwords their own password would stop working. Hence, for every user
 * write (POST, PUT, PATCH, list writes):
 *
 * - only a system administrator may change `defaultTenant` (mark or unmark;
 *   absent counts as false), else 403 with a violation on it;
 * - only a system administrator may give a user (created or renamed) a
 *   login ID that a user of another tenant has, else 403 with a violation
 *   on `loginId`;
 * - a login ID is unique within its tenant, for everyone: 409 with a
 *   violation on `loginId`, on create and on rename alike.
 *
 * Writers of the same login ID wait for each other (an advisory lock per
 * database and login ID, the one CREATE rules take too), so two at once
 * cannot both find it free.
 */
import type { Knex } from 'knex';
import { createError, type Violation, type ViolationList } from '../errors.ts';
import { schemaOf } from '../storage/migrations.ts';
import type { StoredObject } from '../storage/objects.ts';
import { isObjectOf, storedPropertyName, type ObjectOf } from '../storage/typed-objects.ts';

const LOGIN_ID = storedPropertyName('User', 'loginId');
import { itemPath } from '../rest/write-violations.ts';
import type { Principal } from './types.ts';


/** One written object: as it will be, and as it was (absent when created); `index` places it in a list payload. */
export interface UserWrite {
  object: StoredObject;
  existing?: StoredObject;
  index?: number;
}

/** Waits until no other transaction writes users of these login IDs; released at the end of the transaction. */
export async function lockLoginIds(trx: Knex.Transaction, db: string, loginIds: string[]): Promise<void> {
  if (!loginIds.length) return;
  // One statement for a list of users; one order for everyone (unnest keeps the array's), so that two writers of
  // several login IDs cannot wait for each other.
  const keys = [...new Set(loginIds)].sort().map((loginId) => JSON.stringify(['login-id', db, loginId]));
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(?::text[]) as k', [keys]);
}

/**
 * Checks the users among the written objects: throws 403 for what only a
 * system administrator may do, and adds 409 violations (`loginIdTaken`) to
 * `violations`. `leaving`: technical keys of objects the same request removes.
 */
export async function checkUserWrites(trx: Knex.Transaction, db: string, principal: Principal, writes: UserWrite[], leaving: string[], violations: ViolationList): Promise<void> {
  // A write never changes an object's type, so what it was is a user too.
  const users = writes.filter((w): w is UserWrite & { object: User; existing?: User } => isObjectOf(w.object, 'User'));
  if (!users.length) return;
  const forbidden: Violation[] = [];
  const path = (w: UserWrite, name: string) => itemPath(w.index, name);
  const named = users.filter((w) => loginIdOf(w.object) !== (w.existing && loginIdOf(w.existing)));
  for (const w of users) {
    if (!principal.systemAdmin && marked(w.object) !== marked(w.existing)) forbidden.push({ path: path(w, 'defaultTenant'), key: 'defaultTenantBySystemAdministrator' });
  }
  await lockLoginIds(trx, db, named.map((w) => loginIdOf(w.object)));
  const holders = await otherHolders(trx, db, named.map((w) => loginIdOf(w.object)), [...leaving, ...users.map((w) => w.object.id)]);
  for (const w of named) {
    const others = holders.filter((h) => h.loginId === loginIdOf(w.object));
    const twin = users.some((u) => u !== w && u.object.tenant === w.object.tenant && loginIdOf(u.object) === loginIdOf(w.object));
    if (twin || others.some((h) => h.tenant === w.object.tenant)) violations.push({ path: path(w, 'loginId'), key: 'loginIdTaken' });
    else if (!principal.systemAdmin && others.length) forbidden.push({ path: path(w, 'loginId'), key: 'loginIdOfAnotherTenant' });
  }
  if (forbidden.length) throw createError('FORBIDDEN', {}, forbidden.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
}

type User = ObjectOf<'User'>;

function loginIdOf(user: User): string {
  return user.props.loginId;
}

function marked(user: User | undefined): boolean {
  return user?.props.defaultTenant === true;
}

/** Users of every tenant with these login IDs, other than the objects named in `excluded`. */
async function otherHolders(trx: Knex.Transaction, db: string, loginIds: string[], excluded: string[]): Promise<{ loginId: string; tenant: string }[]> {
  if (!loginIds.length) return [];
  const r = await trx.raw(
    `select props->>'${LOGIN_ID}' as login_id, tenant from "${schemaOf(db)}".objects
     where type = 'User' and props->>'${LOGIN_ID}' = any(?::text[]) and not (id = any(?::uuid[]))`,
    [loginIds, excluded],
  );
  return r.rows.map((row: { login_id: string; tenant: string }) => ({ loginId: row.login_id, tenant: row.tenant }));
}
