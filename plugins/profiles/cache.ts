/**
 * The compiled annotations of each (database, tenant), kept per instance.
 *
 * Freshness: every REST write request asks the database once, before its
 * transaction, for the revision of the tenant's annotations (one primary-key
 * lookup that returns the parsed document only when the revision is new).
 * So an upload on any instance is in effect for every write request that
 * starts after it committed, and a list PUT of 10,000 objects pays one
 * lookup, not one per object. An upload on this instance replaces the entry
 * at once. A short time-to-live would be cheaper still, but would let another
 * instance accept, for that long, values the tenant has just forbidden.
 */
import type { Knex } from 'knex';
import type { Metamodel } from '../../runtime/host.ts';
import { CompiledAnnotations } from './rules.ts';
import { ProfileStore } from './store.ts';
import type { StatusCache } from './statuses.ts';

interface Entry {
  revision: number | null;
  annotations: CompiledAnnotations;
}

/** A database dropped a moment ago has no tables left: its writes end in a 404 of the REST interface. */
const GONE = new Set(['42P01', '3F000']);

export class AnnotationCache {
  private readonly entries = new Map<string, Entry>();

  /** `statuses`: refreshed with the annotations, in the same lookup, when a write asks for both. */
  constructor(private readonly knex: Knex, private readonly model: Metamodel, private readonly statuses?: StatusCache) {}

  private keyOf(db: string, tenant: string) {
    return `${db}\u0000${tenant}`;
  }

  /** Tenants of the database changed (one was deleted): nothing of theirs is kept for tenants that are gone. */
  forget(db: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${db}\u0000`)) this.entries.delete(key);
  }

  /** What this instance knows, without asking the database. */
  known(db: string, tenant: string): CompiledAnnotations | undefined {
    return this.entries.get(this.keyOf(db, tenant))?.annotations;
  }

  /**
   * The annotations in effect now: one cheap lookup, a compile only after a
   * new upload. `withStatuses`: the same lookup brings the statuses of the
   * tenant's profile up to date (statuses.ts), for a write that may set one.
   */
  async current(db: string, tenant: string, withStatuses = false): Promise<CompiledAnnotations> {
    const key = this.keyOf(db, tenant);
    const known = this.entries.get(key);
    let row;
    try {
      const store = new ProfileStore(this.knex, db);
      if (withStatuses && this.statuses) {
        const found = await store.revisionsSince(tenant, { annotations: known?.revision ?? null, profile: this.statuses.revisionOf(db, tenant) });
        this.statuses.take(db, tenant, found.profile ?? null);
        row = found.annotations ?? null;
      } else {
        row = await store.revisionSince(tenant, 'annotations', known?.revision ?? null);
      }
    } catch (err) {
      if (GONE.has((err as { code?: string }).code ?? '')) return CompiledAnnotations.none;
      throw err;
    }
    if (!row) {
      this.entries.set(key, { revision: null, annotations: CompiledAnnotations.none });
      return CompiledAnnotations.none;
    }
    if (known && known.revision === row.revision) return known.annotations;
    return this.remember(db, tenant, row.revision, row.parsed ?? {});
  }

  /**
   * Takes a revision read from the database or just written. Requests that
   * overlap may bring revisions out of order: only a newer one replaces.
   */
  remember(db: string, tenant: string, revision: number, parsed: Record<string, unknown>): CompiledAnnotations {
    const key = this.keyOf(db, tenant);
    const known = this.entries.get(key);
    if (known && known.revision !== null && known.revision >= revision) return known.annotations;
    const annotations = new CompiledAnnotations(parsed, this.model);
    this.entries.set(key, { revision, annotations });
    return annotations;
  }
}
