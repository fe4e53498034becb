/**
 * Named databases: each a schema with its own tables, views and tenants.
 * Creating `meta` fills it with the standard metamodel.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createError } from '../errors.ts';
import type { DatabaseInfo } from '../auth/types.ts';
import { DATABASE_NAME, migrateDatabase, PluginMigrations, schemaOf } from './migrations.ts';
import { applyIndexes, applyViews } from './views.ts';
import { ObjectStore, plainObject, type StoredObject } from './objects.ts';

export { DATABASE_NAME };

export interface DatabaseHooks {
  /** Runs inside the creating transaction, after the tables and the default tenant exist. */
  afterCreate(trx: Knex.Transaction, db: string, defaultTenant: string, actor: string): Promise<void>;
  /** Runs after the generated views of a database were (re)created, e.g. to grant them to the query role. */
  afterViews?(q: Knex | Knex.Transaction, db: string): Promise<void>;
  /** Tables that plugins keep in every database. */
  migrations?: PluginMigrations;
  /**
   * The label of the default tenant a new database gets (SERVICE_DEFAULT_TENANT,
   * decisions §7.6; `Default` when not given). It applies at creation only:
   * the default tenant is found by the technical key `service.databases`
   * keeps, so a database created under another setting keeps its tenant and
   * label (an administrator may rename the tenant like any other).
   */
  defaultTenantLabel?: string;
}

/** What the generator emits for every database's schema. */
export interface GeneratedSql {
  views: string;
  indexes: string;
}

export class Databases {
  private readonly cache = new Map<string, { info: DatabaseInfo | null; until: number }>();

  private readonly viewsHash: string;

  /** `sql`: the generated view definitions and indexes every database gets. */
  constructor(private readonly knex: Knex, private readonly hooks: DatabaseHooks, private readonly sql: GeneratedSql, private readonly cacheMs = 2000) {
    // One hash over both: a metamodel change that alters either applies both again (each is idempotent).
    this.viewsHash = createHash('sha256').update(sql.views).update('\0').update(sql.indexes).digest('hex');
  }

  /** The database, or null; remembered briefly because every request asks. */
  async get(name: string): Promise<DatabaseInfo | null> {
    if (!DATABASE_NAME.test(name)) return null;
    const hit = this.cache.get(name);
    if (hit && hit.until > Date.now()) return hit.info;
    const r = await this.knex.raw(`select name, default_tenant from service.databases where name = ?`, [name]);
    const info = r.rows[0] ? { name, defaultTenant: r.rows[0].default_tenant as string } : null;
    this.cache.set(name, { info, until: Date.now() + this.cacheMs });
    return info;
  }

  async list(): Promise<{ name: string; createdAt: number; createdBy: string | null }[]> {
    const r = await this.knex.raw(`select name, (extract(epoch from created_at) * 1000)::bigint as created_at, created_by from service.databases order by name`);
    return r.rows.map((x: Record<string, unknown>) => ({ name: x.name as string, createdAt: Number(x.created_at), createdBy: x.created_by as string | null }));
  }

  async create(name: string, actor: string): Promise<DatabaseInfo> {
    if (!DATABASE_NAME.test(name)) {
      throw createError('INVALID_DATABASE', {}, [{ path: 'name', key: 'databaseNameInvalid' }]);
    }
    const defaultTenant = randomUUID();
    await this.knex.transaction(async (trx) => {
      const inserted = await trx.raw(
        `insert into service.databases (name, created_by, default_tenant) values (?, ?, ?) on conflict (name) do nothing returning name`,
        [name, actor, defaultTenant],
      );
      if (!inserted.rows.length) throw createError('DATABASE_EXISTS', { name });
      // A schema of that name without a row can only be someone else's: never drop it here.
      const taken = await trx.raw(`select 1 from information_schema.schemata where schema_name = ?`, [schemaOf(name)]);
      if (taken.rows.length) throw createError('DATABASE_EXISTS', { name });
      await migrateDatabase(trx, name, this.hooks.migrations);
      await createTenant(new ObjectStore(trx, name), name, defaultTenant, this.hooks.defaultTenantLabel ?? 'Default', actor);
      await this.updateViews(trx, name);
      await this.hooks.afterCreate(trx, name, defaultTenant, actor);
    });
    this.cache.delete(name);
    return { name, defaultTenant };
  }

  async drop(name: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const r = await trx.raw(`delete from service.databases where name = ? returning name`, [name]);
      if (!r.rows.length) throw createError('DATABASE_NOT_FOUND', { name });
      await trx.raw(`drop schema if exists "${schemaOf(name)}" cascade`);
    });
    this.cache.delete(name);
  }

  /** Brings every database's tables and views up to date at start; views only where the generated ones changed. */
  async upgradeAll(): Promise<void> {
    const r = await this.knex.raw(`select name, views_hash from service.databases order by name`);
    for (const { name, views_hash: viewsHash } of r.rows as { name: string; views_hash: string | null }[]) {
      await migrateDatabase(this.knex, name, this.hooks.migrations);
      if (viewsHash !== this.viewsHash) await this.updateViews(this.knex, name);
      else await this.hooks.afterViews?.(this.knex, name);
    }
  }

  private async updateViews(q: Knex | Knex.Transaction, name: string) {
    await applyIndexes(q, name, this.sql.indexes);
    await applyViews(q, name, this.sql.views);
    await this.hooks.afterViews?.(q, name);
    await q.raw(`update service.databases set views_hash = ? where name = ?`, [this.viewsHash, name]);
  }
}

export async function createTenant(store: ObjectStore, db: string, id: string, label: string, actor: string): Promise<StoredObject> {
  const now = await store.now();
  const tenant: StoredObject = {
    id, type: 'Tenant', tenant: id, parentId: null, list: 'tenants', label, title: null, description: null,
    status: 'WORKING', modelId: id, version: 1, createdBy: actor, dateCreated: now, modifiedBy: actor,
    dateModified: now, props: {}, custom: {},
  };
  await store.write([tenant], (o) => plainObject(o, db), actor);
  return tenant;
}
