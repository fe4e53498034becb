/**
 * Sign-in methods together: access keys beside every method, the switch of
 * access rules (SERVICE_ACCESS_RULES and its alias SERVICE_GUEST_USERS), and
 * the login-tenant rules for external identities. Services here are started
 * with a chosen set of plugins, so that a method's own plugin (a directory,
 * an identity provider) is not needed to see what the core does.
 */
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { createService } from '../../runtime/app.ts';
import { accessRulesEnabled } from '../../runtime/auth/access-rules.ts';
import type { PluginManifest } from '../../runtime/plugins.ts';
import type { ExternalIdentity } from '../../runtime/auth/types.ts';
import { manifest as access } from '../../plugins/access/index.ts';
import { manifest as authBasic } from '../../plugins/auth-basic/index.ts';
import { ADMIN, basic, createDatabase, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { createTenant, createUser, inTenant } from './fixtures.ts';
import { as, IDENTITY_HEADER, testIdentityPlugin } from './test-identity.ts';

/** A service with exactly these plugins; requests sign in as the external system administrator unless told otherwise. */
async function startWith(env: Record<string, string>, plugins: PluginManifest[]) {
  const config = loadConfig({ PORT: '0', SERVICE_ADMIN_USER: ADMIN.loginId, SERVICE_LOG_LEVEL: 'warn', ...storageEnv(), ...env });
  const service = await createService(config, { plugins, log: pino({ level: 'warn' }, new Writable({ write: (_c, _e, done) => done() })) });
  const port = await service.listen();
  const url = `http://127.0.0.1:${port}`;
  const request = (path: string, init: RequestInit & { json?: unknown; identity?: ExternalIdentity | null } = {}) => {
    const headers = new Headers(init.headers);
    const identity = init.identity === undefined ? { loginId: ADMIN.loginId } : init.identity;
    if (identity) headers.set(IDENTITY_HEADER, as(identity).headers[IDENTITY_HEADER]);
    if (init.json !== undefined) headers.set('content-type', 'application/json');
    return fetch(url + path, { ...init, headers, body: init.json === undefined ? init.body : JSON.stringify(init.json) });
  };
  return { service, request, close: () => service.close() };
}

async function startFails(env: Record<string, string>): Promise<unknown> {
  try {
    const s = await startWith(env, [access, authBasic]);
    await s.close();
  } catch (err) {
    return err;
  }
  throw new Error('the service started');
}

describe('sign-in methods together', () => {
  describe('SERVICE_ACCESS_RULES and SERVICE_GUEST_USERS', () => {
    it('are on by default; the newer name wins when both are set', () => {
      expect(accessRulesEnabled({})).to.equal(true);
      expect(accessRulesEnabled({ SERVICE_ACCESS_RULES: 'false' })).to.equal(false);
      expect(accessRulesEnabled({ SERVICE_ACCESS_RULES: ' TRUE ' })).to.equal(true);
      expect(accessRulesEnabled({ SERVICE_GUEST_USERS: 'false' })).to.equal(false);
      expect(accessRulesEnabled({ SERVICE_ACCESS_RULES: 'true', SERVICE_GUEST_USERS: 'false' })).to.equal(true);
      expect(accessRulesEnabled({ SERVICE_ACCESS_RULES: 'false', SERVICE_GUEST_USERS: 'true' })).to.equal(false);
      expect(accessRulesEnabled({ SERVICE_ACCESS_RULES: '', SERVICE_GUEST_USERS: 'false' })).to.equal(false);
      expect(() => accessRulesEnabled({ SERVICE_ACCESS_RULES: 'yes' })).to.throw(ConfigError, /SERVICE_ACCESS_RULES/);
      expect(() => accessRulesEnabled({ SERVICE_GUEST_USERS: '0' })).to.throw(ConfigError, /SERVICE_GUEST_USERS/);
    });

    it('stop the start, naming the setting, when they are not true or false', async () => {
      const err = await startFails({ SERVICE_ACCESS_RULES: 'maybe' });
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).setting).to.equal('SERVICE_ACCESS_RULES');
      expect(((await startFails({ SERVICE_GUEST_USERS: 'on' })) as ConfigError).setting).to.equal('SERVICE_GUEST_USERS');
    });

    for (const [env, enabled] of [[{ SERVICE_ACCESS_RULES: 'false' }, false], [{ SERVICE_GUEST_USERS: 'false' }, false], [{ SERVICE_ACCESS_RULES: 'true', SERVICE_GUEST_USERS: 'false' }, true]] as const) {
      it(`${enabled ? 'evaluate' : 'deny every external user without a user, but not users,'} with ${JSON.stringify(env)}`, async () => {
        const s = await startWith(env, [access, authBasic, testIdentityPlugin]);
        try {
          const db = `m_${randomUUID().slice(0, 8)}`;
          expect((await s.request('/api/admin/databases', { method: 'POST', json: { name: db } })).status).to.equal(201);
          expect((await s.request(`/rest/${db}/tenants/Default/accessRules`, { method: 'PUT', json: [{ condition: null, action: 'CREATE', accessLevel: 'EDITOR' }] })).status).to.equal(200);
          expect((await s.request(`/rest/${db}/users`, { method: 'POST', json: { _type: 'User', loginId: 'member', accessLevel: 'READ_ONLY' } })).status).to.equal(201);
          expect((await s.request(`/rest/${db}/schemes`, { identity: { loginId: 'guest', groups: ['g'] } })).status).to.equal(enabled ? 200 : 403);
          expect((await s.request(`/rest/${db}/schemes`, { identity: { loginId: 'member' } })).status).to.equal(200);
          const explained = await (await s.request(`/rest/${db}/tenants/Default/accessRules/explain`, { method: 'POST', json: { loginId: 'other' } })).json();
          expect(explained).to.deep.equal(enabled
            ? { rule: 0, action: 'CREATE', accessLevel: 'EDITOR', user: null, reason: 'rule', matched: {} }
            : { rule: null, action: 'DENY', accessLevel: null, user: null, reason: 'accessRulesDisabled', matched: null });
        } finally {
          await s.close();
        }
      });
    }
  });

  describe('with password login off (a directory method on)', () => {
    let s: Awaited<ReturnType<typeof startWith>>;
    let db: string;
    let key: string;
    before(async () => {
      // The directory's own plugin is left out: its sign-ins are stood in for by the test method, declared as the directory's.
      const directoryStandIn: PluginManifest = { ...testIdentityPlugin, name: 'directory-stand-in', method: { name: 'directory', on: { setting: 'SERVICE_JNDI_AUTHENTICATION' }, phase: 'credentials' } };
      s = await startWith({ SERVICE_JNDI_AUTHENTICATION: 'true', SERVICE_ADMIN_PASSWORD: ADMIN.password }, [access, authBasic, directoryStandIn]);
      db = `m_${randomUUID().slice(0, 8)}`;
      await s.request('/api/admin/databases', { method: 'POST', json: { name: db } });
      const user = await (await s.request(`/rest/${db}/users`, { method: 'POST', json: { _type: 'User', loginId: 'robot', accessLevel: 'EDITOR', serviceUser: true } })).json();
      key = (await (await s.request(`/rest/${db}/users/${user.id}/accessKeys`, { method: 'POST', json: { description: 'robot' } })).json()).key;
    });
    after(async () => s?.close());

    it('accepts access keys, and no password', async () => {
      const r = await s.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'By robot' }, identity: null, headers: { 'service-access-key': key } });
      expect(r.status).to.equal(201);
      expect((await r.json()).createdBy).to.equal('robot');
      const withPassword = await s.request(`/rest/${db}/schemes`, { identity: null, headers: { authorization: basic(ADMIN.loginId, ADMIN.password) } });
      expect(withPassword.status).to.equal(401);
    });

    it('lets the key decide over another method\'s credentials in the same request', async () => {
      const r = await s.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Key first' }, identity: { loginId: ADMIN.loginId }, headers: { 'service-access-key': key } });
      expect((await r.json()).createdBy).to.equal('robot');
      const bad = await s.request(`/rest/${db}/schemes`, { identity: { loginId: ADMIN.loginId }, headers: { 'service-access-key': 'mdsk_guessed' } });
      expect(bad.status).to.equal(401);
    });
  });

  describe('login tenant of external identities', () => {
    let t: TestService;
    let db: string;
    const tenantOf = async (identity: ExternalIdentity, headers: Record<string, string> = {}) => {
      const r = await t.request(`/rest/${db}/tenants`, as(identity, headers));
      expect(r.status, JSON.stringify(identity)).to.equal(200);
      return (await r.json())._embedded.tenants.map((x: { label: string }) => x.label).join(',');
    };
    before(async () => {
      t = await startService({}, { plugins: [testIdentityPlugin] });
      db = await createDatabase(t);
      for (const label of ['Alpha', 'Second']) await createTenant(t, db, label);
      await createUser(t, db, { loginId: 'only-second', tenant: 'Second' });
      await createUser(t, db, { loginId: 'marked', tenant: 'Default' });
      await createUser(t, db, { loginId: 'marked', tenant: 'Alpha', defaultTenant: true });
      await createUser(t, db, { loginId: 'both', tenant: 'Alpha' });
      await createUser(t, db, { loginId: 'both', tenant: 'Default' });
      await createUser(t, db, { loginId: 'both', tenant: 'Second' });
    });
    after(async () => t?.close());

    it('follows the six rules, with the method\'s tenant name in place of the default tenant', async () => {
      expect(await tenantOf({ loginId: 'marked' }, inTenant('Default'))).to.equal('Default');
      expect(await tenantOf({ loginId: 'marked' })).to.equal('Alpha');
      expect(await tenantOf({ loginId: 'both' })).to.equal('Default');
      expect(await tenantOf({ loginId: 'both', tenantName: 'Second' })).to.equal('Second');
      expect(await tenantOf({ loginId: 'only-second' })).to.equal('Second');
      expect(await tenantOf({ loginId: 'marked', tenantName: 'Second' })).to.equal('Alpha');
      const admin = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'A' }, ...as({ loginId: ADMIN.loginId, tenantName: 'Second' }) });
      expect((await admin.json()).tenant).to.equal((await (await t.request(`/rest/${db}/tenants/Second`)).json()).id);
    });

    it('rejects (403) a verified identity without access to the login tenant, and (401) one the database cannot hold', async () => {
      expect((await t.request(`/rest/${db}/schemes`, as({ loginId: 'only-second' }, inTenant('Alpha')))).status).to.equal(403);
      expect((await t.request(`/rest/${db}/schemes`, as({ loginId: 'nobody' }))).status).to.equal(403);
      expect((await t.request(`/rest/${db}/schemes`, as({ loginId: 'nul\u0000id' }))).status).to.equal(401);
      expect((await t.request(`/rest/${db}/schemes`, as({ loginId: '' }))).status).to.equal(401);
      expect((await t.request(`/rest/${db}/schemes`, as({ loginId: 'only-second', subjectId: 'a\u0000b' }))).status).to.equal(401);
      // Text it cannot hold elsewhere in the identity is left out.
      expect((await t.request(`/rest/${db}/schemes`, as({ loginId: 'only-second', tenantName: 'x\u0000', givenName: '\u0000', groups: ['\u0000'] }))).status).to.equal(200);
      await t.request(`/rest/${db}/tenants/Default/accessRules`, { method: 'PUT', json: [{ action: 'CREATE', accessLevel: 'READ_ONLY' }] });
      expect((await t.request(`/rest/${db}/schemes`, as({ loginId: 'made', givenName: 'Bad\u0000Name', familyName: 'Good' }))).status).to.equal(200);
      const [made] = (await (await t.request(`/rest/${db}/users?loginId=made`)).json())._embedded.users;
      expect(made).to.include({ familyName: 'Good' }).and.not.have.property('givenName');
    });
  });
});
