/**
 * Login ID and password (specification, authentication method 1): basic
 * authentication against passwords kept by the service, argon2id-hashed and
 * peppered. System administrators' passwords are kept service-wide.
 */
import type { Knex } from 'knex';
import { createError } from '../../runtime/errors.ts';
import type { AuthDriver, AuthRequest, AuthResult, Directory, Principal } from '../../runtime/auth/types.ts';
import type { PluginHost, PluginManifest } from '../../runtime/plugins.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { CredentialCache } from './cache.ts';
import { parsePepperStore } from './pepper.ts';
import { PasswordHasher, type StoredPassword } from './passwords.ts';
import { LoginThrottle } from './throttle.ts';

const ADMIN_SCOPE = '\u0000service';
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
  cache: CredentialCache<Principal>;
  throttle: LoginThrottle;
  log: { warn: (o: object, m: string) => void };
}

/** Parses `Basic base64(loginId:password)`; null when the header is of another scheme. */
export function parseBasic(header: string): { loginId: string; password: string } | null | 'malformed' {
  const match = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!/^Basic /i.test(header)) return null;
  if (!match) return 'malformed';
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return 'malformed';
  return { loginId: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export class BasicDriver implements AuthDriver {
  readonly name = 'basic';
  // A hash to verify against when there is no user, so that timing does not tell whether a login ID exists.
  private dummy?: Promise<StoredPassword>;

  constructor(private readonly o: BasicDriverOptions) {}

  challenge() {
    return 'Basic realm="metadata", charset="UTF-8"';
  }

  async authenticate({ ctx, db, requestedTenant }: AuthRequest): Promise<AuthResult | null> {
    const parsed = parseBasic(ctx.get('authorization'));
    if (parsed === null) return null;
    const fail = () => createError('UNAUTHENTICATED', {}, [], { 'WWW-Authenticate': this.challenge() });
    if (parsed === 'malformed') throw fail();
    const { loginId, password } = parsed;
    const scope = `${db?.name ?? ADMIN_SCOPE}\u0000${requestedTenant ?? ''}`;
    const cached = this.o.cache.get(scope, loginId, password);
    if (cached) return { kind: 'principal', principal: cached };

    const gate = this.o.throttle.check(loginId);
    if (!gate.allowed) throw createError('TOO_MANY_ATTEMPTS', {}, [], { 'Retry-After': String(gate.retryAfterSeconds) });

    const { principal, stored, save } = await this.candidate(db, loginId, requestedTenant);
    const check = await this.o.hasher.verify(password, stored ?? await this.dummyHash());
    if (!stored || !principal || !check.ok) {
      this.o.throttle.fail(loginId);
      throw fail();
    }
    this.o.throttle.succeed(loginId);
    if (check.needsRehash) {
      // Renewing the hash is an improvement, not a condition of the login.
      await save(await this.o.hasher.hash(password)).catch((err) => this.o.log.warn({ err: String(err) }, 'password rehash failed'));
    }
    this.o.cache.remember(scope, loginId, password, principal);
    return { kind: 'principal', principal };
  }

  private async candidate(db: AuthRequest['db'], loginId: string, requestedTenant?: string) {
    const { directory, passwords } = this.o;
    if (!db) {
      const principal: Principal | null = directory.isSystemAdmin(loginId)
        ? { loginId, accessLevel: 'ADMINISTRATOR', systemAdmin: true, method: this.name }
        : null;
      return { principal, stored: principal ? await passwords.ofAdmin(loginId) : null, save: (s: StoredPassword) => passwords.setAdmin(loginId, s) };
    }
    const login = await directory.loginTenant(db, loginId, requestedTenant);
    const principal = directory.principalOf(login, loginId, this.name);
    if (login.user) {
      const stored = await passwords.ofUser(db.name, login.user.id);
      if (stored || !login.systemAdmin) {
        const userId = login.user.id;
        return { principal, stored, save: (s: StoredPassword) => passwords.setUser(db.name, userId, s) };
      }
    }
    const stored = login.systemAdmin ? await passwords.ofAdmin(loginId) : null;
    return { principal, stored, save: (s: StoredPassword) => passwords.setAdmin(loginId, s) };
  }

  private dummyHash(): Promise<StoredPassword> {
    this.dummy ??= this.o.hasher.hash('not a password of anyone');
    return this.dummy;
  }
}

export const manifest: PluginManifest = {
  name: 'auth-basic',
  configSchema: {
    type: 'object',
    properties: {
      SERVICE_PEPPER_STORE: { type: 'string' },
      SERVICE_AUTH_CACHE_TTL: { type: 'string', pattern: '^[0-9]+$' },
    },
  },
  async register(host: PluginHost) {
    const env = host.config.env;
    const hasher = new PasswordHasher(parsePepperStore(env.SERVICE_PEPPER_STORE));
    const passwords = new PasswordStore(host.knex);
    const cache = new CredentialCache<Principal>({ ttlMs: Number(env.SERVICE_AUTH_CACHE_TTL ?? 10_000) });
    const throttle = new LoginThrottle();
    host.addAuthDriver(new BasicDriver({ hasher, passwords, directory: host.directory, cache, throttle, log: host.log }), 100);

    host.addSecretHandler('User.password', async ({ trx, db, object, value }) => {
      if (typeof value !== 'string') return [{ path: 'password', key: 'wrongType', params: { expected: 'string' } }];
      if (value.length < MIN_PASSWORD_LENGTH) return [{ path: 'password', key: 'tooShort', params: { limit: MIN_PASSWORD_LENGTH } }];
      if (value.length > 1024) return [{ path: 'password', key: 'tooLong', params: { limit: 1024 } }];
      await new PasswordStore(trx).setUser(db, object.id, await hasher.hash(value));
      // Cache entries are keyed per requested tenant; a password change drops them all.
      cache.clear();
    });

    host.onStart(async () => {
      const { adminUsers, adminPassword } = host.config;
      if (adminPassword) await passwords.setAdmin(adminUsers[0], await hasher.hash(adminPassword));
    });
  },
};
