/**
 * Login ID and password (specification, authentication method 1): basic
 * authentication against passwords kept by the service, argon2id-hashed and
 * peppered. System administrators' passwords are kept service-wide. Failed
 * sign-ins are throttled per client address and login ID, and per address
 * (runtime/auth/throttle.ts), so that an attacker's guesses never lock out
 * the person signing in from elsewhere.
 */
import { hash } from 'node:crypto';
import type { Knex } from 'knex';
import { clientAddress, createError, CredentialCache, parseBasic, schemaOf, SignInThrottle, type Attempt, type AuthDriver, type AuthRequest, type AuthResult, type Directory, type PluginHost, type PluginManifest, type Principal } from '../../runtime/host.ts';
import { parsePepperStore } from './pepper.ts';
import { PasswordHasher, type StoredPassword } from './passwords.ts';

const MIN_PASSWORD_LENGTH = 8;

export class PasswordStore {
  constructor(private readonly knex: Knex | Knex.Transaction) {}

  async ofUser(db: string, userId: string): Promise<StoredPassword | null> {
    const r = await this.knex.raw(`select hash, pepper_id from "${schemaOf(db)}".credentials where user_id = ?`, [userId]);
    return r.rows[0] ? { hash: r.rows[0].hash, pepperId: r.rows[0].pepper_id } : null;
  }

  async ofAdmin(loginId: string): Promise<StoredPassword | null> {
    const r = await this.knex.raw(`select hash, pepper_id from service.admin_credentials where login_id = ?`, [loginId]);
    return r.rows[0] ? { hash: r.rows[0].hash, pepperId: r.rows[0].pepper_id } : null;
  }

  async setUser(db: string, userId: string, stored: StoredPassword) {
    await this.knex.raw(
      `insert into "${schemaOf(db)}".credentials (user_id, hash, pepper_id, updated_at) values (?, ?, ?, now())
       on conflict (user_id) do update set hash = excluded.hash, pepper_id = excluded.pepper_id, updated_at = now()`,
      [userId, stored.hash, stored.pepperId],
    );
  }

  async setAdmin(loginId: string, stored: StoredPassword) {
    await this.knex.raw(
      `insert into service.admin_credentials (login_id, hash, pepper_id, updated_at) values (?, ?, ?, now())
       on conflict (login_id) do update set hash = excluded.hash, pepper_id = excluded.pepper_id, updated_at = now()`,
      [loginId, stored.hash, stored.pepperId],
    );
  }
}

export interface BasicDriverOptions {
  hasher: PasswordHasher;
  passwords: PasswordStore;
  directory: Directory;
  /** Remembers which password matched which stored hash: a new hash (a changed password) is a miss. */
  cache: CredentialCache<true>;
  /** Remembers whole sign-ins (credentials to principal) briefly, so a warm request costs no query; cleared on user and tenant changes. */
  signIns: CredentialCache<Principal>;
  throttle: SignInThrottle;
  log: { warn: (o: object, m: string) => void };
}

/** The shared parser (runtime/auth/basic-header.ts), here too for those who knew it here. */
export { parseBasic };

/** Whose password a login ID is checked against, and what it may do once checked. */
interface Account {
  stored: StoredPassword;
  save(stored: StoredPassword): Promise<void>;
  /** Asked only after the password matched. */
  principal(): Promise<Principal>;
}

export class BasicDriver implements AuthDriver {
  readonly name = 'basic';
  // A hash to verify against when there is no account.
  private dummy?: Promise<StoredPassword>;
  private readonly pending = new Map<string, Promise<Principal>>();
  private generation = 0;

  constructor(private readonly o: BasicDriverOptions) {}

  challenge() {
    return 'Basic realm="metadata", charset="UTF-8"';
  }

  /** Makes the stand-in hash before the first request, so that request is not slower than the rest. */
  async prepare(): Promise<void> {
    await this.dummyHash();
  }

  async authenticate({ ctx, db, requestedTenant }: AuthRequest): Promise<AuthResult | null> {
    const parsed = parseBasic(ctx.get('authorization'));
    if (parsed === null) return null;
    if (parsed === 'malformed') throw this.rejection();
    const { loginId, password } = parsed;
    // The login ID by a digest: the throttle remembers many, and an attacker chooses their length.
    const attempt: Attempt = { address: clientAddress(ctx), loginKey: hash('sha256', loginId, 'base64') };
    const gate = this.o.throttle.check(attempt);
    if (!gate.allowed) throw createError('TOO_MANY_ATTEMPTS', {}, [], { 'Retry-After': String(gate.retryAfterSeconds) });
    const scope = `${db?.name ?? ''}\u0000${requestedTenant ?? ''}`;
    const known = this.o.signIns.peek(scope, loginId, password);
    if (known) {
      this.o.throttle.succeed(attempt);
      // Half its life gone: signed in again in the background, so that a steady client never waits for the
      // hash (every request with these credentials would otherwise wait for it once per cache lifetime).
      // What that sign-in finds is what a request after expiry would find: a wrong password drops the entry.
      if (known.renew) {
        this.sharedSignIn(db, loginId, password, requestedTenant, attempt, scope)
          .catch(() => this.o.signIns.forget(scope, loginId));
      }
      return { kind: 'principal', principal: known.value };
    }
    return { kind: 'principal', principal: await this.sharedSignIn(db, loginId, password, requestedTenant, attempt, scope) };
  }

  /** Concurrent requests with the same credentials share one check instead of each hashing. */
  private sharedSignIn(db: AuthRequest['db'], loginId: string, password: string, requestedTenant: string | undefined, attempt: Attempt, scope: string): Promise<Principal> {
    const key = this.o.signIns.keyOf(scope, loginId, password);
    let signIn = this.pending.get(key);
    if (!signIn) {
      signIn = this.signIn(db, loginId, password, requestedTenant, attempt, scope).finally(() => this.pending.delete(key));
      this.pending.set(key, signIn);
    }
    return signIn;
  }

  /** Users or tenants changed: every remembered sign-in is looked up again. */
  forgetSignIns() {
    this.generation++;
    this.o.signIns.clear();
  }

  private async signIn(db: AuthRequest['db'], loginId: string, password: string, requestedTenant: string | undefined, attempt: Attempt, scope: string): Promise<Principal> {
    const generation = this.generation;
    const account = await this.account(db, loginId, requestedTenant);
    const verified = account ? await this.matches(account, loginId, password) : await this.spendVerification(password);
    if (!account || !verified) {
      this.o.throttle.fail(attempt);
      throw this.rejection();
    }
    this.o.throttle.succeed(attempt);
    const principal = await account.principal();
    // A change while this sign-in ran may have made what it read stale.
    if (generation === this.generation) this.o.signIns.remember(scope, loginId, password, principal);
    return principal;
  }

  /**
   * One answer for every credential that cannot be verified (unknown login
   * ID, no user, no password, wrong password), so that it tells an attacker
   * nothing. A verified caller refused the tenant named in service-tenant
   * gets 403, whether that tenant exists or not.
   */
  private rejection() {
    return createError('UNAUTHENTICATED', {}, [], { 'WWW-Authenticate': this.challenge() });
  }

  /** Checks like a real account, so that the time taken does not tell that there is none. */
  private async spendVerification(password: string): Promise<false> {
    await this.o.hasher.verify(password, await this.dummyHash());
    return false;
  }

  private async matches(account: Account, loginId: string, password: string): Promise<boolean> {
    const { cache, hasher, log } = this.o;
    if (cache.has(cacheScope(account.stored), loginId, password)) return true;
    const check = await hasher.verify(password, account.stored);
    if (!check.ok) return false;
    let current = account.stored;
    if (check.needsRehash) {
      // Renewing the hash is an improvement, not a condition of the login.
      const renewed = await hasher.hash(password);
      try {
        await account.save(renewed);
        current = renewed;
      } catch (err) {
        log.warn({ err: String(err) }, 'password rehash failed');
      }
    }
    cache.remember(cacheScope(current), loginId, password);
    return true;
  }

  private async account(db: AuthRequest['db'], loginId: string, requestedTenant?: string): Promise<Account | null> {
    const { directory, passwords } = this.o;
    // A system administrator's password is the service-wide one, never a
    // tenant user's: a tenant administrator could otherwise create a user
    // with an administrator's login ID and sign in as system administrator.
    if (directory.isSystemAdmin(loginId)) {
      const stored = await passwords.ofAdmin(loginId);
      if (!stored) return null;
      return { stored, save: (s) => passwords.setAdmin(loginId, s), principal: () => this.adminPrincipal(db, loginId, requestedTenant) };
    }
    if (!db) return null;
    const login = await directory.findLoginTenant(db, loginId, requestedTenant);
    if (login?.user) {
      const principal = directory.principalOf(login, loginId, this.name)!;
      return this.userAccount(db.name, login.user.id, async () => principal);
    }
    if (requestedTenant === undefined) return null;
    // service-tenant names a tenant that does not exist or holds no user of the login ID: the password is the one of the
    // user the login ID signs in as without the header, and once it is verified the answer is 403, the same for both.
    const home = await directory.findLoginTenant(db, loginId, undefined);
    return home?.user ? this.userAccount(db.name, home.user.id, async () => { throw createError('FORBIDDEN'); }) : null;
  }

  private async userAccount(db: string, userId: string, principal: () => Promise<Principal>): Promise<Account | null> {
    const stored = await this.o.passwords.ofUser(db, userId);
    return stored ? { stored, save: (s) => this.o.passwords.setUser(db, userId, s), principal } : null;
  }

  private async adminPrincipal(db: AuthRequest['db'], loginId: string, requestedTenant?: string): Promise<Principal> {
    if (!db) return { loginId, accessLevel: 'ADMINISTRATOR', systemAdmin: true, method: this.name };
    // The administrator is verified now, so a tenant that does not exist may be named: 403.
    const login = await this.o.directory.loginTenant(db, loginId, requestedTenant);
    return this.o.directory.principalOf(login, loginId, this.name)!;
  }

  private dummyHash(): Promise<StoredPassword> {
    this.dummy ??= this.o.hasher.hash('not a password of anyone');
    return this.dummy;
  }
}

/** A remembered check is valid for exactly the hash it was made against. */
function cacheScope(stored: StoredPassword): string {
  return `${stored.pepperId ?? ''}\u0000${stored.hash}`;
}

/**
 * The tables of passwords: system administrators' in the control schema,
 * users' in every database. Until host API 1 the core's first migrations
 * made them, so an existing installation has them already and its ledger
 * says the core made them: hence `if not exists`, which makes these a no-op
 * there and the tables' origin on a new installation.
 */
const MIGRATIONS = {
  control: [
    `create table if not exists $S.admin_credentials (
       login_id text primary key,
       hash text not null,
       pepper_id text,
       updated_at timestamptz not null default now()
     );`,
  ],
  database: [
    `create table if not exists $S.credentials (
       user_id uuid primary key references $S.objects(id) on delete cascade,
       hash text not null,
       pepper_id text,
       updated_at timestamptz not null default now()
     );`,
  ],
};

interface BasicSettings {
  SERVICE_PEPPER_STORE?: string;
  SERVICE_AUTH_CACHE_TTL: number;
}

export const manifest: PluginManifest<BasicSettings> = {
  name: 'auth-basic',
  host: '^1',
  // General rule 6: login ID and password only when no other method is on; another method keeps no passwords.
  method: { name: 'basic', on: 'otherwise', phase: 'password' },
  settingsPrefixes: ['SERVICE_PEPPER_'],
  configSchema: {
    type: 'object',
    properties: {
      SERVICE_PEPPER_STORE: { type: 'string' },
      // The same as auth-ldap's and auth-oidc's: one setting, one meaning.
      SERVICE_AUTH_CACHE_TTL: {
        type: 'integer', minimum: 0, maximum: 999_999_999, default: 10_000,
        description: 'a whole number of milliseconds from 0 to 999999999',
      },
    },
  },
  checkSettings: (settings) => void parsePepperStore(settings.SERVICE_PEPPER_STORE),
  migrations: MIGRATIONS,
  messages: {
    en: { passwordsNotManaged: 'Passwords are not kept by the service with the configured sign-in method.' },
    de: { passwordsNotManaged: 'Mit der eingestellten Anmeldemethode verwaltet der Dienst keine Passwörter.' },
  },
  async register(host: PluginHost, settings) {
    const hasher = new PasswordHasher(parsePepperStore(settings.SERVICE_PEPPER_STORE));
    const passwords = new PasswordStore(host.knex);
    const ttlMs = settings.SERVICE_AUTH_CACHE_TTL;
    const cache = new CredentialCache<true>({ ttlMs });
    const signIns = new CredentialCache<Principal>({ ttlMs });
    const throttle = new SignInThrottle();
    const driver = new BasicDriver({ hasher, passwords, directory: host.directory, cache, signIns, throttle, log: host.log });
    const managed = host.methodOn('basic');
    if (managed) host.addAuthDriver(driver);
    // Another instance's change reaches this one's remembered sign-ins only when they expire (SERVICE_AUTH_CACHE_TTL).
    host.onChange((_db, types) => {
      if (types.includes('User') || types.includes('Tenant')) driver.forgetSignIns();
    });

    // A changed password is a new hash, which no remembered check matches: nothing to forget here.
    host.addSecretHandler('User.password', async ({ trx, db, object, value }) => {
      if (!managed) return [{ path: 'password', key: 'passwordsNotManaged' }];
      if (typeof value !== 'string') return [{ path: 'password', key: 'mustBeText' }];
      if (value.length < MIN_PASSWORD_LENGTH) return [{ path: 'password', key: 'tooShort', params: { limit: MIN_PASSWORD_LENGTH } }];
      if (value.length > 1024) return [{ path: 'password', key: 'tooLong', params: { limit: 1024 } }];
      await new PasswordStore(trx).setUser(db, object.id, await hasher.hash(value));
      driver.forgetSignIns();
    });

    host.onStart(async () => {
      const { adminUsers, adminPassword } = host.config;
      if (adminPassword && managed) await passwords.setAdmin(adminUsers[0], await hasher.hash(adminPassword));
      await driver.prepare();
    });
  },
};
