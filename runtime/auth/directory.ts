/**
 * Assigns a login ID to a user and a tenant: the specification's six
 * login-tenant rules and its rules of access to a tenant.
 */
import type { Knex } from 'knex';
import { createError } from '../errors.ts';
import { schemaOf } from '../storage/migrations.ts';
import type { AccessLevel, DatabaseInfo, Directory, LoginTenant, Principal, UserRecord } from './types.ts';
import { storedPropertyName } from '../storage/typed-objects.ts';

const [LOGIN_ID, ACCESS_LEVEL, DEFAULT_TENANT, SUBJECT_ID] = (['loginId', 'accessLevel', 'defaultTenant', 'subjectId'] as const).map((n) => storedPropertyName('User', n));

export function createDirectory(knex: Knex, adminUsers: string[]): Directory {
  const admins = new Set(adminUsers);

  async function usersOf(db: DatabaseInfo, loginId: string): Promise<UserRecord[]> {
    const s = `"${schemaOf(db.name)}"`;
    const r = await knex.raw(
      `select u.id, u.tenant, t.label as tenant_label, u.props->>'${ACCESS_LEVEL}' as access_level,
              coalesce((u.props->>'${DEFAULT_TENANT}')::boolean, false) as default_tenant, u.props->>'${SUBJECT_ID}' as subject_id
       from ${s}.objects u join ${s}.objects t on t.id = u.tenant and t.type = 'Tenant'
       where u.type = 'User' and u.props->>'${LOGIN_ID}' = ?
       order by t.label, u.id`,
      [loginId],
    );
    return r.rows.map((row: Record<string, unknown>) => ({
      id: row.id as string,
      tenant: row.tenant as string,
      tenantLabel: row.tenant_label as string,
      loginId,
      accessLevel: (row.access_level as AccessLevel) ?? 'READ_ONLY',
      defaultTenant: row.default_tenant as boolean,
      subjectId: (row.subject_id as string | null) ?? null,
    }));
  }

  async function tenantByLabel(db: DatabaseInfo, label: string): Promise<{ id: string; label: string } | null> {
    const r = await knex.raw(`select id, label from "${schemaOf(db.name)}".objects where type = 'Tenant' and label = ?`, [label]);
    return r.rows[0] ?? null;
  }

  async function tenantById(db: DatabaseInfo, id: string): Promise<{ id: string; label: string }> {
    const r = await knex.raw(`select id, label from "${schemaOf(db.name)}".objects where type = 'Tenant' and id = ?`, [id]);
    return r.rows[0];
  }

  async function findLoginTenant(db: DatabaseInfo, loginId: string, requestedTenant: string | undefined, defaultTenantName?: string): Promise<LoginTenant | null> {
    const systemAdmin = admins.has(loginId);
    const users = await usersOf(db, loginId);
    const result = (tenant: { id: string; label: string }): LoginTenant => {
      const inTenant = users.filter((u) => u.tenant === tenant.id);
      // Two users with one login ID in a tenant cannot be told apart: assigning either would be a guess.
      return { tenant: tenant.id, tenantLabel: tenant.label, user: inTenant.length === 1 ? inTenant[0] : null, systemAdmin, ...(inTenant.length > 1 ? { ambiguous: true } : {}) };
    };
    // Rule 1: the service-tenant header forces the tenant.
    if (requestedTenant !== undefined) {
      const tenant = await tenantByLabel(db, requestedTenant);
      return tenant ? result(tenant) : null;
    }
    // The per-method override replaces the database's default tenant.
    const overridden = defaultTenantName ? await tenantByLabel(db, defaultTenantName) : null;
    const defaultTenant = overridden ?? await tenantById(db, db.defaultTenant);
    // Rule 2: system administrators log into the default tenant.
    if (systemAdmin) return result(defaultTenant);
    // Rule 3: the tenant where the user is marked as logged in by default.
    const marked = users.find((u) => u.defaultTenant);
    if (marked) return result({ id: marked.tenant, label: marked.tenantLabel });
    // Rule 4: a user in the default tenant; rule 5: a user in another tenant; rule 6: the default tenant.
    if (users.some((u) => u.tenant === defaultTenant.id)) return result(defaultTenant);
    if (users.length) return result({ id: users[0].tenant, label: users[0].tenantLabel });
    return result(defaultTenant);
  }

  return {
    isSystemAdmin: (loginId) => admins.has(loginId),

    async loginTenant(db, loginId, requestedTenant, defaultTenantName) {
      const login = await findLoginTenant(db, loginId, requestedTenant, defaultTenantName);
      if (!login) throw createError('FORBIDDEN');
      return login;
    },

    findLoginTenant,

    principalOf(login, loginId, method): Principal | null {
      if (login.user) {
        return {
          loginId, tenant: login.tenant, tenantLabel: login.tenantLabel, userId: login.user.id, method,
          accessLevel: login.systemAdmin ? 'ADMINISTRATOR' : login.user.accessLevel,
          systemAdmin: login.systemAdmin,
        };
      }
      if (login.systemAdmin) {
        return { loginId, tenant: login.tenant, tenantLabel: login.tenantLabel, accessLevel: 'ADMINISTRATOR', systemAdmin: true, method };
      }
      return null;
    },
  };
}
