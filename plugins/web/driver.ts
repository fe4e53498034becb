/**
 * The session cookie as a sign-in method of the programming interfaces the
 * pages call (`/rest/<db>`, `/api/<db>`, `/api/admin`): accepted only
 * together with a matching `X-CSRF-Token` header and only for the session's
 * own scope. Without the header, with a wrong one, or with the cookie of
 * another scope, the driver steps aside (null), so a cookie alone is a 401:
 * a form another site posts, or a link it makes, carries no token.
 *
 * On every request the person is signed in again from what the session
 * keeps, so a removed user, a changed access level or a DENY rule takes
 * effect at once: an external identity goes through the core's assignment
 * (login-tenant rules, access rules, subject pinning); a password user is
 * looked up again in the login tenant.
 */
import { createError, type AuthDriver, type AuthRequest, type AuthResult, type Directory, type Principal } from '../../runtime/host.ts';
import { cookieName, cookieOf, csrfMatches, type Session, type SessionStore } from './sessions.ts';

export const CSRF_HEADER = 'x-csrf-token';
export const METHOD = 'web-session';

/**
 * The scope a request names: its database, or null for `/api/admin/…` and
 * the pages' own addresses (`/web/session`, the shell of `/web/admin`);
 * undefined when no session may serve it.
 */
export function scopeOf({ ctx, db }: Pick<AuthRequest, 'ctx' | 'db'>): string | null | undefined {
  if (db) return db.name;
  return ctx.path.startsWith('/api/admin/') || ctx.path === '/web' || ctx.path.startsWith('/web/') ? null : undefined;
}

export class SessionDriver implements AuthDriver {
  readonly name = METHOD;

  constructor(private readonly sessions: SessionStore, private readonly directory: Directory) {}

  async authenticate(request: AuthRequest): Promise<AuthResult | null> {
    const found = await this.sessionOf(request);
    if (!found) return null;
    return this.signInAgain(found, request);
  }

  /** The live session the request's cookie and token name for its scope, or null. */
  async sessionOf({ ctx, db }: Pick<AuthRequest, 'ctx' | 'db'>): Promise<Session | null> {
    const scope = scopeOf({ ctx, db });
    if (scope === undefined) return null;
    const token = ctx.get(CSRF_HEADER);
    if (!token) return null;
    const value = cookieOf(ctx.get('cookie'), cookieName(scope));
    if (!value || !csrfMatches(value, token)) return null;
    const session = await this.sessions.find(value);
    if (!session || session.scope !== scope) return null;
    return session;
  }

  private async signInAgain(session: Session, { db }: AuthRequest): Promise<AuthResult> {
    if (session.kind === 'external' && session.identity) {
      return { kind: 'external', identity: { ...session.identity }, requestedTenant: session.tenant ?? '', method: session.method };
    }
    return { kind: 'principal', principal: await this.passwordPrincipal(session, db) };
  }

  /** A user of the service's own passwords, as the login tenant holds them now. */
  private async passwordPrincipal(session: Session, db: AuthRequest['db']): Promise<Principal> {
    const { loginId, method } = session;
    if (!db) {
      if (this.directory.isSystemAdmin(loginId)) return { loginId, accessLevel: 'ADMINISTRATOR', systemAdmin: true, method };
      throw createError('UNAUTHENTICATED');
    }
    // The person was verified when the session opened: a tenant that does not exist, or holds no access, is a 403 as for Basic sign-in.
    const login = await this.directory.loginTenant(db, loginId, session.tenant ?? undefined);
    const principal = this.directory.principalOf(login, loginId, method);
    if (!principal) throw createError(session.tenant ? 'FORBIDDEN' : 'UNAUTHENTICATED');
    return principal;
  }
}
