/**
 * Runs the authentication drivers in order and puts the principal on the
 * request. The first driver that finds its credentials decides; with none,
 * the answer is 401 with a challenge for every enabled method.
 *
 * A driver of an external method (pre-authentication, directory, OpenID
 * Connect) only vouches for a login ID; the assignment to a user is the
 * core's, the same for every method: the login-tenant rules (with the
 * method's default-tenant override), subject-identifier pinning, and the
 * tenant's access rules for identities without a user. Password logins and
 * access keys come back as principals and never meet the access rules.
 *
 * Rejections: 401 when the caller sent no credentials any method knows
 * ("Authentication is required."), or is not who it claims (bad
 * credentials, subject identifier that does not match: "The credentials
 * were not accepted."); 403 when the caller is verified
 * but has no access to the login tenant (no user, no rule, a DENY rule,
 * access rules off, an unknown tenant in service-tenant).
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { createError, ServiceError } from '../errors.ts';
import { accessRulesEnabled, AccessRuleStore, decideAccess, type AccessRule } from './access-rules.ts';
import { createRuleUser } from './rule-users.ts';
import { adminSubjectOf, checkAdminSubject, checkSubject, type SubjectCheck } from './subjects.ts';
import type { AccessLevel, AuthDriver, DatabaseInfo, Directory, ExternalIdentity, LoginTenant, Principal, UserRecord } from './types.ts';
import { ACCESS_LEVELS } from './types.ts';

/** A sign-in as the chain decided it: the principal, and for an external method the identity its driver vouched for. */
export interface SignIn {
  principal: Principal;
  /** The name of the driver that decided. */
  method: string;
  /** What an external method's driver vouched for (checked as the core stores it); absent for principals (passwords, access keys). */
  identity?: ExternalIdentity;
}

export interface Authenticator {
  authenticate(ctx: Context, db: DatabaseInfo | null): Promise<Principal>;
  /** The same chain, telling also which driver decided and, for external methods, the identity. */
  signIn(ctx: Context, db: DatabaseInfo | null): Promise<SignIn>;
  challenges(): string[];
  /** Users, tenants or access rules changed on this instance: remembered assignments are made again. */
  forgetAssignments(): void;
}

export interface AuthenticatorOptions {
  /** Where users are created by CREATE rules and subject identifiers are pinned; without it no rule lets anyone in. */
  knex?: Knex;
  /** The settings (SERVICE_ACCESS_RULES / SERVICE_GUEST_USERS, SERVICE_AUTH_CACHE_TTL). */
  env?: Record<string, string | undefined>;
  /** Told of every refused sign-in (401, 403, 429) with the method's name; `none` when no method found credentials. */
  signInFailed?(method: string, status: number): void;
}

const MAX_ASSIGNMENTS = 10_000;

export function createAuthenticator(drivers: AuthDriver[], directory: Directory, options: AuthenticatorOptions = {}): Authenticator {
  const challenges = () => drivers.map((d) => d.challenge?.()).filter((c): c is string => !!c);
  const challengeHeaders = (): Record<string, string> => (challenges().length ? { 'WWW-Authenticate': challenges().join(', ') } : {});
  const unauthenticated = () => createError('UNAUTHENTICATED', {}, [], challengeHeaders());
  const { knex } = options;
  const rulesEnabled = options.env ? accessRulesEnabled(options.env) : true;
  const rules = knex ? new AccessRuleStore(knex) : undefined;
  /**
   * External identities assigned to principals, remembered as password
   * sign-ins are (SERVICE_AUTH_CACHE_TTL, default 10 s): a warm bearer token
   * or proxy header then costs no query. The key is the whole identity as the
   * driver vouched for it (groups and subject identifier included), so a
   * changed claim is a new assignment. Another instance's changes count here
   * when the entry expires.
   */
  const assignmentTtlMs = Number(options.env?.SERVICE_AUTH_CACHE_TTL ?? 10_000);
  const assigned = new Map<string, { principal: Principal; until: number }>();
  let generation = 0;
  function forgetAssignments() {
    generation++;
    assigned.clear();
  }

  async function remembered(identity: ExternalIdentity, db: DatabaseInfo | null, requestedTenant: string | undefined, method: string): Promise<Principal> {
    if (!(assignmentTtlMs > 0)) return assign(identity, db, requestedTenant, method);
    const key = JSON.stringify([db?.name ?? null, requestedTenant ?? null, method, identity]);
    const hit = assigned.get(key);
    if (hit && hit.until > Date.now()) return hit.principal;
    const started = generation;
    const principal = await assign(identity, db, requestedTenant, method);
    // A change that happened while assigning may have made this answer stale.
    if (started === generation) {
      assigned.delete(key);
      if (assigned.size >= MAX_ASSIGNMENTS) assigned.delete(assigned.keys().next().value!);
      assigned.set(key, { principal, until: Date.now() + assignmentTtlMs });
    }
    return principal;
  }

  /**
   * A 401 once a method found credentials (a driver's, or the core's for the
   * identity it vouched for): they were refused, which the message says
   * without telling which part was wrong. Without a challenge of its own
   * (e.g. a bad access key) it gets every enabled method's.
   */
  function rejected(err: unknown): unknown {
    if (!(err instanceof ServiceError) || err.status !== 401) return err;
    const headers = err.headers['WWW-Authenticate'] ? err.headers : { ...err.headers, ...challengeHeaders() };
    return createError('CREDENTIALS_REFUSED', err.params, err.violations, headers);
  }

  /** Counts a refused sign-in by method (not a database that is away, which is no refusal). */
  function refused(method: string, err: unknown): unknown {
    if (err instanceof ServiceError && (err.status === 401 || err.status === 403 || err.status === 429)) options.signInFailed?.(method, err.status);
    return err;
  }

  async function pinSubject(db: DatabaseInfo, user: Pick<UserRecord, 'id' | 'tenant' | 'subjectId'>, identity: ExternalIdentity) {
    const { subjectId } = identity;
    if (subjectId === undefined) return;
    // A user pinned once signs in only with the identifier: leaving it out must not get around the check.
    if (subjectId === null) {
      if (user.subjectId) throw unauthenticated();
      return;
    }
    // Without storage a pin cannot be kept, and an unchecked identifier must not pass.
    if (!knex) throw unauthenticated();
    settle(await checkSubject(knex, db.name, user, subjectId, identity.loginId));
  }

  /** A new pin makes remembered sign-ins without an identifier stale; a mismatch is a 401. */
  function settle(check: SubjectCheck) {
    if (check === 'mismatch') throw unauthenticated();
    if (check === 'pinned') forgetAssignments();
  }

  /** A system administrator's identifier is pinned service-wide, before any database or user is looked at. */
  async function pinAdminSubject(identity: ExternalIdentity) {
    const { loginId, subjectId } = identity;
    if (subjectId === undefined || !directory.isSystemAdmin(loginId)) return;
    if (!knex) throw unauthenticated();
    const check: SubjectCheck = subjectId !== null
      ? await checkAdminSubject(knex, loginId, subjectId)
      : (await adminSubjectOf(knex, loginId)) === null ? 'match' : 'mismatch';
    settle(check);
  }

  /**
   * A driver passes on what its source sent. A login ID or subject identifier
   * that the database cannot hold identifies no one (401); other text it
   * cannot hold is left out rather than failing the sign-in.
   */
  function checked(identity: ExternalIdentity): ExternalIdentity {
    const storable = (v: unknown): v is string => typeof v === 'string' && !v.includes('\u0000');
    if (!storable(identity.loginId) || !identity.loginId || /[\u0000-\u001f\u007f]/.test(identity.loginId)) throw unauthenticated();
    if (identity.subjectId !== undefined && identity.subjectId !== null && (!storable(identity.subjectId) || !identity.subjectId)) throw unauthenticated();
    const out: ExternalIdentity = { loginId: identity.loginId };
    if (identity.subjectId !== undefined) out.subjectId = identity.subjectId;
    for (const name of ['tenantId', 'familyName', 'givenName', 'tenantName', 'commonName'] as const) {
      if (storable(identity[name]) && identity[name]) out[name] = identity[name];
    }
    if (Array.isArray(identity.groups)) out.groups = identity.groups.filter(storable);
    return out;
  }

  async function assign(identity: ExternalIdentity, db: DatabaseInfo | null, requestedTenant: string | undefined, method: string): Promise<Principal> {
    identity = checked(identity);
    const { loginId } = identity;
    await pinAdminSubject(identity);
    // Service-wide calls (/api/admin) have no tenant: only system administrators may make them, by any method.
    if (!db) {
      if (directory.isSystemAdmin(loginId)) return { loginId, accessLevel: 'ADMINISTRATOR', systemAdmin: true, method };
      throw createError('FORBIDDEN');
    }
    const login = await directory.loginTenant(db, loginId, requestedTenant, identity.tenantName);
    const decision = await decideAccess(login, identity, () => rules?.rulesOf(db.name, login.tenant) ?? Promise.resolve([]), rulesEnabled);
    switch (decision.kind) {
      case 'user':
        await pinSubject(db, decision.user, identity);
        return directory.principalOf(login, loginId, method)!;
      case 'systemAdministrator':
        return directory.principalOf(login, loginId, method)!;
      case 'rule': {
        const { rule, index } = decision;
        if (rule.action === 'GRANT') return ruleGrant(login, loginId, rule.accessLevel!, method, index);
        if (rule.action === 'CREATE' && knex) return ruleCreate(db, login, identity, rule, method);
        throw createError('FORBIDDEN');
      }
      default:
        throw createError('FORBIDDEN');
    }
  }

  function ruleGrant(login: LoginTenant, loginId: string, accessLevel: AccessLevel, method: string, index: number): Principal {
    return { loginId, tenant: login.tenant, tenantLabel: login.tenantLabel, accessLevel, systemAdmin: false, method, accessRule: index };
  }

  async function ruleCreate(db: DatabaseInfo, login: LoginTenant, identity: ExternalIdentity, rule: AccessRule, method: string): Promise<Principal> {
    const { user, created } = await createRuleUser(knex!, db, login.tenant, identity, { accessLevel: rule.accessLevel!, organization: rule.organization });
    // A request at the same moment made the user: it is now an existing user, pinned like any other.
    if (!created) await pinSubject(db, { id: user.id, tenant: user.tenant, subjectId: user.props.subjectId ?? null }, identity);
    return {
      loginId: identity.loginId, tenant: login.tenant, tenantLabel: login.tenantLabel, userId: user.id, method, systemAdmin: false,
      accessLevel: user.props.accessLevel ?? 'READ_ONLY',
    };
  }

  async function signIn(ctx: Context, db: DatabaseInfo | null): Promise<SignIn> {
    const requestedTenant = ctx.get('service-tenant') || undefined;
    for (const driver of drivers) {
      let result;
      try {
        result = await driver.authenticate({ ctx, db, requestedTenant });
        if (!result) continue;
        if (result.kind === 'principal') return { principal: result.principal, method: driver.name };
        const method = result.method ?? driver.name;
        const tenant = result.requestedTenant !== undefined ? result.requestedTenant || undefined : requestedTenant;
        const principal = await remembered(result.identity, db, tenant, method);
        return { principal, method, identity: checked(result.identity) };
      } catch (err) {
        throw refused(driver.name, rejected(err));
      }
    }
    throw refused('none', unauthenticated());
  }

  /**
   * A call of the service's own pages (it carries their anti-forgery token) gets its 401 without
   * challenges: a browser would answer one with its own password dialog.
   */
  async function signInOrRefuse(ctx: Context, db: DatabaseInfo | null): Promise<SignIn> {
    try {
      return await signIn(ctx, db);
    } catch (err) {
      if (err instanceof ServiceError && err.status === 401 && ctx.get('x-csrf-token') && err.headers['WWW-Authenticate']) {
        const { 'WWW-Authenticate': _challenge, ...headers } = err.headers;
        throw createError(err.code, err.params, err.violations, headers);
      }
      throw err;
    }
  }

  return {
    challenges,
    signIn: signInOrRefuse,
    async authenticate(ctx, db) {
      return (await signInOrRefuse(ctx, db)).principal;
    },
    forgetAssignments,
  };
}

export function atLeast(principal: Principal, level: AccessLevel): boolean {
  return ACCESS_LEVELS.indexOf(principal.accessLevel) >= ACCESS_LEVELS.indexOf(level);
}

export function requireLevel(principal: Principal, level: AccessLevel) {
  if (!atLeast(principal, level)) throw createError('FORBIDDEN');
}
