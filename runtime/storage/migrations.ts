/**
 * Schema migrations. The control schema `service` lists the databases and
 * holds service-wide state; every named database is a schema `db_<name>`
 * with the same tables. The same SQL runs on PostgreSQL and PGlite.
 * Migrations are append-only: never edit one that has shipped. (The one
 * exception: the password tables left the first migrations for auth-basic's
 * manifest, which creates them `if not exists`, so an installation whose
 * ledger counts the old first migrations keeps them as they are.)
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

export const CONTROL_SCHEMA = 'service';

/** Names of databases (decisions §2); they end up quoted in SQL, so nothing else may pass. */
export const DATABASE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** PostgreSQL cuts identifiers at 63 bytes: longer names keep a prefix and a digest of the whole, so two names never share a schema. */
export function schemaOf(db: string): string {
  const schema = `db_${db}`;
  if (schema.length <= 63) return schema;
  return `${schema.slice(0, 46)}_${createHash('sha256').update(db).digest('hex').slice(0, 16)}`;
}

const controlMigrations: string[] = [
  `create table service.databases (
     name text primary key,
     created_at timestamptz not null default now(),
     created_by text,
     default_tenant uuid not null
   );`,
  // The generated views a database has, so that a start recreates them only when they changed.
  `alter table service.databases add column views_hash text;`,
  // System administrators' subject identifiers (SERVICE_OIDC_JWT_SUB_ID): pinned service-wide, since they need no user.
  `create table service.admin_subjects (
     login_id text primary key,
     subject_id text not null,
     pinned_at timestamptz not null default now()
   );`,
];

/** `$S` stands for the quoted schema of the database. */
const databaseMigrations: string[] = [
  `create table $S.objects (
     id uuid primary key,
     tenant uuid not null,
     type text not null,
     parent_id uuid,
     list text not null,
     label text not null,
     title text,
     description text,
     status text,
     model_id uuid,
     version integer not null,
     created_by text,
     date_created timestamptz not null,
     modified_by text,
     date_modified timestamptz not null,
     props jsonb not null default '{}'::jsonb,
     custom jsonb not null default '{}'::jsonb
   );
   create unique index objects_business_key on $S.objects
     (tenant, coalesce(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), list, label);
   create unique index objects_tenant_label on $S.objects (label) where type = 'Tenant';
   create index objects_children on $S.objects (parent_id, list, label, id);
   create index objects_type on $S.objects (tenant, type, label, id);
   create index objects_login on $S.objects ((props->>'loginId')) where type = 'User';
   create table $S.history (
     id uuid not null,
     version integer not null,
     tenant uuid not null,
     type text not null,
     parent_id uuid,
     list text not null,
     operation text not null,
     valid_from timestamptz not null,
     valid_to timestamptz,
     changed_by text,
     row jsonb not null,
     primary key (id, version)
   );
   create index history_children on $S.history (parent_id, list);
   create index history_type on $S.history (tenant, type);`,
  // Search (runtime/storage/search.ts): label and title, and the description, folded to lower case
  // without common accents, kept beside the object and indexed for trigram matching. pg_trgm is
  // database-wide, so it lives in public and every schema names it there; the lock keeps two databases
  // created at once from both creating it.
  `select pg_advisory_xact_lock(hashtext('create extension pg_trgm'));
   create extension if not exists pg_trgm with schema public;
   create function $S.search_fold(value text) returns text language sql immutable parallel safe
     as $$ select translate(lower(value), 'ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿ', 'aaaaaaaaaaaacceeeeeeeeiiiiiiiinnoooooooooooouuuuuuuuyyy') $$;
   alter table $S.objects
     add column search_label text generated always as ($S.search_fold(label || coalesce(' ' || title, ''))) stored,
     add column search_description text generated always as ($S.search_fold(description)) stored;
   create index objects_search_label on $S.objects using gin (search_label public.gin_trgm_ops);
   create index objects_search_description on $S.objects using gin (search_description public.gin_trgm_ops);`,
  // Search's best tiers (the exact label, then labels that start with the text) read in order and only
  // as far as the page: the folded label in byte order, which LIKE 'text%' can range over.
  `create index objects_search_prefix on $S.objects (tenant, search_label collate "C", id);`,
  // Labels of the statuses a tenant's profile declares beyond the standard workflow's (decisions §7.2):
  // `status_label` of the query views reads them. The profiles plugin replaces a tenant's rows with each upload.
  `create table $S.status_labels (
     tenant uuid not null references $S.objects(id) on delete cascade,
     status text not null,
     label_de text,
     label_en text,
     primary key (tenant, status)
   );`,
  // The second edition of the metamodel (decisions §7.1): a derivation links any two assets, and the
  // reference to the asset it stands under is `derivedFrom` (was `derivationFor`), in the current
  // objects and in every version kept, so that as-of reads show it under its new name too.
  `update $S.objects set props = (props - 'derivationFor') || jsonb_build_object('derivedFrom', props -> 'derivationFor')
     where type = 'Derivation' and props -> 'derivationFor' is not null;
   update $S.history set row = (row - 'derivationFor') || jsonb_build_object('derivedFrom', row -> 'derivationFor')
     where type = 'Derivation' and row -> 'derivationFor' is not null;`,
  // Writable parent references (decisions §7.1): an object keeps the reference naming its parent (`inScheme`,
  // `inCollection`, `inSystem`, `literalOf`), in the current objects and in every version kept, so that
  // objects written before them show them, as of any time too.
  `with owners(parent_type, property, child_types) as (values
       ('Scheme', 'inScheme', array['Collection', 'Classifier', 'Enumeration', 'ReferenceObject', 'Processing', 'System', 'DataObject', 'UmlClass', 'Datatype']),
       ('Collection', 'inCollection', array['Collection', 'Classifier', 'Enumeration', 'ReferenceObject', 'Processing', 'System', 'DataObject', 'UmlClass', 'Datatype', 'Dataset']),
       ('System', 'inSystem', array['System']),
       ('Enumeration', 'literalOf', array['Literal', 'ReferenceValue']),
       ('ReferenceObject', 'literalOf', array['Literal', 'ReferenceValue']))
   update $S.objects c set props = c.props || jsonb_build_object(w.property, c.parent_id)
     from $S.objects p, owners w
     where p.id = c.parent_id and p.type = w.parent_type and c.type = any(w.child_types) and c.props -> w.property is null;
   with owners(parent_type, property, child_types) as (values
       ('Scheme', 'inScheme', array['Collection', 'Classifier', 'Enumeration', 'ReferenceObject', 'Processing', 'System', 'DataObject', 'UmlClass', 'Datatype']),
       ('Collection', 'inCollection', array['Collection', 'Classifier', 'Enumeration', 'ReferenceObject', 'Processing', 'System', 'DataObject', 'UmlClass', 'Datatype', 'Dataset']),
       ('System', 'inSystem', array['System']),
       ('Enumeration', 'literalOf', array['Literal', 'ReferenceValue']),
       ('ReferenceObject', 'literalOf', array['Literal', 'ReferenceValue']))
   update $S.history h set row = h.row || jsonb_build_object(w.property, h.parent_id)
     from owners w
     where h.parent_id is not null and h.type = any(w.child_types) and h.row -> w.property is null
       and w.parent_type = (select ph.type from $S.history ph where ph.id = h.parent_id limit 1);`,
  // Bulk writes (runtime/rest/bulk-writes.ts) stage their objects here in short parts, then write them in one short
  // transaction. Nothing reads a batch but its writer; a batch whose writer stopped (its heartbeat stale) is removed
  // by the next one. Unlogged: staged rows are worth nothing after a crash, and skip the WAL. `if not exists`: a
  // database whose later migrations run again (test/rest/metamodel2.spec.ts) has them already.
  `create unlogged table if not exists $S.staged_batches (
     id uuid primary key,
     heartbeat_at timestamptz not null default now()
   );
   create unlogged table if not exists $S.staged_objects (
     batch uuid not null references $S.staged_batches(id) on delete cascade,
     seq integer not null,
     operation text not null check (operation in ('create', 'update')),
     id uuid not null, tenant uuid not null, type text not null, parent_id uuid, list text not null, label text not null,
     title text, description text, status text, model_id uuid, version integer not null, created_by text,
     date_created bigint not null, modified_by text, date_modified bigint not null, props jsonb not null, custom jsonb not null,
     row jsonb not null,
     primary key (batch, seq)
   );`,
  // What history keeps of a staged object (plainObject) is made from its columns when it is written
  // (objects.ts: plainObjectSql): sent as well, it doubled what staging sent and the database parsed.
  `alter table $S.staged_objects drop column if exists row;`,
];

/**
 * Migrations that plugins bring, by plugin name: each plugin's list is
 * append-only like the core's, and counted apart from it. `$S` stands for
 * the quoted schema (the control schema or the database's).
 */
export class PluginMigrations {
  readonly control = new Map<string, string[]>();
  readonly database = new Map<string, string[]>();
}

async function migrate(knex: Knex, schema: string, migrations: string[], plugins: Map<string, string[]> = new Map()) {
  const q = `"${schema}"`;
  await knex.transaction(async (trx) => {
    // Serializes instances that start at once against one PostgreSQL.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`migrate:${schema}`]);
    await trx.raw(`create schema if not exists ${q}`);
    await trx.raw(`create table if not exists ${q}.schema_migrations (version integer primary key, applied_at timestamptz not null default now())`);
    const done = new Set((await trx.raw(`select version from ${q}.schema_migrations`)).rows.map((r: { version: number }) => r.version));
    for (let i = 0; i < migrations.length; i++) {
      if (done.has(i + 1)) continue;
      await trx.raw(migrations[i].replaceAll('$S', q));
      await trx.raw(`insert into ${q}.schema_migrations (version) values (?)`, [i + 1]);
    }
    if (!plugins.size) return;
    await trx.raw(`create table if not exists ${q}.plugin_migrations (plugin text not null, version integer not null, applied_at timestamptz not null default now(), primary key (plugin, version))`);
    const applied = new Set((await trx.raw(`select plugin, version from ${q}.plugin_migrations`)).rows.map((r: { plugin: string; version: number }) => `${r.plugin}:${r.version}`));
    for (const [plugin, list] of [...plugins].sort(([a], [b]) => a.localeCompare(b))) {
      for (let i = 0; i < list.length; i++) {
        if (applied.has(`${plugin}:${i + 1}`)) continue;
        await trx.raw(list[i].replaceAll('$S', q));
        await trx.raw(`insert into ${q}.plugin_migrations (plugin, version) values (?, ?)`, [plugin, i + 1]);
      }
    }
  });
}

export function migrateControl(knex: Knex, plugins?: PluginMigrations) {
  return migrate(knex, CONTROL_SCHEMA, controlMigrations, plugins?.control);
}

export function migrateDatabase(knex: Knex, db: string, plugins?: PluginMigrations) {
  return migrate(knex, schemaOf(db), databaseMigrations, plugins?.database);
}
