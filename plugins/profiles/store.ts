/**
 * The tenants' profiles, one row per (tenant, name) in each database: the
 * bytes exactly as uploaded (what a download returns), the parsed document
 * (what the REST interface checks against, without parsing YAML again), and
 * who uploaded when. `revision` comes from one sequence per database, so it
 * only grows: an instance that remembers a revision knows a row is newer by
 * comparing numbers, even after a tenant was deleted and made again.
 */
import type { Knex } from 'knex';
import { schemaOf } from '../../runtime/host.ts';

export const MIGRATIONS = [
  `create sequence $S.profile_revisions;
   create table $S.profiles (
     tenant uuid not null references $S.objects(id) on delete cascade,
     name text not null,
     filename text not null,
     bytes bytea not null,
     parsed jsonb not null,
     revision bigint not null,
     uploaded_by text not null,
     uploaded_at timestamptz not null,
     primary key (tenant, name)
   );`,
  // Named profiles (decisions §7.5) live in the same table; a write looks up the schemes that name profiles with every request's
  // one lookup (AnnotationCache), which reads only what this index holds: usually a handful of entries per tenant.
  `create index profiles_schemes on $S.objects (tenant, id, version) where type = 'Scheme' and (props -> 'profiles') is not null;`,
  // Statuses (decisions §7.2) label the query views from core's status_labels, which an upload of a tenant's
  // profile fills (statuses.ts, replaceStatusLabels). A profile uploaded before statuses were read kept its
  // \`statuses\` as a setting: its labels are filled here once, as replaceStatusLabels would (TenantStatuses:
  // every entry but the standard workflow's statuses of the time, labels only where they are text, the name
  // in place of both when neither is given).
  `insert into $S.status_labels (tenant, status, label_de, label_en)
   select tenant, status, coalesce(label, case when label_en is null then status end), label_en
   from (select p.tenant, s.key as status,
           case when jsonb_typeof(s.value -> 'label') = 'string' then s.value ->> 'label' end as label,
           case when jsonb_typeof(s.value -> 'labelEn') = 'string' then s.value ->> 'labelEn' end as label_en
         from $S.profiles p cross join lateral jsonb_each(p.parsed -> 'statuses') s
         where p.name = 'profile' and jsonb_typeof(p.parsed -> 'statuses') = 'object') d
   where status not in ('WORKING', 'SUBMITTED', 'ACCEPTED', 'REJECTED', 'FINAL', 'INACTIVE', 'PUBLISHED', 'DELETENEW', 'INTERMINATION', 'ARCHIVED')
   on conflict (tenant, status) do nothing;`,
];

/** The names a tenant has without creating them: its annotations and its profile (catalog.ts). */
export const TENANT_NAMES = ['annotations', 'profile'];

export interface ProfileEntry {
  name: string;
  filename: string;
  revision: number;
  uploadedBy: string;
  uploadedAt: number;
}

/** What one write request learns in its one lookup: the tenant's profiles and the schemes that name profiles. */
export interface TenantLookup {
  /** By name: the revision, with the parsed document where the caller did not know that revision. */
  profiles: Record<string, { revision: number; parsed?: Record<string, unknown> }>;
  /** Stands for the schemes that name profiles (their keys and versions). */
  schemesTag: string;
  /** Scheme → the profiles it names; only when `schemesTag` is not the one the caller knew. */
  schemes?: Record<string, unknown>;
}

export interface StoredProfile {
  filename: string;
  bytes: Buffer;
  revision: number;
  uploadedBy: string;
  uploadedAt: number;
}

export interface ProfileUpload {
  filename: string;
  bytes: Buffer;
  parsed: Record<string, unknown>;
}

export class ProfileStore {
  private readonly table: string;
  private readonly sequence: string;
  private readonly objects: string;

  constructor(private readonly q: Knex | Knex.Transaction, db: string) {
    this.table = `"${schemaOf(db)}".profiles`;
    this.sequence = `"${schemaOf(db)}".profile_revisions`;
    this.objects = `"${schemaOf(db)}".objects`;
  }

  async read(tenant: string, name: string): Promise<StoredProfile | null> {
    const r = await this.q.raw(
      `select filename, bytes, revision, uploaded_by, (extract(epoch from uploaded_at) * 1000)::bigint as uploaded_at
       from ${this.table} where tenant = ? and name = ?`,
      [tenant, name],
    );
    const row = r.rows[0];
    if (!row) return null;
    return { filename: row.filename, bytes: Buffer.from(row.bytes), revision: Number(row.revision), uploadedBy: row.uploaded_by, uploadedAt: Number(row.uploaded_at) };
  }

  /**
   * The revisions of the tenant's profiles by name, and their parsed
   * documents when `withDocuments`: what the metamodel call depends on.
   */
  async current(tenant: string, withDocuments: boolean): Promise<Record<string, { revision: number; parsed?: Record<string, unknown> }>> {
    const r = await this.q.raw(
      `select name, revision${withDocuments ? ', parsed' : ''} from ${this.table} where tenant = ? order by name`,
      [tenant],
    );
    return Object.fromEntries(r.rows.map((row: { name: string; revision: string | number; parsed?: Record<string, unknown> }) => [
      row.name, { revision: Number(row.revision), ...(row.parsed ? { parsed: row.parsed } : {}) },
    ]));
  }

  /**
   * Everything a write request needs, in one statement: the revisions of the
   * tenant's profiles (parsed documents only of revisions the caller does not
   * know) and, when they changed since `knownTag`, the profile lists of the
   * schemes that name profiles (read from the index profiles_schemes).
   */
  async lookup(tenant: string, known: Record<string, number | null>, knownTag: string | null): Promise<TenantLookup> {
    const r = await this.q.raw(
      `with s as (select id, version from ${this.objects} where tenant = ? and type = 'Scheme' and (props -> 'profiles') is not null),
            t as (select md5(coalesce(string_agg(id::text || ':' || version, ',' order by id), '')) as tag from s)
       select (select coalesce(jsonb_agg(jsonb_build_object('name', name, 'revision', revision,
                 'parsed', case when revision is distinct from (?::jsonb ->> name)::bigint then parsed end)), '[]'::jsonb)
               from ${this.table} where tenant = ?) as profiles,
              t.tag,
              case when t.tag is distinct from ?::text then
                (select coalesce(jsonb_object_agg(o.id, o.props -> 'profiles'), '{}'::jsonb) from ${this.objects} o
                 where o.tenant = ? and o.type = 'Scheme' and (o.props -> 'profiles') is not null) end as schemes
       from t`,
      [tenant, JSON.stringify(known), tenant, knownTag, tenant],
    );
    const row = r.rows[0];
    const list = (typeof row.profiles === 'string' ? JSON.parse(row.profiles) : row.profiles) as { name: string; revision: number; parsed: Record<string, unknown> | null }[];
    const schemes = typeof row.schemes === 'string' ? JSON.parse(row.schemes) : row.schemes;
    return {
      profiles: Object.fromEntries(list.map((p) => [p.name, { revision: Number(p.revision), ...(p.parsed ? { parsed: p.parsed } : {}) }])),
      schemesTag: row.tag,
      ...(schemes ? { schemes } : {}),
    };
  }

  /** The tenant's stored profiles (named ones, and `annotations`/`profile` once uploaded), by name. */
  async list(tenant: string): Promise<ProfileEntry[]> {
    const r = await this.q.raw(
      `select name, filename, revision, uploaded_by, (extract(epoch from uploaded_at) * 1000)::bigint as uploaded_at
       from ${this.table} where tenant = ? order by name`,
      [tenant],
    );
    return r.rows.map((row: Record<string, unknown>) => ({
      name: row.name as string, filename: row.filename as string, revision: Number(row.revision), uploadedBy: row.uploaded_by as string, uploadedAt: Number(row.uploaded_at),
    }));
  }

  /** Creates a named profile with its initial document; null when the name is taken. */
  async create(tenant: string, name: string, upload: ProfileUpload, actor: string): Promise<ProfileEntry | null> {
    const r = await this.q.raw(
      `insert into ${this.table} (tenant, name, filename, bytes, parsed, revision, uploaded_by, uploaded_at)
       values (?, ?, ?, ?, ?::jsonb, nextval('${this.sequence}'), ?, now())
       on conflict (tenant, name) do nothing
       returning name, filename, revision, uploaded_by, (extract(epoch from uploaded_at) * 1000)::bigint as uploaded_at`,
      [tenant, name, upload.filename, upload.bytes, JSON.stringify(upload.parsed), actor],
    );
    const row = r.rows[0];
    return row ? { name: row.name, filename: row.filename, revision: Number(row.revision), uploadedBy: row.uploaded_by, uploadedAt: Number(row.uploaded_at) } : null;
  }

  /** Deletes a profile; whether there was one. */
  async remove(tenant: string, name: string): Promise<boolean> {
    const r = await this.q.raw(`delete from ${this.table} where tenant = ? and name = ? returning name`, [tenant, name]);
    return r.rows.length > 0;
  }

  /** Locks a profile's row for the rest of the transaction; whether it exists. */
  async lock(tenant: string, name: string): Promise<boolean> {
    const r = await this.q.raw(`select name from ${this.table} where tenant = ? and name = ? for update`, [tenant, name]);
    return r.rows.length > 0;
  }

  /** The labels of the tenant's schemes whose `profiles` name the profile (at most `limit`). */
  async schemesNaming(tenant: string, name: string, limit = 10): Promise<string[]> {
    const r = await this.q.raw(
      `select label from ${this.objects} where tenant = ? and type = 'Scheme' and (props -> 'profiles') is not null
         and (props -> 'profiles') @> jsonb_build_array(?::text) order by label limit ?`,
      [tenant, name, limit],
    );
    return r.rows.map((row: { label: string }) => row.label);
  }

  /** The tenant's label (its profile of annotations has that name too), or null for a tenant that is gone. */
  async tenantLabel(tenant: string): Promise<string | null> {
    const r = await this.q.raw(`select label from ${this.objects} where id = ? and type = 'Tenant'`, [tenant]);
    return r.rows[0]?.label ?? null;
  }

  /**
   * Stores an upload unless the stored bytes are the same. One statement:
   * concurrent uploads of one profile serialize on its row, and each leaves
   * a whole file (bytes, parsed form and name of the same upload). An update
   * takes its revision only once it holds the row, so revisions grow in the
   * order uploads commit (a value taken in VALUES is taken before the wait).
   * Returns the new revision, or null when nothing changed.
   */
  async save(tenant: string, name: string, upload: ProfileUpload, actor: string): Promise<number | null> {
    const r = await this.q.raw(
      `insert into ${this.table} as p (tenant, name, filename, bytes, parsed, revision, uploaded_by, uploaded_at)
       values (?, ?, ?, ?, ?::jsonb, nextval('${this.sequence}'), ?, now())
       on conflict (tenant, name) do update
         set filename = excluded.filename, bytes = excluded.bytes, parsed = excluded.parsed,
             revision = nextval('${this.sequence}'), uploaded_by = excluded.uploaded_by, uploaded_at = excluded.uploaded_at
         where p.bytes is distinct from excluded.bytes
       returning revision`,
      [tenant, name, upload.filename, upload.bytes, JSON.stringify(upload.parsed), actor],
    );
    return r.rows[0] ? Number(r.rows[0].revision) : null;
  }
}
