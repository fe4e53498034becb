/**
 * How many statements and jobs of one tenant an instance runs at once
 * (SERVICE_QUERY_TENANT_CONCURRENCY). Statements run on a handful of
 * connections (or copies of the embedded database): without a limit, one
 * tenant's administrator could take all of them, and every other tenant's
 * queries would wait behind theirs.
 */
export class TenantSlots {
  private readonly taken = new Map<string, number>();
  private readonly listeners: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** A slot of the tenant, with the function that gives it back (once); null when all are taken. */
  take(db: string, tenant: string): (() => void) | null {
    const key = `${db}/${tenant}`;
    const count = this.taken.get(key) ?? 0;
    if (count >= this.limit) return null;
    this.taken.set(key, count + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.taken.get(key) ?? 1) - 1;
      if (left > 0) this.taken.set(key, left);
      else this.taken.delete(key);
      for (const listener of this.listeners) listener();
    };
  }

  /** Told whenever a slot is given back (queued jobs wait for one). */
  onRelease(listener: () => void): void {
    this.listeners.push(listener);
  }
}
