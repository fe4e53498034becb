/**
 * Directory sign-in (specification, method 3): login ID and password in
 * `Authorization: Basic`, verified against an LDAP directory, never against
 * passwords kept by the service. The driver says who the caller is (an
 * external identity with the directory's groups, tenant and names); the core
 * assigns the identity to a user of the service.
 *
 * A verified sign-in is remembered for SERVICE_AUTH_CACHE_TTL milliseconds
 * (default 10 s), keyed by an HMAC of login ID and password, so that a client
 * sending credentials with every call does not cost the directory a search
 * and a bind each time. A password changed or an account locked in the
 * directory takes effect for the service at the latest after that time.
 * Failed sign-ins are throttled by the rule password sign-in has (per client
 * address and login ID, and per address: runtime/auth/throttle.ts).
 */
import { createHash } from 'node:crypto';
import { clientAddress, CredentialCache, parseBasic, createError, SignInThrottle, type Attempt, type AuthDriver, type AuthRequest, type AuthResult, type ExternalIdentity, type PluginHost, type PluginManifest } from '../../runtime/host.ts';
import { DirectoryUnavailable, LdapDirectory, type PersonDirectory } from './ldap-directory.ts';
import { configSchema, parseDirectorySettings, type LdapPluginSettings } from './settings.ts';

/** Longer login IDs and passwords are no one's: refused before they reach the directory. */
const MAX_LOGIN_ID_LENGTH = 256;
const MAX_PASSWORD_LENGTH = 1024;

/**
 * Directories match login IDs ignoring case and surplus blanks (uid is
 * compared with caseIgnoreMatch), so `Alice` and ` alice ` are tries
 * against alice's password too: they count against one throttle entry.
 * A digest, because the throttle remembers many login IDs and an attacker
 * chooses their length.
 */
export function throttleKeyOf(loginId: string): string {
  const folded = loginId.normalize('NFC').toLowerCase().trim().replace(/\s+/g, ' ');
  return createHash('sha256').update(folded, 'utf8').digest('base64');
}

export interface DirectoryDriverOptions {
  directory: PersonDirectory;
  /** Remembers verified sign-ins: credentials to the identity the directory gave. */
  signIns: CredentialCache<ExternalIdentity>;
  /** The same rule as password sign-in's: per address and login ID, and per address. */
  throttle: SignInThrottle;
}

export class DirectoryDriver implements AuthDriver {
  readonly name = 'directory';
  private readonly pending = new Map<string, Promise<ExternalIdentity | null>>();

  constructor(private readonly o: DirectoryDriverOptions) {}

  challenge() {
    return 'Basic realm="metadata", charset="UTF-8"';
  }

  async authenticate({ ctx }: AuthRequest): Promise<AuthResult | null> {
    const parsed = parseBasic(ctx.get('authorization'));
    if (parsed === null) return null;
    if (parsed === 'malformed') throw this.rejection();
    const { loginId, password } = parsed;
    const attempt: Attempt = { address: clientAddress(ctx), loginKey: throttleKeyOf(loginId) };
    const gate = this.o.throttle.check(attempt);
    if (!gate.allowed) throw createError('TOO_MANY_ATTEMPTS', {}, [], { 'Retry-After': String(gate.retryAfterSeconds) });
    // An empty password would be an unauthenticated bind, which every directory "accepts": refused before any bind.
    if (!password || password.length > MAX_PASSWORD_LENGTH || loginId.length > MAX_LOGIN_ID_LENGTH) {
      this.o.throttle.fail(attempt);
      throw this.rejection();
    }
    const identity = this.o.signIns.get('', loginId, password) ?? (await this.verify(loginId, password));
    if (!identity) {
      this.o.throttle.fail(attempt);
      throw this.rejection();
    }
    this.o.throttle.succeed(attempt);
    // A copy: the remembered identity must not change with what the core does to this one.
    return { kind: 'external', identity: { ...identity, ...(identity.groups ? { groups: [...identity.groups] } : {}) } };
  }

  /** Concurrent requests with the same credentials share one search and bind. */
  private verify(loginId: string, password: string): Promise<ExternalIdentity | null> {
    const key = this.o.signIns.keyOf('', loginId, password);
    let verification = this.pending.get(key);
    if (!verification) {
      verification = this.o.directory.verify(loginId, password).then(
        (identity) => {
          if (identity) this.o.signIns.remember('', loginId, password, identity);
          return identity;
        },
        (err) => {
          if (err instanceof DirectoryUnavailable) throw createError('UNAVAILABLE', {}, [], { 'Retry-After': '5' });
          throw err;
        },
      ).finally(() => this.pending.delete(key));
      this.pending.set(key, verification);
    }
    return verification;
  }

  /**
   * One answer for every credential that does not sign in (unknown login
   * ID, ambiguous entry, wrong or empty password), so that it tells an
   * attacker nothing.
   */
  private rejection() {
    return createError('UNAUTHENTICATED', {}, [], { 'WWW-Authenticate': this.challenge() });
  }
}

export const manifest: PluginManifest<LdapPluginSettings> = {
  name: 'auth-ldap',
  host: '^1',
  method: {
    name: 'directory',
    on: { setting: 'SERVICE_JNDI_AUTHENTICATION' },
    phase: 'credentials',
  },
  settingsPrefixes: ['SERVICE_JNDI_'],
  configSchema,
  // Read before any storage is opened, so a missing or malformed setting stops the start at once.
  checkSettings: (settings) => void parseDirectorySettings(settings),
  register(host: PluginHost, settings) {
    const directorySettings = parseDirectorySettings(settings);
    const directory = new LdapDirectory(directorySettings, host.log);
    const driver = new DirectoryDriver({
      directory,
      signIns: new CredentialCache<ExternalIdentity>({ ttlMs: settings.SERVICE_AUTH_CACHE_TTL }),
      throttle: new SignInThrottle(),
    });
    host.addAuthDriver(driver);
    // Not awaited: a directory that is down at start makes sign-ins answer 503, it does not keep the service from starting.
    host.onStart(async () => void directory.warmUp());
    host.onClose(() => directory.close());
    host.log.info({ url: directorySettings.url, searchBase: directorySettings.searchBase, filter: directorySettings.filter }, 'directory sign-in enabled');
  },
};
