/**
 * What a CREATE access rule makes (specification, release 4.6: "automatic
 * creation of persons and users"): for an identity without a user in the
 * login tenant, a Person (given and family name from the identity) in a
 * top-level organization of the tenant, and a User with the rule's access
 * level that stands for it (`isPerson`). Both are made through the object
 * store, so they have history, in one transaction.
 *
 * The organization is the one the rule names by label (checked when the
 * rules are written), else `Users`; either is made at the top level when the
 * tenant has none (a named one may have been deleted since).
 *
 * Two first sign-ins of one login ID wait for each other on the login ID's
 * lock (the one REST writes of users take too), and the second finds the
 * first's user; two sign-ins that both need the organization wait on its
 * lock, so one of them makes it. A REST write that makes the organization at
 * the same moment ends the transaction with a clash, and it is run again.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { ObjectStore, plainObject, type StoredObject } from '../storage/objects.ts';
import { schemaOf } from '../storage/migrations.ts';
import { retryingTransaction } from '../storage/retry.ts';
import { isObjectOf, storedPropertyName, type ObjectOf, type TypeWithProperties } from '../storage/typed-objects.ts';
import { lockLoginIds } from './user-writes.ts';
import type { AccessLevel, DatabaseInfo, ExternalIdentity } from './types.ts';


/** The organization persons made by CREATE rules go to when the rule names none. */
export const DEFAULT_ORGANIZATION = 'Users';
/** What the generated validators allow in a STRING: what is made here can be written back. */
const MAX_TEXT = 1000;

export interface CreateAction {
  accessLevel: AccessLevel;
  /** Label of a top-level organization of the tenant. */
  organization?: string;
}

export async function createRuleUser(knex: Knex, db: DatabaseInfo, tenant: string, identity: ExternalIdentity, action: CreateAction): Promise<{ user: ObjectOf<'User'>; created: boolean }> {
  return retryingTransaction(knex, (trx) => createInTransaction(trx, db.name, tenant, identity, action));
}

async function createInTransaction(trx: Knex.Transaction, db: string, tenant: string, identity: ExternalIdentity, action: CreateAction) {
  await lockLoginIds(trx, db, [identity.loginId]);
  const store = new ObjectStore(trx, db);
  const existing = await trx.raw(`select id from "${schemaOf(db)}".objects where type = 'User' and tenant = ? and props->>'${storedPropertyName('User', 'loginId')}' = ? order by id`, [tenant, identity.loginId]);
  const found = existing.rows.length ? await store.byId(tenant, existing.rows[0].id) : null;
  if (found && isObjectOf(found, 'User')) return { user: found, created: false };
  const made = { by: identity.loginId, at: await store.now() };
  const organization = await organizationOf(trx, store, tenant, action.organization ?? DEFAULT_ORGANIZATION, made);
  const person = personOf(identity, organization, made);
  const user = userOf(identity, tenant, action.accessLevel, person.id, made);
  // Other objects may hold the labels (users and persons are labelled freely): then the technical key tells them apart.
  for (const i of await store.labelClashes([person, user], [])) {
    const o = [person, user][i];
    o.label = `${o.label.slice(0, MAX_TEXT - 11)} (${o.id.slice(0, 8)})`;
  }
  await store.insert([person, user], (o) => plainObject(o, db), identity.loginId);
  return { user, created: true };
}

interface Made {
  by: string;
  at: number;
}

/** The tenant's top-level organization of that label, made when there is none. */
async function organizationOf(trx: Knex.Transaction, store: ObjectStore, tenant: string, label: string, made: Made): Promise<StoredObject> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [JSON.stringify(['organization', store.db, tenant, label])]);
  const found = await store.child(tenant, null, 'organizations', label);
  if (found) return found;
  const id = randomUUID();
  const organization = newObject({ id, type: 'Organization', tenant, parentId: null, list: 'organizations', label, modelId: id, props: {} }, made);
  await store.insert([organization], (o) => plainObject(o, store.db), made.by);
  return organization;
}

function personOf(identity: ExternalIdentity, organization: StoredObject, made: Made): ObjectOf<'Person'> {
  // givenName is mandatory for a person: the given name, else the whole name, else the login ID.
  const givenName = capped(identity.givenName || identity.commonName || identity.loginId);
  const familyName = identity.familyName ? capped(identity.familyName) : undefined;
  return newObject<'Person'>({
    id: randomUUID(), type: 'Person', tenant: organization.tenant, parentId: organization.id, list: 'persons',
    label: capped([givenName, familyName].filter(Boolean).join(' ')), modelId: organization.modelId ?? organization.id,
    props: { givenName, ...(familyName ? { familyName } : {}), agentOf: organization.id },
  }, made);
}

function userOf(identity: ExternalIdentity, tenant: string, accessLevel: AccessLevel, personId: string, made: Made): ObjectOf<'User'> {
  const id = randomUUID();
  const props: ObjectOf<'User'>['props'] = { loginId: identity.loginId, accessLevel, isPerson: personId };
  if (identity.givenName) props.givenName = capped(identity.givenName);
  if (identity.familyName) props.familyName = capped(identity.familyName);
  if (identity.subjectId) props.subjectId = identity.subjectId;
  // The name the identity gives (SERVICE_JNDI_COMMON_NAME, SERVICE_OIDC_JWT_USER_NAME …) is the user's title.
  const title = identity.commonName || [identity.givenName, identity.familyName].filter(Boolean).join(' ') || null;
  return newObject<'User'>({ id, type: 'User', tenant, parentId: null, list: 'users', label: identity.loginId, title: title && capped(title), modelId: id, props }, made);
}

type NewFields<T extends TypeWithProperties> = Pick<ObjectOf<T>, 'id' | 'type' | 'tenant' | 'parentId' | 'list' | 'label' | 'modelId' | 'props'> & { title?: string | null };

/** A new object of a type, its properties as the generated models say. */
function newObject<T extends TypeWithProperties>(fields: NewFields<T>, made: Made): ObjectOf<T> {
  return {
    title: null, description: null, status: 'WORKING', version: 1, custom: {},
    createdBy: made.by, dateCreated: made.at, modifiedBy: made.by, dateModified: made.at, ...fields,
  };
}

function capped(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}
