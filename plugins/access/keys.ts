/**
 * Access keys as stored: 32 random bytes, Base64URL-encoded behind a prefix
 * that secret scanners and people recognize (`mdsk_`). Only the key's
 * SHA-256 is kept. A salt or a slow hash (as for passwords) would add
 * nothing: a key has 256 bits of entropy, so its digest cannot be reversed
 * by guessing, and an unsalted digest can be found by index in one query.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { schemaOf, storedPropertyName, type AccessLevel } from '../../runtime/host.ts';

export const KEY_PREFIX = 'mdsk_';
const KEY_PATTERN = /^mdsk_[A-Za-z0-9_-]{43}$/;

export function newAccessKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Whether the text has the form of a key: anything else cannot be one and needs no lookup. */
export function looksLikeKey(text: string): boolean {
  return KEY_PATTERN.test(text);
}

export function hashOf(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two digests in constant time. */
export function sameHash(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a, 'hex'), Buffer.from(b, 'hex')];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A valid key with what the sign-in needs: its user, tenant and last use. */
export interface KeyOwner {
  id: string;
  hash: string;
  userId: string;
  loginId: string;
  accessLevel: AccessLevel;
  tenant: string;
  tenantLabel: string;
  /** Made by a system administrator for a system administrator's login ID. */
  systemAdmin: boolean;
  lastUsed: number | null;
  expiresAt: number | null;
}

/** What the interface shows of a key: never the key, never its digest. */
export interface KeyInfo {
  id: string;
  userId: string;
  tenant: string;
  description: string | null;
  dateCreated: number;
  createdBy: string | null;
  expiresAt: number | null;
  lastUsed: number | null;
  expired: boolean;
}

interface PreparingConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

const ms = (column: string) => `round(extract(epoch from ${column}) * 1000)::bigint`;
const INFO_COLUMNS = `id, user_id, tenant, description, ${ms('created_at')} as date_created, created_by,
  ${ms('expires_at')} as expires_at, ${ms('last_used_at')} as last_used, coalesce(expires_at <= now(), false) as expired`;

function infoOf(r: Record<string, unknown>): KeyInfo {
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: r.id as string, userId: r.user_id as string, tenant: r.tenant as string, description: (r.description as string | null) ?? null,
    dateCreated: Number(r.date_created), createdBy: (r.created_by as string | null) ?? null,
    expiresAt: num(r.expires_at), lastUsed: num(r.last_used), expired: r.expired as boolean,
  };
}

export class AccessKeyStore {
  constructor(private readonly knex: Knex) {}

  /**
   * The owner of a valid key (not revoked, not expired, its user and tenant
   * still there), found by digest. A named prepared statement: it runs on
   * every request that carries a key.
   */
  async owner(db: string, hash: string): Promise<KeyOwner | null> {
    const s = `"${schemaOf(db)}"`;
    const [loginId, accessLevel] = [storedPropertyName('User', 'loginId'), storedPropertyName('User', 'accessLevel')];
    const text = `select k.id, k.hash, k.user_id, k.tenant, k.system_admin, t.label as tenant_label,
        u.props->>'${loginId}' as login_id, u.props->>'${accessLevel}' as access_level, ${ms('k.last_used_at')} as last_used,
        ${ms('k.expires_at')} as expires_at
      from ${s}.access_keys k
      join ${s}.objects u on u.id = k.user_id and u.type = 'User' and u.tenant = k.tenant
      join ${s}.objects t on t.id = k.tenant and t.type = 'Tenant'
      where k.hash = $1 and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`;
    const r = await this.prepared(text, [hash]);
    const row = r.rows[0];
    if (!row || typeof row.login_id !== 'string') return null;
    return {
      id: row.id as string, hash: row.hash as string, userId: row.user_id as string, loginId: row.login_id,
      accessLevel: ((row.access_level as AccessLevel | null) ?? 'READ_ONLY'), tenant: row.tenant as string,
      tenantLabel: row.tenant_label as string, systemAdmin: row.system_admin as boolean,
      lastUsed: row.last_used === null ? null : Number(row.last_used),
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    };
  }

  /** Records a use, unless another request (of any instance) did within the interval: reads stay reads. */
  async touch(db: string, id: string, intervalMs: number): Promise<void> {
    await this.knex.raw(
      `update "${schemaOf(db)}".access_keys set last_used_at = now()
       where id = ? and (last_used_at is null or last_used_at < now() - make_interval(secs => ?))`,
      [id, intervalMs / 1000],
    );
  }

  async create(db: string, k: { userId: string; tenant: string; hash: string; description: string | null; expiresAt: number | null; createdBy: string; systemAdmin: boolean }): Promise<KeyInfo> {
    const r = await this.knex.raw(
      `insert into "${schemaOf(db)}".access_keys (id, user_id, tenant, hash, description, system_admin, created_by, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, case when ?::bigint is null then null else to_timestamp(?::bigint / 1000.0) end)
       returning ${INFO_COLUMNS}`,
      [randomUUID(), k.userId, k.tenant, k.hash, k.description, k.systemAdmin, k.createdBy, k.expiresAt, k.expiresAt],
    );
    return infoOf(r.rows[0]);
  }

  /** The user's keys that are not revoked, expired ones included (marked), oldest first. */
  async ofUser(db: string, userId: string): Promise<KeyInfo[]> {
    const r = await this.knex.raw(
      `select ${INFO_COLUMNS} from "${schemaOf(db)}".access_keys where user_id = ? and revoked_at is null order by created_at, id`,
      [userId],
    );
    return r.rows.map(infoOf);
  }

  /** A key that is not revoked; `tenant` null: of any tenant (system administrators). */
  async byId(db: string, id: string, tenant: string | null): Promise<KeyInfo | null> {
    const r = await this.knex.raw(
      `select ${INFO_COLUMNS} from "${schemaOf(db)}".access_keys where id = ? and revoked_at is null and (?::uuid is null or tenant = ?::uuid)`,
      [id, tenant, tenant],
    );
    return r.rows[0] ? infoOf(r.rows[0]) : null;
  }

  /** Revokes a key at once; false when there is none to revoke (unknown, revoked, another tenant's). */
  async revoke(db: string, id: string, tenant: string | null): Promise<boolean> {
    const r = await this.knex.raw(
      `update "${schemaOf(db)}".access_keys set revoked_at = now()
       where id = ? and revoked_at is null and (?::uuid is null or tenant = ?::uuid) returning id`,
      [id, tenant, tenant],
    );
    return r.rows.length > 0;
  }

  /** Parsed and planned once per connection rather than per request (as the object store's hot lookups). */
  private async prepared(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }> {
    const client = this.knex.client as { acquireConnection(): Promise<PreparingConnection>; releaseConnection(c: unknown): Promise<void> };
    const name = `k_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    const connection = await client.acquireConnection();
    try {
      return await connection.query({ name, text, values });
    } finally {
      await client.releaseConnection(connection);
    }
  }
}

/** Migrations of the plugin's tables in every database (append-only). */
export const ACCESS_MIGRATIONS = [
  `create table $S.access_keys (
     id uuid primary key,
     user_id uuid not null references $S.objects(id) on delete cascade,
     tenant uuid not null references $S.objects(id) on delete cascade,
     hash text not null,
     description text,
     system_admin boolean not null default false,
     created_by text,
     created_at timestamptz not null default now(),
     expires_at timestamptz,
     last_used_at timestamptz,
     revoked_at timestamptz
   );
   create unique index access_keys_hash on $S.access_keys (hash);
   create index access_keys_user on $S.access_keys (user_id);
   create table $S.access_rules (
     tenant uuid primary key references $S.objects(id) on delete cascade,
     rules jsonb not null,
     modified_by text,
     date_modified timestamptz not null default now()
   );`,
];
