/**
 * Deleting a tenant (DELETE /rest/<db>/tenants/<label or technical key>;
 * the handlers let only system administrators write tenants). A tenant that
 * holds nothing but its users may go, unless it is the database's default
 * tenant (there is always exactly one). Its users go with it, and with them,
 * by the foreign keys of their tables, their passwords and access keys; the
 * tenant's access rules, profiles and query jobs go the same way. All in the
 * request's transaction, which first takes a share lock on the database's
 * objects: writes that are under way finish first, and no object can land in
 * the tenant between the check and the delete.
 */
import type { Knex } from 'knex';
import { createError } from '../errors.ts';
import { schemaOf } from '../storage/migrations.ts';
import type { ObjectStore, StoredObject } from '../storage/objects.ts';

export async function removeTenant(trx: Knex.Transaction, store: ObjectStore, tenant: StoredObject, actor: string): Promise<void> {
  const s = `"${schemaOf(store.db)}"`;
  await trx.raw(`lock table ${s}.objects in share mode`);
  const database = await trx.raw('select default_tenant from service.databases where name = ?', [store.db]);
  if (database.rows[0]?.default_tenant === tenant.id) throw createError('TENANT_IS_DEFAULT', { label: tenant.label });
  const held = await trx.raw(`select exists (select 1 from ${s}.objects where tenant = ? and type not in ('Tenant', 'User')) as held`, [tenant.id]);
  if (held.rows[0].held) throw createError('TENANT_NOT_EMPTY', { label: tenant.label });
  const users = await store.ofTypes(tenant.id, ['User']);
  await store.remove([...users, tenant], actor);
}
