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

  constructor(private readonly q: Knex | Knex.Transaction, db: string) {
    this.table = `"${schemaOf(db)}".profiles`;
    this.sequence = `"${schemaOf(db)}".profile_revisions`;
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
   * The revision of a profile, with its parsed document only when it is not
   * the revision the caller has: the cheap check a write request makes.
   */
  async revisionSince(tenant: string, name: string, known: number | null): Promise<{ revision: number; parsed?: Record<string, unknown> } | null> {
    const r = await this.q.raw(
      `select revision, case when revision is distinct from ?::bigint then parsed end as parsed from ${this.table} where tenant = ? and name = ?`,
      [known, tenant, name],
    );
    const row = r.rows[0];
    if (!row) return null;
    return { revision: Number(row.revision), ...(row.parsed ? { parsed: row.parsed } : {}) };
  }

  /**
   * `revisionSince` for several profiles in one lookup: by name, the
   * revision, with the parsed document where it is not the one the caller has.
   */
  async revisionsSince(tenant: string, known: Record<string, number | null>): Promise<Record<string, { revision: number; parsed?: Record<string, unknown> }>> {
    const names = Object.keys(known);
    const r = await this.q.raw(
      `select name, revision, case when revision is distinct from (?::jsonb ->> name)::bigint then parsed end as parsed
       from ${this.table} where tenant = ? and name in (${names.map(() => '?').join(', ')})`,
      [JSON.stringify(known), tenant, ...names],
    );
    return Object.fromEntries(r.rows.map((row: { name: string; revision: string | number; parsed?: Record<string, unknown> | null }) => [
      row.name, { revision: Number(row.revision), ...(row.parsed ? { parsed: row.parsed } : {}) },
    ]));
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
