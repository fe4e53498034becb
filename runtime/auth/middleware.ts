/**
 * Runs the authentication drivers in order and puts the principal on the
 * request. The first driver that finds its credentials decides; with none,
 * the answer is 401 with a challenge for every enabled method.
 */
import type { Context } from 'koa';
import { createError } from '../errors.ts';
import type { AccessLevel, AuthDriver, DatabaseInfo, Directory, Principal } from './types.ts';
import { ACCESS_LEVELS } from './types.ts';

export interface Authenticator {
  authenticate(ctx: Context, db: DatabaseInfo | null): Promise<Principal>;
  challenges(): string[];
}

export function createAuthenticator(drivers: AuthDriver[], directory: Directory): Authenticator {
  const challenges = () => drivers.map((d) => d.challenge?.()).filter((c): c is string => !!c);
  const unauthenticated = () => createError('UNAUTHENTICATED', {}, [], challenges().length ? { 'WWW-Authenticate': challenges().join(', ') } : {});

  return {
    challenges,
    async authenticate(ctx, db) {
      const requestedTenant = ctx.get('service-tenant') || undefined;
      for (const driver of drivers) {
        const result = await driver.authenticate({ ctx, db, requestedTenant });
        if (!result) continue;
        if (result.kind === 'principal') return result.principal;
        if (!db) throw createError('FORBIDDEN');
        const login = await directory.loginTenant(db, result.identity.loginId, requestedTenant, result.identity.tenantName);
        const principal = directory.principalOf(login, result.identity.loginId, driver.name);
        // Access rules for external users without a user come with the external methods.
        if (!principal) throw createError('FORBIDDEN');
        return principal;
      }
      throw unauthenticated();
    },
  };
}

export function atLeast(principal: Principal, level: AccessLevel): boolean {
  return ACCESS_LEVELS.indexOf(principal.accessLevel) >= ACCESS_LEVELS.indexOf(level);
}

export function requireLevel(principal: Principal, level: AccessLevel) {
  if (!atLeast(principal, level)) throw createError('FORBIDDEN');
}
