/**
 * The compiled annotations of each (database, tenant), kept per instance:
 * the tenant's own (`annotations`) and those of its named profiles, which
 * the schemes that name them under `profiles` apply on top (decisions §7.5).
 *
 * Freshness: every REST write request asks the database once, before its
 * transaction (`ProfileStore.lookup`): the revisions of the tenant's
 * profiles (a document only when its revision is new) and a tag of the
 * schemes that name profiles (their lists only when the tag is new). So an
 * upload, a deletion or a change of a scheme's `profiles` on any instance is
 * in effect for every write request that starts after it committed, and a
 * list PUT of 10,000 objects pays one lookup, not one per object. What a
 * request found is a snapshot it keeps to its end; the compiled annotations
 * of a list of profiles are kept by the lists' names and revisions, so an
 * unchanged list is compiled once.
 */
import type { Knex } from 'knex';
import type { Metamodel } from '../../runtime/host.ts';
import { CompiledAnnotations } from './rules.ts';
import { ProfileStore, TENANT_NAMES, type TenantLookup } from './store.ts';
import type { StatusCache } from './statuses.ts';

type Document = Record<string, unknown>;

/** A database dropped a moment ago has no tables left: its writes end in a 404 of the REST interface. */
const GONE = new Set(['42P01', '3F000']);

/** Compiled lists kept per tenant: a tenant has a few lists of profiles, one per kind of scheme at most. */
const KEPT_LISTS = 32;

/** What one lookup found for a tenant; immutable once made. */
export class TenantProfiles {
  static readonly empty = new TenantProfiles(new Map(), null, new Map(), new Map());

  constructor(
    /** Stored profiles of kind annotations (`annotations`, named ones), by name. */
    readonly documents: ReadonlyMap<string, { revision: number; parsed: Document }>,
    readonly schemesTag: string | null,
    /** Scheme → the profiles it names. */
    readonly schemes: ReadonlyMap<string, string[]>,
    /** Shared between the snapshots of a tenant: compiled lists by names and revisions. */
    private readonly compiled: Map<string, CompiledAnnotations>,
  ) {}

  /** Whether a profile of that name exists in the tenant (standard names aside). */
  has(name: string): boolean {
    return TENANT_NAMES.includes(name) || this.documents.has(name);
  }

  /** The profiles a scheme names (none for an object outside schemes). */
  profilesOf(scheme: string | null): string[] {
    return (scheme !== null && this.schemes.get(scheme)) || [];
  }

  /**
   * The annotations in effect with a scheme's list of profiles: the
   * tenant's, then each named one in order (later declarations win). Names
   * that hold no annotations (`profile`, the standard ones, a profile
   * deleted since) add nothing.
   */
  annotations(profiles: string[] = [], model: Metamodel): CompiledAnnotations {
    const layers = ['annotations', ...profiles].flatMap((name) => {
      const d = this.documents.get(name);
      return d ? [{ name, ...d }] : [];
    });
    if (!layers.length) return CompiledAnnotations.none;
    const key = JSON.stringify(layers.map((l) => [l.name, l.revision]));
    let compiled = this.compiled.get(key);
    if (!compiled) {
      compiled = new CompiledAnnotations(layers.map((l) => l.parsed), model);
      this.compiled.set(key, compiled);
      while (this.compiled.size > KEPT_LISTS) this.compiled.delete(this.compiled.keys().next().value!);
    } else {
      // Most recently used last.
      this.compiled.delete(key);
      this.compiled.set(key, compiled);
    }
    return compiled;
  }

  /** A snapshot with one document replaced (an upload on this instance) or removed (`parsed` null: deleted). */
  with(name: string, revision: number, parsed: Document | null): TenantProfiles {
    const documents = new Map(this.documents);
    if (parsed === null) documents.delete(name);
    else documents.set(name, { revision, parsed });
    return new TenantProfiles(documents, this.schemesTag, this.schemes, this.compiled);
  }

  /** The snapshot after a lookup: documents of known revisions kept, new ones taken. */
  after(found: TenantLookup): TenantProfiles {
    const documents = new Map<string, { revision: number; parsed: Document }>();
    for (const [name, row] of Object.entries(found.profiles)) {
      if (name === 'profile') continue;
      const known = this.documents.get(name);
      if (known && known.revision === row.revision) documents.set(name, known);
      else documents.set(name, { revision: row.revision, parsed: row.parsed ?? {} });
    }
    const schemes = found.schemes
      ? new Map(Object.entries(found.schemes).map(([id, list]) => [id, Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string') : []]))
      : this.schemes;
    return new TenantProfiles(documents, found.schemesTag, schemes, this.compiled);
  }
}

export class AnnotationCache {
  private readonly entries = new Map<string, TenantProfiles>();

  /** `statuses`: refreshed with the annotations, in the same lookup. */
  constructor(private readonly knex: Knex, readonly model: Metamodel, private readonly statuses?: StatusCache) {}

  private keyOf(db: string, tenant: string) {
    return `${db}\u0000${tenant}`;
  }

  /** Tenants of the database changed (one was deleted): nothing of theirs is kept for tenants that are gone. */
  forget(db: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${db}\u0000`)) this.entries.delete(key);
  }

  /** What this instance knows, without asking the database. */
  known(db: string, tenant: string): TenantProfiles | undefined {
    return this.entries.get(this.keyOf(db, tenant));
  }

  /**
   * The tenant's profiles in effect now: one lookup (which also brings the
   * statuses of the tenant's profile up to date, statuses.ts); a compile
   * only after a change.
   */
  async current(db: string, tenant: string): Promise<TenantProfiles> {
    const key = this.keyOf(db, tenant);
    const known = this.entries.get(key) ?? new TenantProfiles(new Map(), null, new Map(), new Map());
    let found: TenantLookup;
    try {
      const revisions: Record<string, number | null> = Object.fromEntries([...known.documents].map(([name, d]) => [name, d.revision]));
      revisions.profile = this.statuses?.revisionOf(db, tenant) ?? null;
      found = await new ProfileStore(this.knex, db).lookup(tenant, revisions, known.schemesTag);
    } catch (err) {
      if (GONE.has((err as { code?: string }).code ?? '')) return TenantProfiles.empty;
      throw err;
    }
    this.statuses?.take(db, tenant, found.profiles.profile ?? null);
    const now = known.after(found);
    this.entries.set(key, now);
    return now;
  }

  /** An upload on this instance: in effect at once here (other instances see it with their next lookup). */
  remember(db: string, tenant: string, name: string, revision: number, parsed: Document): void {
    const key = this.keyOf(db, tenant);
    const known = this.entries.get(key) ?? new TenantProfiles(new Map(), null, new Map(), new Map());
    const before = known.documents.get(name);
    if (before && before.revision >= revision) return;
    this.entries.set(key, known.with(name, revision, parsed));
  }

  /** A named profile deleted on this instance. */
  forgetProfile(db: string, tenant: string, name: string): void {
    const key = this.keyOf(db, tenant);
    const known = this.entries.get(key);
    if (known) this.entries.set(key, known.with(name, 0, null));
  }
}
