/**
 * The service and its OpenID provider over time: a provider that is not
 * there at start, one that names another issuer, one whose key set cannot
 * be had, an outage after the keys were fetched, and a key rotation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { logLines, startService, type TestService } from '../../helpers/service.ts';
import { freePort, generateSigningKey, startOidcProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import {
  account, ADMIN_LOGIN, bearer, claimsFor, expectNoTokenInLog, later, oidcEnv, sentTokens, signed, tokenOf,
} from './helpers.ts';

const accounts = () => [account(ADMIN_LOGIN), account('editor')];

/** A service-wide call only a system administrator may make: needs no database. */
const ADMIN_CALL = '/api/admin/databases';

/** Log lines written since `from` (an index into logLines), parsed. */
function linesSince(from: number): { level: number; msg: string; [k: string]: unknown }[] {
  return logLines.slice(from).map((l) => JSON.parse(l));
}

describe('OpenID Connect: the provider over time', function () {
  this.timeout(120_000);
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  async function service(env: Record<string, string>): Promise<TestService> {
    const t = await startService(env);
    closers.push(() => t.close());
    return t;
  }
  async function provider(options: { port?: number } = {}): Promise<TestProvider> {
    const p = await startOidcProvider({ accounts: accounts(), ...options });
    closers.push(() => p.close());
    return p;
  }

  it('starts while the provider cannot be reached, answers 503 to tokens until it can, then signs in', async () => {
    const port = await freePort();
    const from = logLines.length;
    const t = await service(oidcEnv(`http://127.0.0.1:${port}`));
    expect((await t.request('/health', { auth: null })).status).to.equal(200);
    // Any well-formed token: the service cannot tell good from bad without the provider's keys.
    const key = await generateSigningKey('some-key');
    const token = await signed(key, { login_id: ADMIN_LOGIN, iss: `http://127.0.0.1:${port}`, aud: 'metadata-service', exp: Math.floor(Date.now() / 1000) + 600 });
    for (let i = 0; i < 3; i++) {
      const r = await t.request(ADMIN_CALL, bearer(token));
      expect(r.status).to.equal(503);
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 30);
      expect((await r.json()).statusCode).to.equal(503);
    }
    // Without a token nothing needs the provider: 401 as always.
    expect((await t.request(ADMIN_CALL, { auth: null })).status).to.equal(401);
    // What is no JWT at all, or names a forbidden algorithm, is refused without the provider too.
    expect((await t.request(ADMIN_CALL, bearer('not-a-token'))).status).to.equal(401);
    expect((await t.request(ADMIN_CALL, bearer(`${token.split('.')[0]}.bm90IGpzb24.${token.split('.')[2]}`))).status).to.equal(401);
    expect((await t.request(ADMIN_CALL, bearer(`${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${token.split('.')[1]}.c2ln`))).status).to.equal(401);
    expect(linesSince(from).some((l) => l.msg === 'OpenID provider configuration cannot be fetched' && l.level === 40)).to.equal(true);

    const p = await provider({ port });
    const good = await tokenOf(p, ADMIN_LOGIN);
    let status = 0;
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline) {
      status = (await t.request(ADMIN_CALL, bearer(good))).status;
      if (status !== 503) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status, 'once the provider is there').to.equal(200);
    // The token from before the provider was there was never the provider's.
    expect((await t.request(ADMIN_CALL, bearer(token))).status).to.equal(401);
  });

  it('does not trust a provider whose configuration names another issuer (503, logged as an error)', async () => {
    const p = await provider();
    const from = logLines.length;
    // The same provider under another name: its configuration says 127.0.0.1, not localhost.
    const t = await service(oidcEnv(`http://localhost:${p.port}`));
    const r = await t.request(ADMIN_CALL, bearer(await tokenOf(p, ADMIN_LOGIN)));
    expect(r.status).to.equal(503);
    const refused = linesSince(from).find((l) => l.msg === 'OpenID provider configuration refused');
    expect(refused?.level, 'error line').to.equal(50);
    expect(String(refused?.reason)).to.contain('issuer');
    expect(p.requests.jwks, 'keys of an untrusted configuration').to.equal(0);
  });

  it('accepts SERVICE_OIDC_PROVIDER_URL with a trailing slash', async () => {
    const p = await provider();
    const t = await service(oidcEnv(`${p.issuer}/`));
    expect((await t.request(ADMIN_CALL, bearer(await tokenOf(p, ADMIN_LOGIN)))).status).to.equal(200);
  });

  it('answers 503 when the key set named by the configuration cannot be fetched, and never fetches one over plain http from another host', async () => {
    const closedPort = await freePort();
    for (const jwksUri of [`http://127.0.0.1:${closedPort}/jwks`, 'http://keys.example.com/jwks', 'not a url']) {
      const discovery = await serveDiscovery((issuer) => ({ issuer, jwks_uri: jwksUri }));
      closers.push(discovery.close);
      const t = await service(oidcEnv(discovery.issuer));
      const key = await generateSigningKey('k');
      const token = await signed(key, { login_id: ADMIN_LOGIN, iss: discovery.issuer, aud: 'metadata-service', exp: Math.floor(Date.now() / 1000) + 600 });
      const r = await t.request(ADMIN_CALL, bearer(token));
      expect(r.status, jwksUri).to.equal(503);
    }
  });

  it('keeps signing in with the fetched keys while the provider is away, and answers 503 once they are too old to trust', async () => {
    const p = await provider();
    const t = await service(oidcEnv(p));
    expect((await t.request(ADMIN_CALL, bearer(await tokenOf(p, ADMIN_LOGIN)))).status).to.equal(200);
    const key = p.signingKey();
    const admin = p.accounts.find((a) => a.username === ADMIN_LOGIN)!;
    await p.close();
    // A token the provider issued while up (signed with its key), first seen now: the keys in hand verify it.
    const fresh = await signed(key, claimsFor(p, admin));
    expect((await t.request(ADMIN_CALL, bearer(fresh))).status).to.equal(200);
    // Eleven minutes on the keys must be fetched again, and cannot be.
    await later(11 * 60_000, async () => {
      const r = await t.request(ADMIN_CALL, bearer(await signed(key, claimsFor(p, admin))));
      expect(r.status).to.equal(503);
    });
  });

  it('follows a key rotation: a token with the provider\'s new key verifies after one fetch of the key set', async () => {
    const p = await provider();
    const t = await service(oidcEnv(p));
    const before = await tokenOf(p, ADMIN_LOGIN);
    expect((await t.request(ADMIN_CALL, bearer(before))).status).to.equal(200);
    expect(p.requests.jwks).to.equal(1);
    const newKey = await p.rotateKey();
    const after = await tokenOf(p, ADMIN_LOGIN);
    expect(JSON.parse(Buffer.from(after.split('.')[0], 'base64url').toString()).kid).to.equal(newKey.kid);
    // The set is fetched again for an unknown key ID once its 30 s cooldown has passed.
    await later(31_000, async () => {
      expect((await t.request(ADMIN_CALL, bearer(after))).status).to.equal(200);
      expect(p.requests.jwks).to.equal(2);
      for (let i = 0; i < 5; i++) expect((await t.request(ADMIN_CALL, bearer(await tokenOf(p, ADMIN_LOGIN)))).status).to.equal(200);
      // The old key is still in the set: tokens signed before the rotation still verify.
      expect((await t.request(ADMIN_CALL, bearer(before))).status).to.equal(200);
    });
    expect(p.requests.jwks, 'no further fetches').to.equal(2);
  });

  after(() => {
    expect(sentTokens.size).to.be.greaterThan(0);
    expectNoTokenInLog();
  });
});

/** A provider configuration served by hand, for configurations no real provider would publish. */
async function serveDiscovery(document: (issuer: string) => object) {
  let issuer = '';
  const server = http.createServer((req, res) => {
    if (req.url !== '/.well-known/openid-configuration') {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(document(issuer)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
