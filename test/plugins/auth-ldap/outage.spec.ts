/**
 * The directory away or misconfigured: the service answers 503 (its problem,
 * not the caller's), never 500 and never a sign-in, logs why without the
 * password, and signs people in again once the directory is back.
 */
import { expect } from 'chai';
import { createServer, type Server, type Socket } from 'node:net';
import { createUser, expectNoSecretInLog, secret } from '../../auth/fixtures.ts';
import type { Slapd } from '../../helpers/slapd.ts';
import { logLines, startService, type TestService } from '../../helpers/service.ts';
import { createDatabaseAs, credentials, directoryEnv, PEOPLE, startDirectory } from './people.ts';

describe('auth-ldap: the directory away', () => {
  let slapd: Slapd;
  const services: TestService[] = [];
  const admin = credentials(PEOPLE.admin);

  before(async () => {
    slapd = await startDirectory();
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((t) => t.close()));
    await slapd.resume();
  });
  after(async () => {
    await slapd?.close();
  });

  async function start(env: Record<string, string> = {}): Promise<TestService> {
    const t = await startService(directoryEnv(slapd, env));
    services.push(t);
    return t;
  }

  async function expectUnavailable(r: Response) {
    expect(r.status).to.equal(503);
    expect(r.headers.get('retry-after')).to.equal('5');
    const body = await r.json();
    expect(body).to.include({ statusCode: 503, method: 'GET' });
    expect(r.headers.get('www-authenticate')).to.equal(null);
  }

  it('answers 503 while slapd is stopped, and signs in again once it is back', async () => {
    const t = await start({ SERVICE_AUTH_CACHE_TTL: '0' });
    const db = await createDatabaseAs(t, admin);
    await createUser(t, db, { loginId: 'bob', accessLevel: 'READ_ONLY' }, admin);
    const path = `/rest/${db}/schemes`;
    expect((await t.request(path, { auth: credentials(PEOPLE.bob) })).status).to.equal(200);
    await slapd.stop();
    await expectUnavailable(await t.request(path, { auth: credentials(PEOPLE.bob) }));
    // Nobody gets in, an unknown login ID is not told apart, an administrator neither.
    await expectUnavailable(await t.request(path, { auth: { loginId: 'nobody', password: 'nobody-Password-1' } }));
    await expectUnavailable(await t.request('/api/admin/databases', { auth: admin }));
    // An empty password never reaches the directory: still a plain 401.
    expect((await t.request(path, { auth: { loginId: 'bob', password: '' } })).status).to.equal(401);
    await slapd.resume();
    expect((await t.request(path, { auth: credentials(PEOPLE.bob) })).status).to.equal(200);
  });

  it('keeps a sign-in verified just before the outage for SERVICE_AUTH_CACHE_TTL', async () => {
    const t = await start({ SERVICE_AUTH_CACHE_TTL: '60000' });
    const db = await createDatabaseAs(t, admin);
    await createUser(t, db, { loginId: 'alice', accessLevel: 'EDITOR' }, admin);
    await createUser(t, db, { loginId: 'bob', accessLevel: 'READ_ONLY' }, admin);
    const path = `/rest/${db}/schemes`;
    expect((await t.request(path, { auth: credentials(PEOPLE.alice) })).status).to.equal(200);
    await slapd.stop();
    expect((await t.request(path, { auth: credentials(PEOPLE.alice) })).status).to.equal(200);
    // Only exactly those credentials: another password of alice's is not vouched for.
    await expectUnavailable(await t.request(path, { auth: { loginId: 'alice', password: secret('alices-Other-1') } }));
    await expectUnavailable(await t.request(path, { auth: credentials(PEOPLE.bob) }));
  });

  it('starts while slapd is down, answers 503, and signs in once slapd is up', async () => {
    await slapd.stop();
    const t = await start();
    await expectUnavailable(await t.request('/api/admin/databases', { auth: admin }));
    await slapd.resume();
    expect((await t.request('/api/admin/databases', { auth: admin })).status).to.equal(200);
  });

  it('answers 503 when the search user\'s password is wrong, and logs it as an error without the password', async () => {
    const wrong = secret('not-the-Search-Password-1');
    const before = logLines.length;
    const t = await start({ SERVICE_JNDI_PASSWORD: wrong });
    await expectUnavailable(await t.request('/api/admin/databases', { auth: admin }));
    await expectUnavailable(await t.request('/api/admin/databases', { auth: credentials(PEOPLE.alice) }));
    const lines = logLines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
    const errors = lines.filter((l) => l.level === 50);
    expect(errors.map((l) => l.msg)).to.satisfy((msgs: string[]) => msgs.some((m) => /search user/.test(m)));
    expect(errors.every((l) => l.searchUser === slapd.searchDn)).to.equal(true);
    expectNoSecretInLog([admin, credentials(PEOPLE.alice)]);
  });

  describe('with a directory that takes connections and never answers', () => {
    let silent: Server;
    const sockets: Socket[] = [];
    before(async () => {
      silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => silent.close(resolve));
    });

    it('answers 503 after SERVICE_JNDI_READ_TIMEOUT, not after the client gave up', async () => {
      const port = (silent.address() as { port: number }).port;
      const t = await start({ SERVICE_JNDI_URL: `ldap://127.0.0.1:${port}`, SERVICE_JNDI_READ_TIMEOUT: '400' });
      const started = Date.now();
      await expectUnavailable(await t.request('/api/admin/databases', { auth: admin }));
      expect(Date.now() - started).to.be.below(3_000);
    });
  });

  it('answers 503 when nothing listens at the directory\'s address', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const t = await start({ SERVICE_JNDI_URL: `ldap://127.0.0.1:${port}` });
    await expectUnavailable(await t.request('/api/admin/databases', { auth: admin }));
  });
});
