import { expect } from 'chai';
import type { Context } from 'koa';
import { createAuthenticator, requireLevel } from '../../runtime/auth/middleware.ts';
import type { AuthDriver, AuthResult, Directory, LoginTenant, Principal } from '../../runtime/auth/types.ts';
import { ServiceError } from '../../runtime/errors.ts';

const db = { name: 'sales', defaultTenant: 't-default' };

/** A directory with one tenant, Default, where only `known` has a user. */
const directory: Directory = {
  isSystemAdmin: (loginId) => loginId === 'root',
  async findLoginTenant(_db, loginId, requestedTenant) {
    if (requestedTenant !== undefined && requestedTenant !== 'Default') return null;
    const user = loginId === 'known' ? { id: 'u1', tenant: 't-default', tenantLabel: 'Default', loginId, accessLevel: 'EDITOR' as const, defaultTenant: false } : null;
    return { tenant: 't-default', tenantLabel: 'Default', user, systemAdmin: loginId === 'root' };
  },
  async loginTenant(d, loginId, requestedTenant) {
    const login = await this.findLoginTenant(d, loginId, requestedTenant);
    if (!login) throw new ServiceError('FORBIDDEN');
    return login;
  },
  principalOf(login: LoginTenant, loginId, method): Principal | null {
    if (!login.user && !login.systemAdmin) return null;
    return { loginId, tenant: login.tenant, accessLevel: login.systemAdmin ? 'ADMINISTRATOR' : login.user!.accessLevel, systemAdmin: login.systemAdmin, method };
  },
};

/** A verifying external method (a directory service, say) that vouches for the login ID in a header. */
function externalDriver(): AuthDriver {
  return {
    name: 'external',
    challenge: () => 'External realm="x"',
    async authenticate({ ctx }): Promise<AuthResult | null> {
      const loginId = ctx.get('x-login');
      return loginId ? { kind: 'external', identity: { loginId } } : null;
    },
  };
}

function context(headers: Record<string, string>): Context {
  return { get: (name: string) => headers[name.toLowerCase()] ?? '' } as unknown as Context;
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected a rejection');
}

describe('authenticator (runtime/auth/middleware)', () => {
  const authenticator = createAuthenticator([externalDriver()], directory);

  it('answers 401 with a challenge of every enabled method when no method finds credentials', async () => {
    const err = await failure(authenticator.authenticate(context({}), db));
    expect(err.status).to.equal(401);
    expect(err.headers['WWW-Authenticate']).to.equal('External realm="x"');
  });

  it('answers 403 to a verified identity without a user in the login tenant (no access rules apply)', async () => {
    expect((await failure(authenticator.authenticate(context({ 'x-login': 'stranger' }), db))).status).to.equal(403);
  });

  it('answers 403 to a verified identity for a service-tenant that does not exist or where it has no user', async () => {
    expect((await failure(authenticator.authenticate(context({ 'x-login': 'known', 'service-tenant': 'Nope' }), db))).status).to.equal(403);
    expect((await failure(authenticator.authenticate(context({ 'x-login': 'stranger', 'service-tenant': 'Default' }), db))).status).to.equal(403);
  });

  it('answers 403 to a verified identity that is not a system administrator on service-wide calls', async () => {
    expect((await failure(authenticator.authenticate(context({ 'x-login': 'known' }), null))).status).to.equal(403);
  });

  it('assigns a verified identity to its user, and a system administrator without one', async () => {
    expect(await authenticator.authenticate(context({ 'x-login': 'known' }), db)).to.include({ loginId: 'known', accessLevel: 'EDITOR', systemAdmin: false, method: 'external' });
    expect(await authenticator.authenticate(context({ 'x-login': 'root' }), db)).to.include({ accessLevel: 'ADMINISTRATOR', systemAdmin: true });
  });

  it('orders the access levels READ_ONLY < EDITOR < ADMINISTRATOR', () => {
    const p = (accessLevel: Principal['accessLevel']): Principal => ({ loginId: 'x', accessLevel, systemAdmin: false, method: 'm' });
    expect(() => requireLevel(p('EDITOR'), 'EDITOR')).to.not.throw();
    expect(() => requireLevel(p('ADMINISTRATOR'), 'EDITOR')).to.not.throw();
    expect(() => requireLevel(p('READ_ONLY'), 'EDITOR')).to.throw(ServiceError);
    expect(() => requireLevel(p('EDITOR'), 'ADMINISTRATOR')).to.throw(ServiceError);
  });
});
