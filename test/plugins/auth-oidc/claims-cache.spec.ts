/** The pieces of method 4 that need no provider: claims to identity, and the cache of verified tokens. */
import { expect } from 'chai';
import { ClaimError, claimContains, identityOf, listClaim, textClaim } from '../../../plugins/auth-oidc/claims.ts';
import { VerifiedTokens } from '../../../plugins/auth-oidc/cache.ts';
import type { OidcClaims } from '../../../plugins/auth-oidc/settings.ts';

const CLAIMS: OidcClaims = {
  loginId: 'preferred_username', subjectId: 'oid', groups: 'groups', tenantId: 'tid', clientId: 'aud',
  userName: 'name', familyName: 'family_name', givenName: 'given_name', tenantName: 'ext.tenant',
};

describe('OpenID Connect: claims', () => {
  it('maps every configured claim to the identity', () => {
    const identity = identityOf({
      preferred_username: ' jdoe ', oid: 'c0ffee', groups: ['g1', ' g2 ', ''], tid: 'org-1', name: 'Jane Doe',
      family_name: 'Doe', given_name: 'Jane', ext: { tenant: 'Second' }, sub: 'ignored',
    }, CLAIMS);
    expect(identity).to.deep.equal({
      loginId: 'jdoe', subjectId: 'c0ffee', groups: ['g1', 'g2'], tenantId: 'org-1', commonName: 'Jane Doe',
      familyName: 'Doe', givenName: 'Jane', tenantName: 'Second',
    });
  });

  it('has no identity without a login ID (a client-credentials token), and leaves out what is absent', () => {
    expect(identityOf({ sub: 'client', oid: 'x' }, CLAIMS)).to.equal(null);
    expect(identityOf({ preferred_username: '' }, CLAIMS)).to.equal(null);
    expect(identityOf({ preferred_username: 'a', oid: 'o' }, CLAIMS)).to.deep.equal({ loginId: 'a', subjectId: 'o' });
    expect(identityOf({ preferred_username: 'a' }, { ...CLAIMS, subjectId: undefined })).to.deep.equal({ loginId: 'a' });
  });

  it('refuses a token without the subject identifier while pinning is configured', () => {
    expect(() => identityOf({ preferred_username: 'a' }, CLAIMS)).to.throw(ClaimError);
  });

  it('reads groups as a list or as comma-separated text, and refuses other shapes', () => {
    expect(listClaim({ g: 'a, b,,c ' }, 'g')).to.deep.equal(['a', 'b', 'c']);
    expect(listClaim({ g: ['a', 7] }, 'g')).to.deep.equal(['a', '7']);
    expect(listClaim({ g: [] }, 'g')).to.equal(undefined);
    expect(listClaim({}, 'g')).to.equal(undefined);
    for (const g of [{ a: 1 }, [['a']], [null], [true], true, Array(1001).fill('x')]) expect(() => listClaim({ g }, 'g'), JSON.stringify(g).slice(0, 30)).to.throw(ClaimError);
  });

  it('reads texts (numbers as text) and refuses other shapes, control characters and overlong values', () => {
    expect(textClaim({ t: 42 }, 't')).to.equal('42');
    expect(textClaim({ t: null }, 't')).to.equal(undefined);
    expect(textClaim({ t: 'x' }, undefined)).to.equal(undefined);
    for (const t of [['a'], { a: 1 }, true, 'a\u0000b', 'a\nb', 'x'.repeat(1001), Number.NaN]) expect(() => textClaim({ t }, 't'), String(t).slice(0, 20)).to.throw(ClaimError);
  });

  it('follows dotted names into nested claims only when no claim has the dotted name itself', () => {
    expect(textClaim({ 'a.b': 'flat', a: { b: 'nested' } }, 'a.b')).to.equal('flat');
    expect(textClaim({ a: { b: 'nested' } }, 'a.b')).to.equal('nested');
    expect(textClaim({ a: ['x'] }, 'a.0')).to.equal(undefined);
    expect(textClaim({ a: 'text' }, 'a.length')).to.equal(undefined);
    // Inherited properties are not claims.
    expect(textClaim({ a: {} }, 'a.constructor')).to.equal(undefined);
    expect(textClaim({}, 'toString')).to.equal(undefined);
  });

  it('finds the client ID in a text or a list claim, exactly', () => {
    expect(claimContains({ aud: 'svc' }, 'aud', 'svc')).to.equal(true);
    expect(claimContains({ aud: ['x', 'svc'] }, 'aud', 'svc')).to.equal(true);
    for (const aud of ['SVC', 'svc ', ['svcx'], [], { svc: 1 }, undefined, 'x,svc'] as unknown[]) expect(claimContains({ aud: aud as string }, 'aud', 'svc'), JSON.stringify(aud)).to.equal(false);
    expect(claimContains({ azp: 'svc' }, 'azp', 'svc')).to.equal(true);
  });
});

describe('OpenID Connect: verified-token cache', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('keeps an entry until the TTL or the token\'s expiry, whichever is first', () => {
    const cache = new VerifiedTokens<string>({ ttlMs: 10_000, now: clock });
    cache.remember('a', 'A', now + 60_000);
    cache.remember('b', 'B', now + 3_000);
    now += 2_999;
    expect([cache.get('a'), cache.get('b')]).to.deep.equal(['A', 'B']);
    now += 1;
    expect(cache.get('b')).to.equal(undefined);
    now += 7_000;
    expect(cache.get('a')).to.equal(undefined);
  });

  it('remembers nothing with a TTL of 0 or for an expired token', () => {
    const off = new VerifiedTokens<string>({ ttlMs: 0, now: clock });
    off.remember('a', 'A', now + 60_000);
    expect(off.get('a')).to.equal(undefined);
    const on = new VerifiedTokens<string>({ ttlMs: 10_000, now: clock });
    on.remember('a', 'A', now - 1);
    expect(on.size).to.equal(0);
  });

  it('is bounded: the oldest entry goes first', () => {
    const cache = new VerifiedTokens<number>({ ttlMs: 10_000, maxEntries: 3, now: clock });
    for (let i = 0; i < 5; i++) cache.remember(`k${i}`, i, now + 60_000);
    expect(cache.size).to.equal(3);
    expect([cache.get('k0'), cache.get('k1'), cache.get('k2'), cache.get('k4')]).to.deep.equal([undefined, undefined, 2, 4]);
  });

  it('keys by a digest, never by the token itself', () => {
    const cache = new VerifiedTokens<number>({ ttlMs: 10_000 });
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const key = cache.keyOf(token);
    expect(key).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(key).to.not.contain(token.slice(0, 10));
    expect(cache.keyOf(`${token}x`)).to.not.equal(key);
  });
});
