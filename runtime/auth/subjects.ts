/**
 * Subject-identifier pinning (specification, method 4; release 4.4): when
 * SERVICE_OIDC_JWT_SUB_ID is set, a method hands the provider's Subject
 * Identifier with the identity. A user without one gets it stored; every
 * later sign-in must bring the same one. A login ID that the provider
 * reassigns to another person therefore cannot take over the user.
 *
 * The identifier is stored as a new version of the user (User.subjectId,
 * read-only in the REST interface), so history and the version views show
 * when it was assigned. Two first sign-ins at once cannot both store theirs:
 * the row is locked and the value re-read before it is written. A deadlock
 * or lock timeout runs the transaction again (retry.ts), then answers 503.
 */
import type { Knex } from 'knex';
import { ObjectStore, plainObject } from '../storage/objects.ts';
import { schemaOf } from '../storage/migrations.ts';
import { retryingTransaction } from '../storage/retry.ts';
import type { UserRecord } from './types.ts';

export type SubjectCheck = 'match' | 'mismatch';

/** Checks the identifier against the user's, storing it first when the user has none. */
export async function checkSubject(knex: Knex, db: string, user: Pick<UserRecord, 'id' | 'tenant' | 'subjectId'>, subjectId: string, actor: string): Promise<SubjectCheck> {
  // The common case costs nothing: the directory read the pinned value with the user.
  if (user.subjectId) return user.subjectId === subjectId ? 'match' : 'mismatch';
  const pinned = await retryingTransaction(knex, async (trx) => {
    const locked = await trx.raw(`select props->>'subjectId' as subject_id from "${schemaOf(db)}".objects where id = ? and type = 'User' for update`, [user.id]);
    // The user was removed since the directory read it: nothing to pin to, and nobody to sign in as.
    if (!locked.rows.length) return null;
    const current = locked.rows[0].subject_id as string | null;
    if (current) return current;
    const store = new ObjectStore(trx, db);
    const existing = (await store.byId(user.tenant, user.id))!;
    const now = await store.now();
    const next = { ...existing, version: existing.version + 1, modifiedBy: actor, dateModified: now, props: { ...existing.props, subjectId } };
    await store.update([next], (o) => plainObject(o, db), actor);
    return subjectId;
  });
  return pinned === subjectId ? 'match' : 'mismatch';
}
