import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as argon2 from 'argon2';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { createService } from '../../runtime/app.ts';
import { PLUGINS } from '../../plugins/index.ts';
import { createDatabase, logLines, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { createUser, expectNoSecretInLog, secret, storedCredential, type Credentials } from './fixtures.ts';

const OWASP_HASH = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$([A-Za-z0-9+/]+)\$[A-Za-z0-9+/]+$/;

function pepper(id: string): { id: string; value: string; entry: string } {
  const value = randomBytes(24).toString('base64');
  return { id, value, entry: `${id}=${value}` };
}

async function signsIn(t: TestService, db: string, c: Credentials): Promise<number> {
  return (await t.request(`/rest/${db}/tenants`, { auth: c })).status;
}

describe('password storage (argon2id, salt, pepper)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mms-passwords-'));
  const [p1, p2, p3] = [pepper('p1'), pepper('p2'), pepper('p3')];
  const anna = { loginId: 'anna', password: secret('annas-Passwort-Ä1') };
  const otto = { loginId: 'otto', password: secret('annas-Passwort-Ä1') };
  let t: TestService;
  let db: string;
  const ids: Record<string, string> = {};

  /** A restart of the service on the same storage, with another pepper store. */
  async function restart(pepperStore: string) {
    await t?.close();
    // These tests change stored hashes behind the service's back, which no remembered sign-in would notice.
    t = await startService({ SERVICE_DATA_DIR: dataDir, SERVICE_PEPPER_STORE: pepperStore, SERVICE_AUTH_CACHE_TTL: '0' });
  }

  before(async () => {
    await restart(p1.entry);
    db = await createDatabase(t);
    ids.anna = (await createUser(t, db, anna)).id as string;
    ids.otto = (await createUser(t, db, otto)).id as string;
  });
  after(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stores argon2id with m=19456,t=2,p=1, a unique salt per user, and the ID of the active pepper', async () => {
    const [a, o] = [await storedCredential(t, db, ids.anna), await storedCredential(t, db, ids.otto)];
    expect(a!.hash).to.match(OWASP_HASH);
    expect(o!.hash).to.match(OWASP_HASH);
    expect(OWASP_HASH.exec(a!.hash)![1]).to.not.equal(OWASP_HASH.exec(o!.hash)![1]);
    expect(a!.hash).to.not.equal(o!.hash);
    expect([a!.pepper_id, o!.pepper_id]).to.deep.equal(['p1', 'p1']);
  });

  it('keys the hash with the pepper: the stored hash alone does not verify the password', async () => {
    const { hash } = (await storedCredential(t, db, ids.anna))!;
    expect(await argon2.verify(hash, anna.password)).to.equal(false);
    expect(await argon2.verify(hash, anna.password, { secret: Buffer.from(p1.value, 'base64') })).to.equal(true);
  });

  it('after the pepper rotates, verifies the old password and renews its hash with the new pepper at that login', async () => {
    const before = (await storedCredential(t, db, ids.anna))!;
    await restart(`${p2.entry};${p1.entry}`);
    expect(await signsIn(t, db, anna)).to.equal(200);
    const after = (await storedCredential(t, db, ids.anna))!;
    expect(after.pepper_id).to.equal('p2');
    expect(after.hash).to.match(OWASP_HASH).and.not.equal(before.hash);
    expect(await signsIn(t, db, anna)).to.equal(200);
    expect((await storedCredential(t, db, ids.otto))!.pepper_id).to.equal('p1');
    const newcomer = await createUser(t, db, { loginId: 'neu', password: secret('neues-Passwort-2') });
    expect((await storedCredential(t, db, newcomer.id as string))!.pepper_id).to.equal('p2');
  });

  it('answers 401, not 500, for a hash whose pepper was removed from the store', async () => {
    await restart(p3.entry);
    const linesBefore = logLines.length;
    expect(await signsIn(t, db, anna)).to.equal(401);
    expect(await signsIn(t, db, otto)).to.equal(401);
    expect(logLines.slice(linesBefore).filter((l) => /"level":50/.test(l))).to.deep.equal([]);
  });

  for (const [variant, options] of [
    ['weaker parameters', { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 }],
    ['the argon2i variant', { type: argon2.argon2i, memoryCost: 19456, timeCost: 2, parallelism: 1 }],
  ] as const) {
    it(`renews a hash with ${variant} at the next login`, async () => {
      const weak = await argon2.hash(otto.password, { ...options, secret: Buffer.from(p3.value, 'base64') });
      await t.service.storage.knex.raw(`update "db_${db}".credentials set hash = ?, pepper_id = 'p3' where user_id = ?`, [weak, ids.otto]);
      expect(await signsIn(t, db, otto)).to.equal(200);
      const renewed = (await storedCredential(t, db, ids.otto))!;
      expect(renewed.hash).to.match(OWASP_HASH);
      expect(renewed.pepper_id).to.equal('p3');
      expect(await signsIn(t, db, otto)).to.equal(200);
    });
  }

  it('answers 401, not 500, for a stored hash that is damaged', async () => {
    await t.service.storage.knex.raw(`update "db_${db}".credentials set hash = '$argon2id$garbage', pepper_id = null where user_id = ?`, [ids.otto]);
    expect(await signsIn(t, db, otto)).to.equal(401);
  });

  it('stores no pepper ID without SERVICE_PEPPER_STORE', async () => {
    const plain = await startService();
    try {
      const name = await createDatabase(plain);
      const user = await createUser(plain, name, { loginId: 'plain', password: secret('plain-Passwort-3') });
      const stored = (await storedCredential(plain, name, user.id as string))!;
      expect(stored.pepper_id).to.equal(null);
      expect(stored.hash).to.match(OWASP_HASH);
      expect(await argon2.verify(stored.hash, 'plain-Passwort-3')).to.equal(true);
    } finally {
      await plain.close();
    }
  });

  it('writes no password and no pepper to the log', () => {
    expectNoSecretInLog([anna, otto]);
    for (const p of [p1, p2, p3]) expect(logLines.find((l) => l.includes(p.value))).to.equal(undefined);
  });
});

describe('settings that stop the start', () => {
  async function startFailure(env: Record<string, string>): Promise<Error> {
    try {
      const service = await createService(loadConfig({ PORT: '0', SERVICE_ADMIN_USER: 'admin', ...storageEnv(), ...env }), { plugins: PLUGINS });
      await service.close();
    } catch (err) {
      return err as Error;
    }
    throw new Error('the service started');
  }

  const secretValue = randomBytes(24).toString('base64');
  // Every malformed form is pinned in test/plugins/auth-basic/pepper.spec.ts; these prove they stop the start.
  const malformed: Record<string, string> = {
    'an entry without "="': secretValue,
    'a value shorter than 16 bytes': `p1=${randomBytes(8).toString('base64')}`,
  };
  for (const [what, store] of Object.entries(malformed)) {
    it(`refuses SERVICE_PEPPER_STORE with ${what}, naming the setting and not the secret`, async () => {
      const err = await startFailure({ SERVICE_PEPPER_STORE: store });
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).setting).to.equal('SERVICE_PEPPER_STORE');
      const value = store.slice(store.indexOf('=') + 1);
      expect(err.message).to.match(/^SERVICE_PEPPER_STORE: /).and.not.include(value);
    });
  }

  it('refuses SERVICE_ADMIN_PASSWORD shorter than 8 characters, naming it and not the password', async () => {
    for (const password of ['1234567', 'kurz', 'äöü']) {
      const err = await startFailure({ SERVICE_ADMIN_PASSWORD: password });
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).setting).to.equal('SERVICE_ADMIN_PASSWORD');
      expect(err.message).to.match(/^SERVICE_ADMIN_PASSWORD: /).and.not.include(password);
    }
  });

  it('accepts SERVICE_ADMIN_PASSWORD of exactly 8 characters, and the administrator signs in with it', async () => {
    const t = await startService({ SERVICE_ADMIN_PASSWORD: secret('acht-8-!') });
    try {
      expect((await t.request('/api/admin/databases', { auth: { loginId: 'admin', password: 'acht-8-!' } })).status).to.equal(200);
    } finally {
      await t.close();
    }
  });
});
