/**
 * The access key (specification, "Access key"): `service-access-key: <key>`
 * identifies a user and the one tenant where the key is valid, in place of
 * a login with credentials. Order 20: after the OpenID Connect driver (which
 * verifies a client-credentials token and leaves identification to the
 * key), before every method that reads a login ID.
 *
 * - Programming interfaces only (`/rest/…`, `/api/…`); never the user interface.
 * - `service-tenant` naming another tenant than the key's: 403 (the key is
 *   valid, the tenant is refused), as for any verified caller.
 * - Access rules are never evaluated: the key's user exists.
 * - Unknown, malformed, expired and revoked keys, keys of removed users, and
 *   keys on service-wide calls (/api/admin) get one and the same 401. Each
 *   counts against the client address's budget of failed sign-ins (the one
 *   password sign-in has, runtime/auth/throttle.ts); an address over it gets
 *   429 with Retry-After for every key until the lock ends.
 * - A system administrator's key (SERVICE_ADMIN_USER) keeps those rights
 *   only if a system administrator made it; its tenant is still the key's.
 *
 * A valid key's owner is remembered for SERVICE_ACCESS_KEY_CACHE_TTL
 * milliseconds (default 5000; 0: never), by the key's digest, so that a
 * warm request costs no query. Expiry always counts exactly (an entry never
 * outlives the key). On this instance, a revocation and every change of
 * users or tenants forget all remembered keys at once; another instance
 * sees a revocation, a removed user or a changed access level within the
 * TTL. Unknown keys are never remembered. The last use is written at most
 * once a minute per key, so that reading stays reading.
 */
import { clientAddress, createError, SignInThrottle, type AuthDriver, type AuthRequest, type AuthResult, type Principal } from '../../runtime/host.ts';
import { AccessKeyStore, hashOf, looksLikeKey, sameHash, type KeyOwner } from './keys.ts';

export const ACCESS_KEY_HEADER = 'service-access-key';
/** How often the last use of one key is written. */
export const LAST_USED_INTERVAL_MS = 60_000;
export const DEFAULT_CACHE_TTL_MS = 5_000;
const MAX_REMEMBERED = 10_000;
const PROGRAMMING_INTERFACES = /^\/(rest|api)\//;

export interface AccessKeyDriverOptions {
  keys: AccessKeyStore;
  isSystemAdmin(loginId: string): boolean;
  log: { warn(o: object, m: string): void };
  cacheTtlMs?: number;
  throttle?: SignInThrottle;
}

export class AccessKeyDriver implements AuthDriver {
  readonly name = 'accessKey';
  /** When this instance last wrote a key's use, so that concurrent requests do not all write it. */
  private readonly touched = new Map<string, number>();
  private readonly remembered = new Map<string, { owner: KeyOwner; until: number }>();
  /** Raised by forget(): a lookup that began before must not remember what it read. */
  private generation = 0;
  private readonly throttle: SignInThrottle;

  constructor(private readonly o: AccessKeyDriverOptions) {
    this.throttle = o.throttle ?? new SignInThrottle();
  }

  async authenticate({ ctx, db, requestedTenant }: AuthRequest): Promise<AuthResult | null> {
    const key = ctx.get(ACCESS_KEY_HEADER);
    if (!key) return null;
    const attempt = { address: clientAddress(ctx) };
    const gate = this.throttle.check(attempt);
    if (!gate.allowed) throw createError('TOO_MANY_ATTEMPTS', {}, [], { 'Retry-After': String(gate.retryAfterSeconds) });
    const owner = PROGRAMMING_INTERFACES.test(ctx.path) && db && looksLikeKey(key) ? await this.ownerOf(db.name, hashOf(key)) : null;
    if (!owner || !db) {
      this.throttle.fail(attempt);
      throw createError('UNAUTHENTICATED');
    }
    if (requestedTenant !== undefined && requestedTenant !== owner.tenantLabel) throw createError('FORBIDDEN');
    await this.noteUse(db.name, owner);
    const systemAdmin = owner.systemAdmin && this.o.isSystemAdmin(owner.loginId);
    const principal: Principal = {
      loginId: owner.loginId, tenant: owner.tenant, tenantLabel: owner.tenantLabel, userId: owner.userId,
      accessLevel: systemAdmin ? 'ADMINISTRATOR' : owner.accessLevel, systemAdmin, method: this.name, accessKeyId: owner.id,
    };
    return { kind: 'principal', principal };
  }

  /** Keys were revoked, or users or tenants changed: every remembered key is looked up again. */
  forget() {
    this.generation++;
    this.remembered.clear();
  }

  private async ownerOf(db: string, hash: string): Promise<KeyOwner | null> {
    const slot = `${db}\u0000${hash}`;
    const now = Date.now();
    const hit = this.remembered.get(slot);
    if (hit && hit.until > now) return hit.owner;
    if (hit) this.remembered.delete(slot);
    const generation = this.generation;
    const owner = await this.o.keys.owner(db, hash);
    // The index found the digest; comparing it again costs nothing and does not depend on where they differ.
    if (!owner || !sameHash(owner.hash, hash)) return null;
    const ttl = this.o.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
    if (ttl > 0 && generation === this.generation) {
      if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
      this.remembered.set(slot, { owner, until: Math.min(now + ttl, owner.expiresAt ?? Infinity) });
    }
    return owner;
  }

  private async noteUse(db: string, owner: KeyOwner) {
    const now = Date.now();
    if (owner.lastUsed !== null && now - owner.lastUsed < LAST_USED_INTERVAL_MS) return;
    if (now - (this.touched.get(owner.id) ?? 0) < LAST_USED_INTERVAL_MS) return;
    if (this.touched.size >= MAX_REMEMBERED) this.touched.clear();
    this.touched.set(owner.id, now);
    try {
      await this.o.keys.touch(db, owner.id, LAST_USED_INTERVAL_MS);
    } catch (err) {
      // The last use is information, not a condition of the sign-in.
      this.o.log.warn({ err: String(err), accessKeyId: owner.id }, 'recording the last use of an access key failed');
    }
  }
}
