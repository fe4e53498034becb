/**
 * Verifies a login ID and password against an LDAP directory the way the
 * specification's method 3 describes it: as the search user, search the
 * context for the one entry the filter finds; then bind as that entry with
 * the given password, on a connection of its own.
 *
 * The search user's connection is kept bound and shared by all sign-ins
 * (LDAP multiplexes operations by message ID), so a sign-in costs a search
 * and one bind; it is rebuilt when the directory closed it or it failed. A
 * person's bind always gets a fresh connection that is closed right after:
 * a connection bound as someone is never used to search.
 *
 * The directory being away (refused, timed out, closed) or refusing the
 * search user is the service's problem, not the caller's: it surfaces as
 * DirectoryUnavailable (503), never as a wrong password.
 */
import { randomUUID } from 'node:crypto';
import { Client, ResultCodeError } from 'ldapts';
import type { ExternalIdentity } from '../../runtime/host.ts';
import { loginAttribute, searchFilter } from './filter.ts';
import { identityOf, requestedAttributes, type DirectoryEntry } from './identity.ts';
import type { DirectorySettings } from './settings.ts';

export type UnavailableReason = 'unreachable' | 'searchUserRejected' | 'searchFailed' | 'bindFailed' | 'closed';

export class DirectoryUnavailable extends Error {
  constructor(readonly reason: UnavailableReason, readonly detail: string) {
    super(`directory unavailable (${reason}): ${detail}`);
  }
}

/** What the sign-in driver needs of a directory. */
export interface PersonDirectory {
  /** The person's identity, or null when no single entry matches or the password is wrong. */
  verify(loginId: string, password: string): Promise<ExternalIdentity | null>;
}

export interface DirectoryLog {
  error(o: object, m: string): void;
  info(o: object, m: string): void;
}

/**
 * Bind results that mean "these credentials do not sign in" (RFC 4511
 * result codes): invalid credentials, inappropriate authentication,
 * insufficient access, unwilling to perform (e.g. a disabled account),
 * no such object and invalid DN syntax (the entry went away since the
 * search), constraint violation (password-policy lockouts).
 */
const REJECTING_BIND_RESULTS = new Set([49, 48, 50, 53, 32, 34, 19]);

// One error line per kind of outage and minute: an outage must not flood the log.
const ERROR_LOG_INTERVAL_MS = 60_000;

type SearchConnection = { ready: Promise<Client>; client?: Client; failed: boolean };

export class LdapDirectory implements PersonDirectory {
  private connection?: SearchConnection;
  private closed = false;
  private lastError?: { reason: UnavailableReason; at: number };
  private readonly attributes: string[];
  private readonly loginAttribute: string | undefined;

  constructor(private readonly settings: DirectorySettings, private readonly log: DirectoryLog, private readonly now: () => number = Date.now) {
    this.loginAttribute = loginAttribute(settings.filter);
    this.attributes = requestedAttributes(settings.attributes, this.loginAttribute);
  }

  async verify(loginId: string, password: string): Promise<ExternalIdentity | null> {
    const entries = await this.search(searchFilter(this.settings.filter, loginId));
    // None is an unknown login ID; more than one cannot be told apart, and signing in as either would be a guess.
    // An empty name would make the bind anonymous, whatever the password.
    if (entries.length !== 1 || !entries[0].dn) {
      await this.decoyBind(password);
      return null;
    }
    const [entry] = entries;
    if (!(await this.passwordMatches(entry.dn, password))) return null;
    return identityOf(entry, loginId, this.settings.attributes, this.loginAttribute);
  }

  /** Binds the search user ahead of the first sign-in; a failure is logged and retried by the next sign-in. */
  async warmUp(): Promise<void> {
    try {
      await this.searchConnection().ready;
    } catch {
      // Logged where it happened.
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = undefined;
    // A connection still being made is closed when it is done (searchConnection), not waited for here.
    await connection?.client?.unbind().catch(() => undefined);
  }

  private async search(filter: string): Promise<DirectoryEntry[]> {
    for (let attempt = 1; ; attempt++) {
      const { ready, fresh } = this.searchConnection();
      const client = await ready;
      // Checked in the same turn as the search starts: a connection closed meanwhile would otherwise reconnect unbound.
      if (!client.isBound) {
        this.drop(client);
        if (attempt < 2) continue;
        throw this.unavailable('unreachable', new Error('the directory closed the search user\'s connection'));
      }
      try {
        const result = await client.search(this.settings.searchBase, {
          scope: 'sub',
          filter,
          attributes: this.attributes,
          derefAliases: 'never',
          // Two are enough to know there is more than one.
          sizeLimit: 2,
          timeLimit: Math.max(1, Math.ceil(this.settings.timeoutMs / 1000)),
        });
        this.recovered();
        return result.searchEntries as DirectoryEntry[];
      } catch (err) {
        if (err instanceof ResultCodeError) throw this.unavailable('searchFailed', err);
        this.drop(client);
        // A kept connection may have been closed by the directory while idle: one more try on a new one.
        if (!fresh && attempt === 1) continue;
        throw this.unavailable('unreachable', err);
      }
    }
  }

  private async passwordMatches(dn: string, password: string): Promise<boolean> {
    const client = this.client();
    try {
      await client.bind(dn, password);
      return true;
    } catch (err) {
      if (err instanceof ResultCodeError && REJECTING_BIND_RESULTS.has(err.code)) return false;
      throw this.unavailable(err instanceof ResultCodeError ? 'bindFailed' : 'unreachable', err);
    } finally {
      // Not awaited: the answer is known, closing is housekeeping.
      void client.unbind().catch(() => undefined);
    }
  }

  /**
   * For a login ID the search did not find: the same connection and bind a
   * known one costs, as a name that cannot exist under the context, so
   * that how long a refusal takes does not tell who has an entry. The
   * answer is always no; the directory being away is not reported here,
   * since the search has just succeeded and the sign-in fails either way.
   */
  private async decoyBind(password: string): Promise<void> {
    const base = this.settings.searchBase;
    const dn = `cn=${randomUUID()}${base ? `,${base}` : ''}`;
    await this.passwordMatches(dn, password).catch(() => false);
  }

  /** The shared search connection: the kept one, the one being made, or a new one. */
  private searchConnection(): { ready: Promise<Client>; fresh: boolean } {
    if (this.closed) return { ready: Promise.reject(new DirectoryUnavailable('closed', 'the service is stopping')), fresh: true };
    const current = this.connection;
    if (current && !current.failed && (!current.client || current.client.isBound)) return { ready: current.ready, fresh: !current.client };
    if (current?.client) void current.client.unbind().catch(() => undefined);
    const next: SearchConnection = { failed: false, ready: undefined as unknown as Promise<Client> };
    next.ready = this.bindSearchUser().then(
      (client) => {
        next.client = client;
        if (this.closed) void client.unbind().catch(() => undefined);
        return client;
      },
      (err) => {
        next.failed = true;
        throw err;
      },
    );
    // Every waiter handles the rejection; this keeps an unwaited one from being reported as unhandled.
    next.ready.catch(() => undefined);
    this.connection = next;
    return { ready: next.ready, fresh: true };
  }

  private async bindSearchUser(): Promise<Client> {
    const client = this.client();
    try {
      await client.bind(this.settings.searchUser, this.settings.searchPassword);
      return client;
    } catch (err) {
      void client.unbind().catch(() => undefined);
      // The search user's password is wrong or its account is locked: the service is misconfigured.
      throw this.unavailable(err instanceof ResultCodeError ? 'searchUserRejected' : 'unreachable', err);
    }
  }

  private drop(client: Client) {
    if (this.connection?.client === client) this.connection = undefined;
    void client.unbind().catch(() => undefined);
  }

  private client(): Client {
    return new Client({ url: this.settings.url, connectTimeout: this.settings.connectTimeoutMs, timeout: this.settings.timeoutMs });
  }

  private unavailable(reason: UnavailableReason, err: unknown): DirectoryUnavailable {
    if (err instanceof DirectoryUnavailable) return err;
    const detail = err instanceof Error ? err.message : String(err);
    const now = this.now();
    if (!this.lastError || this.lastError.reason !== reason || now - this.lastError.at >= ERROR_LOG_INTERVAL_MS) {
      // Never the password: the URL, the search user and what the directory or the network said.
      this.log.error({ url: this.settings.url, searchUser: this.settings.searchUser, searchBase: this.settings.searchBase, reason, detail }, MESSAGES[reason]);
      this.lastError = { reason, at: now };
    }
    return new DirectoryUnavailable(reason, detail);
  }

  private recovered() {
    if (!this.lastError) return;
    this.log.info({ url: this.settings.url }, 'directory reachable again');
    this.lastError = undefined;
  }
}

const MESSAGES: Record<UnavailableReason, string> = {
  unreachable: 'directory not reachable: sign-ins answer 503',
  searchUserRejected: 'directory refuses the search user (SERVICE_JNDI_USER / SERVICE_JNDI_PASSWORD): sign-ins answer 503',
  searchFailed: 'directory search failed (SERVICE_JNDI_CONTEXT / SERVICE_JNDI_FILTER?): sign-ins answer 503',
  bindFailed: 'directory could not check a password: sign-ins answer 503',
  closed: 'directory connection closed',
};
