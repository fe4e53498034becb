/**
 * Sessions of the user interface, kept in the control schema so that every
 * instance sees the same ones: a sign-out or an expiry on one ends the
 * session on all (there is no cache in front of the table).
 *
 * What is kept: a SHA-256 digest of the cookie's value (never the value),
 * the scope (a database, or null for the service-wide calls), what signs
 * the person in again on each request (the login ID for the service's own
 * passwords; the identity an external method vouched for, and the method),
 * the login tenant requested, and when the session was opened and last
 * used. The anti-forgery token is not kept at all: it is derived from the
 * cookie's value (an HMAC keyed with it), so only a holder of the cookie's
 * value can know it, and the page can be told it again after a reload.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import type { ExternalIdentity } from '../../runtime/host.ts';

export const MIGRATIONS = [
  `create table $S.web_sessions (
     id_digest text primary key,
     scope text,
     kind text not null check (kind in ('password', 'external')),
     login_id text not null,
     identity jsonb,
     method text not null,
     tenant text,
     created_ms bigint not null,
     seen_ms bigint not null
   );`,
  `create index web_sessions_seen on $S.web_sessions (seen_ms);`,
  `create table $S.web_sign_ins (
     state_digest text primary key,
     verifier text not null,
     nonce text not null,
     scope text,
     return_path text not null,
     created_ms bigint not null
   );`,
];

export interface Session {
  idDigest: string;
  /** The database, or null: the service-wide calls (/api/admin). */
  scope: string | null;
  /** `password`: the service's own passwords, signed in again from the login ID; `external`: from the identity. */
  kind: 'password' | 'external';
  loginId: string;
  identity: ExternalIdentity | null;
  method: string;
  /** The login tenant requested (`service-tenant` at sign-in, or switched to since); null: none. */
  tenant: string | null;
  createdMs: number;
  seenMs: number;
}

export interface SessionLimits {
  idleMs: number;
  maxAgeMs: number;
}

export function digestOf(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** The anti-forgery token of a session: derived from the cookie's value, which only its holder knows. */
export function csrfTokenOf(cookieValue: string): string {
  return createHmac('sha256', cookieValue).update('x-csrf-token').digest('base64url');
}

/** Whether `sent` is the session's token, in constant time. */
export function csrfMatches(cookieValue: string, sent: string): boolean {
  const expected = createHash('sha256').update(csrfTokenOf(cookieValue)).digest();
  const given = createHash('sha256').update(sent, 'utf8').digest();
  return timingSafeEqual(expected, given) && sent.length > 0;
}

/** The cookie's name for a scope: one cookie per database, one for the service-wide calls. */
export function cookieName(scope: string | null): string {
  return scope === null ? 'mds-admin' : `mds-db-${scope}`;
}

/** A cookie's value from the Cookie header (the chain may show a request without it). */
export function cookieOf(header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The last-seen time is written at most this often (or a quarter of a short idle timeout). */
const SEEN_WRITE_MS = 60_000;

export class SessionStore {
  private lastSweep = 0;

  constructor(private readonly knex: Knex, private readonly limits: SessionLimits) {}

  /** Opens a session; returns the cookie's value (told once, to the browser). */
  async open(session: Omit<Session, 'idDigest' | 'createdMs' | 'seenMs'>): Promise<string> {
    const value = randomBytes(32).toString('base64url');
    const now = Date.now();
    await this.knex.raw(
      `insert into service.web_sessions (id_digest, scope, kind, login_id, identity, method, tenant, created_ms, seen_ms)
       values (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?)`,
      [digestOf(value), session.scope, session.kind, session.loginId, session.identity ? JSON.stringify(session.identity) : null,
        session.method, session.tenant, now, now],
    );
    void this.sweep();
    return value;
  }

  /** The live session of the cookie's value, its last use noted; null when there is none or it expired (then it is removed). */
  async find(value: string): Promise<Session | null> {
    if (!value || value.length > 100) return null;
    const r = await this.knex.raw(`select * from service.web_sessions where id_digest = ?`, [digestOf(value)]);
    const row = r.rows[0];
    if (!row) return null;
    const session: Session = {
      idDigest: row.id_digest, scope: row.scope, kind: row.kind, loginId: row.login_id,
      identity: typeof row.identity === 'string' ? JSON.parse(row.identity) : row.identity ?? null,
      method: row.method, tenant: row.tenant, createdMs: Number(row.created_ms), seenMs: Number(row.seen_ms),
    };
    const now = Date.now();
    if (now - session.seenMs >= this.limits.idleMs || now - session.createdMs >= this.limits.maxAgeMs) {
      await this.end(session.idDigest);
      return null;
    }
    if (now - session.seenMs >= Math.min(SEEN_WRITE_MS, this.limits.idleMs / 4)) {
      await this.knex.raw(`update service.web_sessions set seen_ms = greatest(seen_ms, ?) where id_digest = ?`, [now, session.idDigest]);
      session.seenMs = now;
    }
    void this.sweep();
    return session;
  }

  async setTenant(idDigest: string, tenant: string | null): Promise<void> {
    await this.knex.raw(`update service.web_sessions set tenant = ? where id_digest = ?`, [tenant, idDigest]);
  }

  async end(idDigest: string): Promise<void> {
    await this.knex.raw(`delete from service.web_sessions where id_digest = ?`, [idDigest]);
  }

  /** Removes expired sessions and sign-ins, at most once a minute per instance. */
  async sweep(force = false): Promise<void> {
    const now = Date.now();
    if (!force && now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    try {
      await this.knex.raw(`delete from service.web_sessions where seen_ms <= ? or created_ms <= ?`, [now - this.limits.idleMs, now - this.limits.maxAgeMs]);
      await this.knex.raw(`delete from service.web_sign_ins where created_ms <= ?`, [now - SIGN_IN_TTL_MS]);
    } catch {
      // The next sweep tries again; an expired session is refused when read anyway.
    }
  }
}

/** How long an OpenID Connect sign-in may take at the provider. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

export interface PendingSignIn {
  verifier: string;
  nonce: string;
  scope: string | null;
  returnPath: string;
}

/** Sign-ins begun at the provider, keyed by a digest of their state; each is taken once. */
export class PendingSignIns {
  constructor(private readonly knex: Knex) {}

  async begin(state: string, pending: PendingSignIn): Promise<void> {
    await this.knex.raw(
      `insert into service.web_sign_ins (state_digest, verifier, nonce, scope, return_path, created_ms) values (?, ?, ?, ?, ?, ?)`,
      [digestOf(state), pending.verifier, pending.nonce, pending.scope, pending.returnPath, Date.now()],
    );
  }

  /** The sign-in of the state, removed as it is read: a second use finds nothing. */
  async take(state: string): Promise<PendingSignIn | null> {
    if (!state || state.length > 200) return null;
    const r = await this.knex.raw(`delete from service.web_sign_ins where state_digest = ? returning *`, [digestOf(state)]);
    const row = r.rows[0];
    if (!row || Date.now() - Number(row.created_ms) >= SIGN_IN_TTL_MS) return null;
    return { verifier: row.verifier, nonce: row.nonce, scope: row.scope, returnPath: row.return_path };
  }
}
