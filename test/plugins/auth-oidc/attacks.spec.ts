/**
 * OpenID Connect bearer authentication from the attacker's side: forged,
 * altered and foreign tokens against the real service, whose provider is a
 * real OpenID provider. Each must be a 401 with the same answer, never a
 * 500, and never sign anyone in.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { exportSPKI, SignJWT, UnsecuredJWT } from 'jose';
import { startService, type TestService } from '../../helpers/service.ts';
import {
  generateSigningKey, OTHER_RESOURCE, SERVICE_CLIENT_ID, startOidcProvider, type SigningKey, type TestProvider,
} from '../../helpers/oidc-provider.ts';
import {
  account, ADMIN_LOGIN, assemble, bearer, claimsFor, createDatabaseWith, createUserWith, expectNoTokenIn, expectNoTokenInLog,
  later, oidcEnv, publicJwkOf, sentTokens, signed, tokenOf,
} from './helpers.ts';

const REJECTION = 'Bearer realm="metadata", error="invalid_token"';

describe('OpenID Connect: attacks on bearer authentication', function () {
  this.timeout(120_000);
  let provider: TestProvider;
  let attackerProvider: TestProvider;
  let t: TestService;
  let db: string;
  let attackerKey: SigningKey;
  /** The attacker's own key-set server, to see whether the service ever asks it. */
  let attackerJwks: { url: string; requests: number; close(): Promise<void> };

  before(async () => {
    const accounts = [account(ADMIN_LOGIN), account('editor'), account('reader')];
    provider = await startOidcProvider({ accounts });
    // Another real provider with the same clients and accounts, serving its own discovery and keys.
    attackerProvider = await startOidcProvider({ accounts, keyPrefix: 'attacker' });
    attackerKey = await generateSigningKey('attacker-key');
    attackerJwks = await serveKeySet({ keys: [await publicJwkOf(attackerKey)] });
    t = await startService(oidcEnv(provider));
    const admin = await tokenOf(provider, ADMIN_LOGIN);
    db = await createDatabaseWith(t, admin);
    await createUserWith(t, db, admin, { loginId: 'editor', accessLevel: 'EDITOR' });
    await createUserWith(t, db, admin, { loginId: 'reader', accessLevel: 'READ_ONLY' });
  });
  after(async () => {
    await t?.close();
    await provider?.close();
    await attackerProvider?.close();
    await attackerJwks?.close();
  });

  const editor = () => provider.accounts.find((a) => a.username === 'editor')!;
  const admin = () => provider.accounts.find((a) => a.username === ADMIN_LOGIN)!;

  /** The token must be refused with the one bearer rejection, and nothing of it echoed. */
  async function expectRejected(token: string, what: string) {
    const r = await t.request(`/rest/${db}/schemes`, bearer(token));
    expect(r.status, what).to.equal(401);
    expect(r.headers.get('www-authenticate'), what).to.equal(REJECTION);
    await expectNoTokenIn(r, token);
    const body = await r.json();
    expect(body.statusCode).to.equal(401);
    // Nothing that tells which check failed.
    expect(JSON.stringify(body)).to.not.match(/expired|signature|issuer|audience|alg|kid|claim/i);
  }

  it('accepts the provider\'s own tokens (so that every refusal below is the attack\'s doing)', async () => {
    expect((await t.request(`/rest/${db}/schemes`, bearer(await tokenOf(provider, 'editor')))).status).to.equal(200);
    const forgedButGood = await signed(provider.signingKey(), claimsFor(provider, editor()));
    expect((await t.request(`/rest/${db}/schemes`, bearer(forgedButGood))).status).to.equal(200);
  });

  it('refuses unsigned tokens (alg none), however spelled', async () => {
    const claims = claimsFor(provider, admin());
    const real = await tokenOf(provider, ADMIN_LOGIN);
    await expectRejected(new UnsecuredJWT(claims).encode(), 'UnsecuredJWT');
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      await expectRejected(assemble({ alg, typ: 'JWT' }, claims), `alg ${alg}, empty signature`);
      await expectRejected(assemble({ alg, kid: provider.signingKey().kid }, claims, real.split('.')[2]), `alg ${alg} with a real signature`);
    }
    await expectRejected(assemble({ typ: 'JWT' }, claims, real.split('.')[2]), 'no alg at all');
  });

  it('refuses HMAC tokens whose secret is the provider\'s public key (algorithm confusion)', async () => {
    const key = provider.signingKey();
    const claims = claimsFor(provider, admin());
    const pem = await exportSPKI(key.publicKey);
    const secrets = [pem, pem.trim(), JSON.stringify(key.publicJwk), String(key.publicJwk.n)];
    for (const secret of secrets) {
      for (const alg of ['HS256', 'HS384', 'HS512']) {
        const token = await new SignJWT(claims).setProtectedHeader({ alg, kid: key.kid }).sign(new TextEncoder().encode(secret));
        await expectRejected(token, `${alg} with the public key as secret`);
      }
    }
  });

  it('refuses a token naming another issuer, even when signed with the provider\'s key', async () => {
    const key = provider.signingKey();
    for (const iss of [attackerProvider.issuer, `${provider.issuer}/`, `${provider.issuer}/other`, 'https://login.example.com', undefined]) {
      await expectRejected(await signed(key, claimsFor(provider, editor(), { iss })), `iss ${iss}`);
    }
  });

  it('refuses a token for another client or audience (SERVICE_OIDC_JWT_CLIENT_ID, default aud)', async () => {
    // A real token of the provider, for another resource server.
    await expectRejected(await provider.passwordToken('editor', editor().password, { resource: OTHER_RESOURCE }), 'the provider\'s token for another API');
    const key = provider.signingKey();
    for (const aud of ['other-api', `${SERVICE_CLIENT_ID}-x`, SERVICE_CLIENT_ID.toUpperCase(), ['a', 'b'], [], undefined, { [SERVICE_CLIENT_ID]: true }]) {
      await expectRejected(await signed(key, claimsFor(provider, editor(), { aud })), `aud ${JSON.stringify(aud)}`);
    }
    // A list that holds the client ID is fine.
    const listed = await signed(key, claimsFor(provider, editor(), { aud: ['other-api', SERVICE_CLIENT_ID] }));
    expect((await t.request(`/rest/${db}/schemes`, bearer(listed))).status).to.equal(200);
  });

  it('checks the client ID in the claim SERVICE_OIDC_JWT_CLIENT_ID names (azp), not in aud', async () => {
    const other = await startService(oidcEnv(provider, { SERVICE_OIDC_JWT_CLIENT_ID: 'azp' }));
    try {
      const key = provider.signingKey();
      const get = async (token: string) => (await other.request('/api/admin/databases', bearer(token))).status;
      // The system administrator needs no user: the answer depends on the token alone.
      expect(await get(await signed(key, claimsFor(provider, admin(), { aud: 'other-api', azp: SERVICE_CLIENT_ID })))).to.equal(200);
      for (const azp of ['other-client', undefined, [SERVICE_CLIENT_ID.toUpperCase()]]) {
        const token = await signed(key, claimsFor(provider, admin(), { aud: SERVICE_CLIENT_ID, azp }));
        expect(await get(token), `azp ${JSON.stringify(azp)} with the client ID in aud`).to.equal(401);
      }
    } finally {
      await other.close();
    }
  });

  it('refuses expired tokens and tokens without an expiry; allows 30 s of clock drift', async () => {
    const key = provider.signingKey();
    const now = Math.floor(Date.now() / 1000);
    await expectRejected(await signed(key, claimsFor(provider, editor(), { iat: now - 700, exp: now - 100 })), 'expired 100 s ago');
    await expectRejected(await signed(key, claimsFor(provider, editor(), { iat: now - 700, exp: now - 35 })), 'expired 35 s ago');
    await expectRejected(await signed(key, claimsFor(provider, editor(), { exp: undefined })), 'no exp');
    await expectRejected(await signed(key, claimsFor(provider, editor(), { exp: String(now + 600) })), 'exp as text');
    const drifted = await signed(key, claimsFor(provider, editor(), { iat: now - 600, exp: now - 5 }));
    expect((await t.request(`/rest/${db}/schemes`, bearer(drifted))).status, 'expired 5 s ago').to.equal(200);
  });

  it('refuses tokens that are not valid yet (nbf in the future)', async () => {
    const key = provider.signingKey();
    const now = Math.floor(Date.now() / 1000);
    await expectRejected(await signed(key, claimsFor(provider, editor(), { nbf: now + 120 })), 'nbf in 2 minutes');
    await expectRejected(await signed(key, claimsFor(provider, editor(), { nbf: now + 45 })), 'nbf in 45 s');
    const drifted = await signed(key, claimsFor(provider, editor(), { nbf: now + 5 }));
    expect((await t.request(`/rest/${db}/schemes`, bearer(drifted))).status, 'nbf in 5 s').to.equal(200);
  });

  it('refuses a token signed with a key not in the provider\'s set, and fetches the set again at most once per 30 s', async () => {
    const claims = claimsFor(provider, admin());
    const before = provider.requests.jwks;
    for (let i = 0; i < 5; i++) await expectRejected(await signed(attackerKey, claims, { kid: `unknown-${i}` }), `unknown kid ${i}`);
    const afterBurst = provider.requests.jwks;
    expect(afterBurst - before, 'key-set fetches for five unknown key IDs').to.be.at.most(1);
    // 31 s later the service may look again, once, and still finds no such key.
    await later(31_000, async () => {
      for (let i = 0; i < 3; i++) await expectRejected(await signed(attackerKey, claims, { kid: `unknown-later-${i}` }), 'unknown kid, later');
    });
    expect(provider.requests.jwks - afterBurst, 'key-set fetches 31 s later').to.equal(1);
    // The attacker's key under the provider's key ID fails the signature check.
    await expectRejected(await signed(attackerKey, claims, { kid: provider.signingKey().kid }), 'attacker key under the real kid');
    await expectRejected(await signed(attackerKey, claims, { kid: undefined }), 'attacker key without kid');
  });

  it('ignores key locations and keys in the token header (jku, jwk, x5u, x5c)', async () => {
    const claims = claimsFor(provider, admin());
    const jwk = await publicJwkOf(attackerKey);
    const headers = [
      { jku: attackerJwks.url },
      { jku: attackerJwks.url, kid: provider.signingKey().kid },
      { jwk: { kty: jwk.kty, n: jwk.n, e: jwk.e } },
      { jwk: { kty: jwk.kty, n: jwk.n, e: jwk.e }, kid: provider.signingKey().kid },
      { x5u: attackerJwks.url },
      { x5c: [Buffer.from('not a certificate of the provider').toString('base64')] },
      { jku: `${attackerProvider.issuer}/jwks`, iss: attackerProvider.issuer },
    ];
    for (const header of headers) {
      const { kid, ...rest } = header as { kid?: string };
      await expectRejected(await signed(attackerKey, claims, { kid: kid ?? attackerKey.kid, ...rest }), `header ${Object.keys(header).join(', ')}`);
    }
    expect(attackerJwks.requests, 'requests to the attacker\'s key set').to.equal(0);
    expect(attackerProvider.requests.jwks, 'requests to the attacker provider\'s key set').to.equal(0);
  });

  it('refuses a real token from another provider that serves its own discovery and keys', async () => {
    const before = { ...attackerProvider.requests };
    const foreign = await tokenOf(attackerProvider, ADMIN_LOGIN);
    await expectRejected(foreign, 'the other provider\'s token');
    // Its configuration and keys were never asked for by the service (the token fetch above reads the discovery once).
    expect(attackerProvider.requests.jwks).to.equal(before.jwks);
    expect(attackerProvider.requests.discovery - before.discovery).to.be.at.most(1);
  });

  it('refuses a token whose payload or header was altered after signing', async () => {
    const real = await tokenOf(provider, 'reader');
    const [h, , s] = real.split('.');
    const claims = JSON.parse(Buffer.from(real.split('.')[1], 'base64url').toString('utf8'));
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const asAdmin = `${h}.${part({ ...claims, login_id: ADMIN_LOGIN })}.${s}`;
    const longer = `${h}.${part({ ...claims, exp: claims.exp + 86_400 })}.${s}`;
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    const otherAlg = `${part({ ...header, alg: 'RS512' })}.${real.split('.')[1]}.${s}`;
    const flipped = `${real.slice(0, -3)}${real.endsWith('A') ? 'BBB' : 'AAA'}`;
    for (const [token, what] of [[asAdmin, 'login ID changed'], [longer, 'expiry moved'], [otherAlg, 'alg changed'], [flipped, 'signature changed']]) {
      sentTokens.add(token);
      await expectRejected(token, what);
    }
  });

  it('reads the token only from the Authorization header, never from the query string or the body', async () => {
    const token = await tokenOf(provider, 'editor');
    const query = await t.request(`/rest/${db}/schemes?access_token=${token}`, { auth: null });
    expect(query.status).to.equal(401);
    // The error payload names the failed call without echoing the token that stood in its query.
    await expectNoTokenIn(query, token);
    const form = await t.request(`/rest/${db}/schemes`, {
      auth: null, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `access_token=${token}`,
    });
    expect(form.status).to.equal(401);
    await expectNoTokenIn(form, token);
  });

  it('answers garbage after Bearer with 401, never 500', async () => {
    const header = Buffer.from('{"alg":"RS256"}').toString('base64url');
    const garbage = [
      '', ' ', 'x', 'a.b', 'a.b.c', '...', 'a.b.c.d', `${header}..`, `${header}.e30.`, `${header}.e30.x`,
      `${Buffer.from('[]').toString('base64url')}.e30.xx`, `${Buffer.from('"RS256"').toString('base64url')}.e30.xx`,
      `${Buffer.from('{"alg":"RS256","crit":["exp"]}').toString('base64url')}.e30.xx`,
      `${header}.${Buffer.from('not json').toString('base64url')}.xxxx`, `${header}.${Buffer.from('[1]').toString('base64url')}.xxxx`,
      `${Buffer.from('{"alg":"RS256","kid":{"$ne":1}}').toString('base64url')}.e30.xxxx`,
      'ey'.repeat(9000), `${'a'.repeat(5000)}.${'b'.repeat(5000)}.${'c'.repeat(5000)}`, 'token with spaces', '\u00e9\u00e8.\u00e0.x',
    ];
    for (const value of garbage) {
      const r = await t.request(`/rest/${db}/schemes`, { auth: null, headers: { authorization: `Bearer ${value}` } });
      expect([401, 431], JSON.stringify(value.slice(0, 40))).to.include(r.status);
      if (r.status === 401) expect((await r.json()).statusCode).to.equal(401);
    }
    for (const value of ['Bearer', 'bearer', 'BEARER  ', 'Bearer\t']) {
      const r = await t.request(`/rest/${db}/schemes`, { auth: null, headers: { authorization: value } });
      expect(r.status, JSON.stringify(value)).to.equal(401);
    }
  });

  it('refuses a signed token whose claims have shapes the service cannot read', async () => {
    const key = provider.signingKey();
    const shapes: Record<string, unknown>[] = [
      { login_id: { $ne: '' } }, { login_id: ['editor'] }, { login_id: 'editor\u0000' }, { login_id: 'x'.repeat(2000) },
      { groups: { admin: true } }, { groups: [['nested']] }, { tenant_name: ['Default'] }, { sub: { id: 1 } }, { sub: undefined },
    ];
    for (const overrides of shapes) await expectRejected(await signed(key, claimsFor(provider, editor(), overrides)), JSON.stringify(overrides).slice(0, 60));
    // No login-ID claim and no access key: 401.
    await expectRejected(await signed(key, claimsFor(provider, editor(), { login_id: undefined })), 'no login ID');
    await expectRejected(await signed(key, claimsFor(provider, editor(), { login_id: '   ' })), 'blank login ID');
  });

  it('never let an attack write anything, and wrote no token into the log', async () => {
    const list = await (await t.request(`/rest/${db}/schemes`, bearer(await tokenOf(provider, ADMIN_LOGIN)))).json();
    expect(list._embedded?.schemes ?? []).to.have.length(0);
    expectNoTokenInLog();
  });
});

/** A plain HTTP server serving a key set, counting its requests. */
async function serveKeySet(jwks: object) {
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  return {
    url,
    get requests() {
      return requests;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
