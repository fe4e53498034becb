/**
 * Statuses beyond the standard workflow's (decisions §7.2): a tenant's
 * `profile` declares them under the top-level key `statuses`, with German
 * and English labels and, optionally, which transitions each access level
 * may make. See README.md beside this file, "Statuses".
 *
 * - The upload check (`checkStatuses`, status-rules.ts) refuses a bad shape
 *   with line and column; `TenantStatuses` (there too) is what a write is
 *   checked against: the allowed statuses and the transitions.
 * - `StatusChecker` is the host's status check; `StatusCache` keeps the
 *   compiled statuses per (database, tenant), brought up to date by the one
 *   lookup a write request makes for the annotations (cache.ts).
 * - `status_labels` (a table of the core, read by the query views'
 *   `status_label`) holds the declared labels; `replaceStatusLabels` keeps it
 *   in step with every upload of the profile, in the upload's transaction.
 */
import type { Knex } from 'knex';
import { schemaOf, type Metamodel, type WriteObserver, type StatusCheck } from '../../runtime/host.ts';
import { TenantStatuses } from './status-rules.ts';

/** The compiled statuses of each (database, tenant), kept per instance; fresh as the annotations are (cache.ts). */
export class StatusCache {
  private readonly entries = new Map<string, { revision: number | null; statuses: TenantStatuses }>();
  readonly none: TenantStatuses;

  constructor(private readonly model: Metamodel) {
    this.none = TenantStatuses.none(model);
  }

  private keyOf(db: string, tenant: string) {
    return `${db}\u0000${tenant}`;
  }

  /** What this instance knows, without asking the database. */
  known(db: string, tenant: string): TenantStatuses | undefined {
    return this.entries.get(this.keyOf(db, tenant))?.statuses;
  }

  forget(db: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${db}\u0000`)) this.entries.delete(key);
  }

  /** The revision this instance knows, null for none. */
  revisionOf(db: string, tenant: string): number | null {
    return this.entries.get(this.keyOf(db, tenant))?.revision ?? null;
  }

  /** Takes what a lookup found (cache.ts, with the annotations): the profile's revision, with its document when new; null when there is none. */
  take(db: string, tenant: string, row: { revision: number; parsed?: Record<string, unknown> } | null): TenantStatuses {
    const key = this.keyOf(db, tenant);
    const known = this.entries.get(key);
    if (!row) {
      this.entries.set(key, { revision: null, statuses: this.none });
      return this.none;
    }
    if (known && known.revision === row.revision) return known.statuses;
    return this.remember(db, tenant, row.revision, row.parsed ?? {});
  }

  /** Only a newer revision replaces: overlapping requests may bring them out of order. */
  remember(db: string, tenant: string, revision: number, parsed: Record<string, unknown>): TenantStatuses {
    const key = this.keyOf(db, tenant);
    const known = this.entries.get(key);
    if (known && known.revision !== null && known.revision >= revision) return known.statuses;
    const statuses = new TenantStatuses(parsed, this.model);
    this.entries.set(key, { revision, statuses });
    return statuses;
  }
}

interface WriteRequest {
  db: string;
  tenant: string;
  statuses: TenantStatuses;
}


/**
 * Whether a write may set or change a status: it sends one, or it replaces
 * objects (a PUT, or a list), whose status falls back to WORKING when left out.
 */
export function mayTouchStatus(method: string, body: unknown): boolean {
  if (method === 'PUT' || Array.isArray(body)) return true;
  return !!body && typeof body === 'object' && Object.hasOwn(body, 'status');
}

/**
 * The host's status check. The tenant's statuses are brought up to date
 * before the write's transaction, in the one lookup the annotations make
 * (check.ts, cache.ts), and only for a write that may set or change a status.
 * Its `observe` must come after the custom-properties check's (index.ts).
 */
export class StatusChecker {
  /** What `observe` found for each write, by its request (see CustomPropertiesChecker's `requests`). */
  private readonly requests = new WeakMap<object, WriteRequest>();

  constructor(private readonly cache: StatusCache, private readonly log: { warn(o: object, m: string): void }) {}

  /** Sees every write (REST request or a plugin's write of many objects) before its objects are checked, after the lookup. */
  readonly observe: WriteObserver = ({ request, method, principal, db, body }) => {
    if (!principal.tenant || !mayTouchStatus(method, body)) return;
    this.requests.set(request, { db, tenant: principal.tenant, statuses: this.cache.known(db, principal.tenant) ?? this.cache.none });
  };

  readonly check: StatusCheck = ({ db, tenant, status, previous, accessLevel, request: served }) => {
    const request = served && this.requests.get(served);
    if (request && request.db === db && request.tenant === tenant) return request.statuses.check(status, previous, accessLevel);
    // Within the write's transaction no other connection may be waited for (the embedded database has one).
    this.log.warn({ db }, 'statuses checked outside an observed write: the profile may be stale');
    return (this.cache.known(db, tenant) ?? this.cache.none).check(status, previous, accessLevel);
  };
}

/** Replaces the tenant's rows of `status_labels` with what its profile declares now. */
export async function replaceStatusLabels(q: Knex | Knex.Transaction, db: string, tenant: string, statuses: TenantStatuses): Promise<void> {
  await q.raw(`delete from "${schemaOf(db)}".status_labels where tenant = ?`, [tenant]);
  const rows = [...statuses.declared].map(([status, l]) => ({ tenant, status, label_de: l.label ?? (l.labelEn === undefined ? status : null), label_en: l.labelEn ?? null }));
  for (let i = 0; i < rows.length; i += 1000) await q.withSchema(schemaOf(db)).table('status_labels').insert(rows.slice(i, i + 1000));
}
