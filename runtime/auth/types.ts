/**
 * The authentication interface. A driver reads its method's credentials from
 * the request; the core (runtime/auth/directory.ts) assigns them to a user in
 * a tenant following the specification's login-tenant rules.
 */
import type { Context } from 'koa';

export type AccessLevel = 'READ_ONLY' | 'EDITOR' | 'ADMINISTRATOR';

export const ACCESS_LEVELS: AccessLevel[] = ['READ_ONLY', 'EDITOR', 'ADMINISTRATOR'];

export interface Principal {
  loginId: string;
  /** The login tenant's technical key (absent for service-wide admin calls). */
  tenant?: string;
  tenantLabel?: string;
  accessLevel: AccessLevel;
  systemAdmin: boolean;
  userId?: string;
  method: string;
  /** The access key that identified the caller (its id, never the key). */
  accessKeyId?: string;
  /** The position of the access rule that let an external user in without a user of its own (GRANT). */
  accessRule?: number;
}

/** What an external method (directory, identity provider, proxy) says about the caller. */
export interface ExternalIdentity {
  loginId: string;
  groups?: string[];
  tenantId?: string;
  familyName?: string;
  givenName?: string;
  /** Overrides the default tenant in the login-tenant rules. */
  tenantName?: string;
  /** The user's whole name (directory common name, `SERVICE_OIDC_JWT_USER_NAME`), when family and given name are not known apart. */
  commonName?: string;
  /**
   * The provider's Subject Identifier (`SERVICE_OIDC_JWT_SUB_ID`): the core
   * stores it on a user (or system administrator) that has none and rejects
   * (401) a later sign-in whose identifier differs. Null when the method pins
   * subjects but the request brought none (pre-authentication without its
   * JWT): refused for whoever has one pinned. Undefined when the method does
   * not pin subjects.
   */
  subjectId?: string | null;
}

export interface DatabaseInfo {
  name: string;
  defaultTenant: string;
}

export interface UserRecord {
  id: string;
  tenant: string;
  tenantLabel: string;
  loginId: string;
  accessLevel: AccessLevel;
  defaultTenant: boolean;
  /** The Subject Identifier pinned to the user, if any. */
  subjectId?: string | null;
}

export interface LoginTenant {
  tenant: string;
  tenantLabel: string;
  /** The user with the login ID in that tenant; null if there is none, or more than one to choose from. */
  user: UserRecord | null;
  systemAdmin: boolean;
  /** More than one user with the login ID in that tenant: no one can tell which is meant. */
  ambiguous?: boolean;
}

/** The core services a driver may use. */
export interface Directory {
  isSystemAdmin(loginId: string): boolean;
  /** Applies the six login-tenant rules; throws 403 when `service-tenant` names a tenant that does not exist. */
  loginTenant(db: DatabaseInfo, loginId: string, requestedTenant: string | undefined, defaultTenantName?: string): Promise<LoginTenant>;
  /**
   * The same rules, but null when `service-tenant` names no tenant: a method
   * that has not verified the caller yet must not answer differently for it.
   */
  findLoginTenant(db: DatabaseInfo, loginId: string, requestedTenant: string | undefined, defaultTenantName?: string): Promise<LoginTenant | null>;
  /** The principal for an assigned user or system administrator; null if the login ID has no access to the tenant. */
  principalOf(login: LoginTenant, loginId: string, method: string): Principal | null;
}

export interface AuthRequest {
  ctx: Context;
  /** null for service-wide calls (/api/admin). */
  db: DatabaseInfo | null;
  /** The `service-tenant` header. */
  requestedTenant?: string;
}

export type AuthResult =
  | { kind: 'principal'; principal: Principal }
  | {
    kind: 'external';
    identity: ExternalIdentity;
    /** The login tenant to apply the rules for instead of the request's `service-tenant` (a session remembers the one it was opened with). */
    requestedTenant?: string;
    /** The method to name on the principal instead of the driver's (a session names the method that opened it). */
    method?: string;
  };

export interface AuthDriver {
  name: string;
  /** The WWW-Authenticate challenge of this method, if it has one. */
  challenge?(): string;
  /** null: the request carries no credentials of this method. Throws a 401/429 ServiceError for bad ones. */
  authenticate(request: AuthRequest): Promise<AuthResult | null>;
}
