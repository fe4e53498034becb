import { expect } from 'chai';
import { CredentialCache } from '../../runtime/auth/credential-cache.ts';

function clock(start = 1_000_000) {
  const time = { now: start };
  return { time, now: () => time.now };
}

describe('CredentialCache', () => {
  it('remembers a check until the time to live has passed', () => {
    const { time, now } = clock();
    const cache = new CredentialCache({ ttlMs: 1000, now });
    expect(cache.has('db', 'bob', 'pw')).to.equal(false);
    cache.remember('db', 'bob', 'pw');
    time.now += 999;
    expect(cache.has('db', 'bob', 'pw')).to.equal(true);
    time.now += 1;
    expect(cache.has('db', 'bob', 'pw')).to.equal(false);
    expect(cache['entries'].size).to.equal(0);
  });

  it('does not extend an entry when it is hit', () => {
    const { time, now } = clock();
    const cache = new CredentialCache({ ttlMs: 1000, now });
    cache.remember('db', 'bob', 'pw');
    time.now += 600;
    expect(cache.has('db', 'bob', 'pw')).to.equal(true);
    time.now += 600;
    expect(cache.has('db', 'bob', 'pw')).to.equal(false);
  });

  it('tells, with a fresh value, when the entry is past half its life; nothing once expired', () => {
    const { time, now } = clock();
    const cache = new CredentialCache<string>({ ttlMs: 1000, now });
    cache.remember('db', 'bob', 'pw', 'principal');
    expect(cache.peek('db', 'bob', 'pw')).to.deep.equal({ value: 'principal', renew: false });
    time.now += 501;
    expect(cache.peek('db', 'bob', 'pw')).to.deep.equal({ value: 'principal', renew: true });
    expect(cache.peek('db', 'bob', 'other')).to.equal(undefined);
    cache.remember('db', 'bob', 'pw', 'renewed');
    expect(cache.peek('db', 'bob', 'pw')).to.deep.equal({ value: 'renewed', renew: false });
    time.now += 1000;
    expect(cache.peek('db', 'bob', 'pw')).to.equal(undefined);
  });

  it('matches only the same scope, login ID and password', () => {
    const cache = new CredentialCache();
    cache.remember('db', 'bob', 'pw');
    expect(cache.has('db', 'bob', 'pw2')).to.equal(false);
    expect(cache.has('db', 'alice', 'pw')).to.equal(false);
    expect(cache.has('other', 'bob', 'pw')).to.equal(false);
  });

  it('does not confuse a login ID containing NUL with another login ID and password', () => {
    const cache = new CredentialCache();
    cache.remember('db', 'a', 'b\0c');
    expect(cache.has('db', 'a\0b', 'c')).to.equal(false);
  });

  it('forgets every entry of a login ID in a scope, and only those', () => {
    const cache = new CredentialCache();
    cache.remember('db', 'bob', 'old');
    cache.remember('db', 'bob', 'new');
    cache.remember('db', 'alice', 'pw');
    cache.remember('other', 'bob', 'old');
    cache.forget('db', 'bob');
    expect(cache.has('db', 'bob', 'old')).to.equal(false);
    expect(cache.has('db', 'bob', 'new')).to.equal(false);
    expect(cache.has('db', 'alice', 'pw')).to.equal(true);
    expect(cache.has('other', 'bob', 'old')).to.equal(true);
    expect(cache['entries'].size).to.equal(2);
    expect(cache['entriesByLogin'].size).to.equal(2);
  });

  it('evicts the oldest entries beyond maxEntries', () => {
    const cache = new CredentialCache({ maxEntries: 2 });
    cache.remember('db', 'u1', 'pw');
    cache.remember('db', 'u2', 'pw');
    cache.remember('db', 'u1', 'pw'); // refreshed: now younger than u2
    cache.remember('db', 'u3', 'pw');
    expect(cache.has('db', 'u2', 'pw')).to.equal(false);
    expect(cache.has('db', 'u1', 'pw')).to.equal(true);
    expect(cache.has('db', 'u3', 'pw')).to.equal(true);
    expect(cache['entries'].size).to.equal(2);
    expect(cache['entriesByLogin'].has('2\0db\0u2')).to.equal(false);
  });

  it('clears everything', () => {
    const cache = new CredentialCache();
    cache.remember('db', 'bob', 'pw');
    cache.clear();
    expect(cache.has('db', 'bob', 'pw')).to.equal(false);
    expect(cache['entriesByLogin'].size).to.equal(0);
  });

  it('never keeps the password in memory', () => {
    const password = 'Tr0ub4dor&3-unique-password';
    const cache = new CredentialCache();
    cache.remember('db', 'bob', password);
    const kept = JSON.stringify({
      entries: [...cache['entries']],
      index: [...cache['entriesByLogin']].map(([login, keys]) => [login, [...keys]]),
    });
    expect(kept).to.not.include(password);
    for (const entryKey of cache['entries'].keys()) expect(entryKey).to.not.include(password);
  });

  it('keys entries with the process key: another key does not match', () => {
    const key = Buffer.alloc(32, 1);
    const first = new CredentialCache({ key });
    first.remember('db', 'bob', 'pw');
    const sameKey = new CredentialCache({ key });
    sameKey.remember('db', 'bob', 'pw');
    const otherKey = new CredentialCache({ key: Buffer.alloc(32, 2) });
    otherKey.remember('db', 'bob', 'pw');
    expect([...first['entries'].keys()]).to.deep.equal([...sameKey['entries'].keys()]);
    expect([...first['entries'].keys()]).to.not.deep.equal([...otherKey['entries'].keys()]);
  });
});
