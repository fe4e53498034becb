/**
 * Lockout from the attacker's side: failed sign-ins lock the pair of client
 * address and login ID, and spend the address's budget, so that an attacker
 * slows down without locking out the person whose login ID it tries.
 */
import { expect } from 'chai';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { ADDRESS_LIMITS } from '../../runtime/auth/throttle.ts';
import { createUser, expectNoSecretInLog, secret } from './fixtures.ts';

const ATTACKER = '203.0.113.66';
const VICTIM = '198.51.100.7';

describe('lockout by client address', () => {
  let t: TestService;
  let db: string;
  const victim = { loginId: 'victim', password: secret('victims-Passwort-1') };

  /** A call as a proxy in front of the service forwards it: the client's address appended to X-Forwarded-For. */
  const from = (address: string, auth: { loginId: string; password: string } | null, forwarded = address, extra: Record<string, string> = {}) =>
    t.request(`/rest/${db}/tenants`, { auth, headers: { 'x-forwarded-for': forwarded, ...extra } });

  before(async () => {
    t = await startService({ SERVICE_TRUST_PROXY: 'true' });
    db = await createDatabase(t);
    await createUser(t, db, victim);
  });
  after(() => t.close());

  for (const [who, credentials] of [['a user', victim], ['the system administrator', ADMIN]] as const) {
    it(`locks the attacker's address for ${who}'s login ID (429, Retry-After), not ${who} signing in from another address`, async () => {
      for (let i = 0; i < 5; i++) expect((await from(ATTACKER, { ...credentials, password: `guess-${i}` })).status).to.equal(401);
      const locked = await from(ATTACKER, credentials);
      expect(locked.status).to.equal(429);
      expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 15 * 60);
      expect((await from(VICTIM, credentials)).status).to.equal(200);
      expect((await from(VICTIM, credentials)).status).to.equal(200);
    });
  }

  it('takes the address the proxy appended: what the client wrote into X-Forwarded-For before it changes nothing', async () => {
    const loginId = 'forger-target';
    for (let i = 0; i < 5; i++) {
      expect((await from(ATTACKER, { loginId, password: `guess-${i}` }, `10.9.9.${i}, ${ATTACKER}`)).status).to.equal(401);
    }
    expect((await from(ATTACKER, { loginId, password: 'guess-5' }, `${VICTIM}, ${ATTACKER}`)).status).to.equal(429);
  });

  it('throttles failed access keys per address: over the budget 429 for every key from there, another address unaffected', async () => {
    const [user] = (await (await t.request(`/rest/${db}/users?loginId=victim`)).json())._embedded.users;
    const { key } = await (await t.request(`/rest/${db}/users/${user.id}/accessKeys`, { method: 'POST', json: {} })).json();
    const withKey = (address: string, sent: string) => from(address, null, address, { 'service-access-key': sent });
    const guesses = Array.from({ length: ADDRESS_LIMITS.maxFailures! }, (_, i) => `mdsk_${String(i).padStart(43, 'x')}`);
    const statuses = [];
    for (const guess of guesses) statuses.push((await withKey('203.0.113.67', guess)).status);
    expect(new Set(statuses)).to.deep.equal(new Set([401]));
    const locked = await withKey('203.0.113.67', key);
    expect(locked.status).to.equal(429);
    expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 15 * 60);
    expect((await withKey('198.51.100.8', key)).status).to.equal(200);
    expect((await withKey('198.51.100.8', 'mdsk_not-a-key')).status).to.equal(401);
  });

  it('writes no password to the log', () => {
    expectNoSecretInLog([victim]);
  });
});

describe('lockout without a trusted proxy', () => {
  let t: TestService;
  let db: string;
  const member = { loginId: 'member', password: secret('members-Passwort-1') };

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createUser(t, db, member);
  });
  after(() => t.close());

  it('ignores X-Forwarded-For: a client cannot escape its lock by writing other addresses there', async () => {
    const call = (password: string, forwarded: string) => t.request(`/rest/${db}/tenants`, { auth: { ...member, password }, headers: { 'x-forwarded-for': forwarded } });
    for (let i = 0; i < 5; i++) expect((await call(`guess-${i}`, `10.0.0.${i}`)).status).to.equal(401);
    expect((await call(member.password, '10.0.0.99')).status).to.equal(429);
  });

  it('refuses a malformed SERVICE_TRUST_PROXY or SERVICE_TRUST_PROXY_HOPS at start, naming it', async () => {
    for (const [setting, value] of [['SERVICE_TRUST_PROXY', 'yes'], ['SERVICE_TRUST_PROXY_HOPS', '0'], ['SERVICE_TRUST_PROXY_HOPS', 'two']]) {
      let failure: unknown;
      try {
        const other = await startService({ [setting]: value });
        await other.close();
      } catch (err) {
        failure = err;
      }
      expect(String(failure), `${setting}=${value}`).to.match(new RegExp(`^Error: ${setting}: `));
    }
  });
});
