import { expect } from 'chai';
import type { Context } from 'koa';
import { BasicDriver, PasswordStore, parseBasic } from '../../../plugins/auth-basic/index.ts';
import { CredentialCache } from '../../../runtime/auth/credential-cache.ts';
import { parsePepperStore } from '../../../plugins/auth-basic/pepper.ts';
import { PasswordHasher, type PasswordCheck, type StoredPassword } from '../../../plugins/auth-basic/passwords.ts';
import { SignInThrottle } from '../../../runtime/auth/throttle.ts';
import { createDirectory } from '../../../runtime/auth/directory.ts';
import type { DatabaseInfo, Principal } from '../../../runtime/auth/types.ts';
import { ServiceError } from '../../../runtime/errors.ts';
import { ADMIN, basic, createDatabase, startService, type TestService } from '../../helpers/service.ts';

/** Counts the argon2 verifications the driver asks for. */
class CountingHasher extends PasswordHasher {
  verifications = 0;
  /** While set, every verification waits for it: shows who waits for a hash. */
  gate?: Promise<void>;
  override async verify(password: string, stored: StoredPassword): Promise<PasswordCheck> {
    this.verifications++;
    await this.gate;
    return super.verify(password, stored);
  }
}

describe('BasicDriver', () => {
  let t: TestService;
  let db: DatabaseInfo;
  let userId: string;
  const bob = { loginId: 'bob', password: 'bobs-Passwort-1' };

  before(async () => {
    t = await startService();
    const name = await createDatabase(t);
    const r = await t.request(`/rest/${name}/users`, { method: 'POST', json: { _type: 'User', ...bob, accessLevel: 'EDITOR' } });
    userId = (await r.json()).id;
    db = (await t.service.databases.get(name))!;
  });
  after(() => t.close());

  /** The driver as the plugin builds it (no pepper, like the test service), with a counting hasher. */
  function driver(now: () => number = Date.now) {
    const knex = t.service.storage.knex;
    const hasher = new CountingHasher(parsePepperStore(undefined));
    const basicDriver = new BasicDriver({
      hasher, passwords: new PasswordStore(knex), directory: createDirectory(knex, [ADMIN.loginId]),
      cache: new CredentialCache<true>({ ttlMs: 60_000, now }), signIns: new CredentialCache<Principal>({ ttlMs: 60_000, now }),
      throttle: new SignInThrottle(), log: { warn: () => {} },
    });
    const signIn = (loginId: string, password: string, requestedTenant?: string) => {
      const ctx = { get: (name: string) => (name.toLowerCase() === 'authorization' ? basic(loginId, password) : '') } as unknown as Context;
      return basicDriver.authenticate({ ctx, db, requestedTenant });
    };
    return { hasher, signIn, basicDriver };
  }

  async function status(attempt: Promise<unknown>): Promise<number> {
    try {
      await attempt;
      return 200;
    } catch (err) {
      if (err instanceof ServiceError) return err.status;
      throw err;
    }
  }

  it('verifies a password once for many calls with the same credentials', async () => {
    const { hasher, signIn } = driver();
    for (let i = 0; i < 50; i++) {
      const result = await signIn(bob.loginId, bob.password);
      expect(result).to.deep.include({ kind: 'principal' });
    }
    expect(hasher.verifications).to.equal(1);
  });

  it('remembers no failed check, and verifies a changed password anew', async () => {
    const { hasher, signIn, basicDriver } = driver();
    await signIn(bob.loginId, bob.password);
    for (let i = 0; i < 3; i++) expect(await status(signIn(bob.loginId, 'wrong-Passwort'))).to.equal(401);
    expect(hasher.verifications).to.equal(4);
    const changed = 'bobs-Passwort-2';
    const r = await t.request(`/rest/${db.name}/users/${userId}`, { method: 'PATCH', json: { password: changed } });
    expect(r.status).to.equal(200);
    // The plugin wires this to every committed change of users; this driver is not the service's.
    basicDriver.forgetSignIns();
    expect(await status(signIn(bob.loginId, bob.password))).to.equal(401);
    expect(await status(signIn(bob.loginId, changed))).to.equal(200);
    expect(await status(signIn(bob.loginId, changed))).to.equal(200);
    expect(hasher.verifications).to.equal(6);
    await t.request(`/rest/${db.name}/users/${userId}`, { method: 'PATCH', json: { password: bob.password } });
  });

  /** Resolves once nothing is left to do but timers: background work started by a call has finished. */
  const settled = () => new Promise((r) => setTimeout(r, 300));

  it('signs a steady client in again in the background before its sign-in expires, so no call waits for the hash', async () => {
    let clock = 1_000_000;
    const { hasher, signIn } = driver(() => clock);
    await signIn(bob.loginId, bob.password);
    expect(hasher.verifications).to.equal(1);
    // Past half the lifetime: answered from memory, renewed behind it (the password check is still remembered).
    clock += 36_000;
    await signIn(bob.loginId, bob.password);
    await settled();
    // Past the first sign-in's expiry: still answered at once, while the hash runs behind it.
    clock += 36_000;
    let release!: () => void;
    hasher.gate = new Promise((r) => { release = r; });
    const answered = await Promise.race([signIn(bob.loginId, bob.password).then(() => 'answered'), settled().then(() => 'waited')]);
    expect(answered).to.equal('answered');
    await settled();
    expect(hasher.verifications).to.equal(2);
    release();
    hasher.gate = undefined;
    await settled();
    // A client gone quiet for the whole lifetime waits for a full check again.
    clock += 120_000;
    await signIn(bob.loginId, bob.password);
    expect(hasher.verifications).to.equal(3);
  });

  it('drops a remembered sign-in whose background renewal finds the password changed', async () => {
    let clock = 1_000_000;
    const { signIn } = driver(() => clock);
    await signIn(bob.loginId, bob.password);
    const r = await t.request(`/rest/${db.name}/users/${userId}`, { method: 'PATCH', json: { password: 'bobs-Passwort-3' } });
    expect(r.status).to.equal(200);
    try {
      // 40 s in, the renewal starts: the stored hash changed, so no remembered check matches, the old password fails,
      // and the sign-in is forgotten (this driver is not wired to the service's changes: only the renewal can tell).
      clock += 40_000;
      expect(await status(signIn(bob.loginId, bob.password))).to.equal(200);
      await settled();
      expect(await status(signIn(bob.loginId, bob.password))).to.equal(401);
      expect(await status(signIn(bob.loginId, 'bobs-Passwort-3'))).to.equal(200);
    } finally {
      await t.request(`/rest/${db.name}/users/${userId}`, { method: 'PATCH', json: { password: bob.password } });
    }
  });

  it('spends a verification on a login ID without a user too, so the time taken does not tell', async () => {
    const { hasher, signIn } = driver();
    expect(await status(signIn('nobody', 'some-Passwort'))).to.equal(401);
    expect(await status(signIn(bob.loginId, 'wrong-Passwort', 'No such tenant'))).to.equal(401);
    expect(await status(signIn(bob.loginId, bob.password, 'No such tenant'))).to.equal(403);
    expect(hasher.verifications).to.equal(3);
  });

  it('checks no password of a locked login ID, not even the right one', async () => {
    const { hasher, signIn } = driver();
    for (let i = 0; i < 5; i++) expect(await status(signIn(bob.loginId, `wrong-${i}`))).to.equal(401);
    expect(await status(signIn(bob.loginId, bob.password))).to.equal(429);
    expect(hasher.verifications).to.equal(5);
  });

  it('parses basic credentials, splitting at the first colon', () => {
    const header = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;
    expect(parseBasic(header('bob:pa:ss'))).to.deep.equal({ loginId: 'bob', password: 'pa:ss' });
    expect(parseBasic(header('bob:'))).to.deep.equal({ loginId: 'bob', password: '' });
    expect(parseBasic(header('bob'))).to.equal('malformed');
    expect(parseBasic(header(':pw'))).to.equal('malformed');
    expect(parseBasic(header('b\u0000b:pw'))).to.equal('malformed');
    expect(parseBasic('Basic !!!')).to.equal('malformed');
    expect(parseBasic('Bearer abc')).to.equal(null);
    expect(parseBasic('')).to.equal(null);
  });
});
