/**
 * A real OpenID provider for the tests (oidc-provider), on 127.0.0.1 with an
 * issuer of `http://127.0.0.1:<port>`. Programs get tokens from it as the
 * specification describes (method 4): a person's with the resource-owner
 * password grant (registered as a custom grant type, as the library leaves
 * it out), a machine's with the client-credentials grant. Both are JWT access
 * tokens (RFC 9068) for the service's resource, whose audience is the
 * service's client ID, carrying the account's claims (login ID, groups,
 * tenant, names).
 *
 * With `redirectUris` the service's client may also sign people in with the
 * Authorization Code flow (PKCE required), as the user interface does: the
 * provider's own login page (`/interaction/<uid>`, a form of user name and
 * password checked against the accounts) signs the person in, consent for
 * the service's own client is given without asking, and the ID token
 * carries the account's claims (the login ID among them).
 *
 * The helper counts the requests the provider serves (discovery, key set),
 * so a test can tell how often the service fetched them, and can rotate the
 * signing key: the provider restarts on the same address with a new key
 * first in its set, as an operator rotating keys would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import * as client from 'openid-client';
import Provider, { errors } from 'oidc-provider';

/** The service's client ID at the provider (SERVICE_OIDC_CLIENT_ID) and the audience of its tokens. */
export const SERVICE_CLIENT_ID = 'metadata-service';
export const SERVICE_CLIENT_SECRET = 'ui-client-secret-0123456789';
/** A machine client: client-credentials grant only; its tokens carry no login ID. */
export const MACHINE_CLIENT_ID = 'batch-robot';
export const MACHINE_CLIENT_SECRET = 'robot-client-secret-0123456789';
/** Resource indicators (RFC 8707): the service's, and another API's (whose tokens are not for the service). */
export const SERVICE_RESOURCE = 'urn:metadata-service';
export const OTHER_RESOURCE = 'urn:other-api';
export const OTHER_AUDIENCE = 'other-api';

export interface ProviderAccount {
  /** The provider's Subject Identifier (`sub`). */
  accountId: string;
  username: string;
  password: string;
  /** Extra claims of the account's access tokens (login ID, groups, tenant, names …). */
  claims: Record<string, unknown>;
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export interface TestProvider {
  issuer: string;
  port: number;
  /** Requests served, by path: discovery and key set. */
  requests: { discovery: number; jwks: number };
  /** The key the provider signs with now. */
  signingKey(): SigningKey;
  accounts: ProviderAccount[];
  /** A password-grant access token (`resource` defaults to the service's). */
  passwordToken(username: string, password: string, options?: { resource?: string }): Promise<string>;
  /** A client-credentials access token of the machine client. */
  clientCredentialsToken(options?: { resource?: string }): Promise<string>;
  /** Restarts the provider on the same address with a new signing key first in its set (the old one kept). */
  rotateKey(): Promise<SigningKey>;
  close(): Promise<void>;
}

/** A signing key as a provider generates one. */
export async function generateSigningKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, privateKey, publicKey, publicJwk };
}

/** A port that was free a moment ago (for a provider that starts after the service). */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startOidcProvider(options: { accounts: ProviderAccount[]; port?: number; keyPrefix?: string; redirectUris?: string[] }): Promise<TestProvider> {
  const { accounts } = options;
  const keys: SigningKey[] = [await generateSigningKey(`${options.keyPrefix ?? 'provider'}-key-1`)];
  const requests = { discovery: 0, jwks: 0 };
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => undefined;
  let current: Provider | undefined;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/.well-known/openid-configuration') requests.discovery++;
    if (path === '/jwks') requests.jwks++;
    if (path.startsWith('/interaction/') && current) {
      loginPage(current, accounts, req, res).catch((err) => {
        res.statusCode = 400;
        res.setHeader('content-type', 'text/plain');
        res.end(String(err?.message ?? err));
      });
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  const build = async () => {
    const jwks = { keys: await Promise.all(keys.map(async (k) => ({ ...(await exportJWK(k.privateKey)), kid: k.kid, alg: 'RS256', use: 'sig' }))) };
    const provider = createProvider(issuer, jwks, accounts, options.redirectUris);
    current = provider;
    handler = provider.callback();
  };
  await build();

  const configurations = new Map<string, Promise<client.Configuration>>();
  const configuration = (clientId: string, secret: string) => {
    if (!configurations.has(clientId)) {
      configurations.set(clientId, client.discovery(new URL(issuer), clientId, secret, undefined, { execute: [client.allowInsecureRequests] }));
    }
    return configurations.get(clientId)!;
  };

  return {
    issuer,
    port,
    requests,
    accounts,
    signingKey: () => keys[0],
    async passwordToken(username, password, { resource = SERVICE_RESOURCE } = {}) {
      const config = await configuration(SERVICE_CLIENT_ID, SERVICE_CLIENT_SECRET);
      const r = await client.genericGrantRequest(config, 'password', { username, password, resource, scope: 'openid' });
      return r.access_token;
    },
    async clientCredentialsToken({ resource = SERVICE_RESOURCE } = {}) {
      const config = await configuration(MACHINE_CLIENT_ID, MACHINE_CLIENT_SECRET);
      const r = await client.clientCredentialsGrant(config, { resource });
      return r.access_token;
    },
    async rotateKey() {
      keys.unshift(await generateSigningKey(`${options.keyPrefix ?? 'provider'}-key-${keys.length + 1}`));
      await build();
      return keys[0];
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * The provider's storage (tokens, grants): memory, per model. The library's
 * own memory adapter does the same but warns on every start that it is not
 * for production; this one says nothing.
 */
class MemoryAdapter {
  private static readonly stores = new Map<string, Map<string, Record<string, unknown>>>();
  private readonly store: Map<string, Record<string, unknown>>;

  constructor(name: string) {
    if (!MemoryAdapter.stores.has(name)) MemoryAdapter.stores.set(name, new Map());
    this.store = MemoryAdapter.stores.get(name)!;
  }

  async upsert(id: string, payload: Record<string, unknown>) {
    this.store.set(id, payload);
  }

  async find(id: string) {
    return this.store.get(id);
  }

  async findByUid(uid: string) {
    return [...this.store.values()].find((p) => p.uid === uid);
  }

  async findByUserCode(userCode: string) {
    return [...this.store.values()].find((p) => p.userCode === userCode);
  }

  async consume(id: string) {
    const payload = this.store.get(id);
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string) {
    this.store.delete(id);
  }

  async revokeByGrantId(grantId: string) {
    for (const [id, p] of this.store) if (p.grantId === grantId) this.store.delete(id);
  }
}

/**
 * The provider's login page: a form of user name and password, checked
 * against the accounts; a wrong one shows the form again. Consent for the
 * service's client is given without asking (loadExistingGrant).
 */
async function loginPage(provider: Provider, accounts: ProviderAccount[], req: http.IncomingMessage, res: http.ServerResponse) {
  const details = await provider.interactionDetails(req, res);
  const form = (error = '') => {
    res.statusCode = 200;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html><head><title>Sign in at the provider</title></head><body><h1>Sign in</h1>${error ? `<p role="alert">${error}</p>` : ''}`
      + `<form method="post" action="/interaction/${details.uid}/login"><label>User name <input name="username" autocomplete="username" required></label>`
      + '<label>Password <input type="password" name="password" autocomplete="current-password" required></label><button type="submit">Sign in</button></form></body></html>');
  };
  if (details.prompt.name === 'consent') {
    // Asked only when the grant does not cover what the service asks for: granted at once, as loadExistingGrant does.
    const { missingOIDCScope = [], missingOIDCClaims = [], missingResourceScopes = {} } = details.prompt.details as {
      missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]>;
    };
    const grant = details.grantId ? (await provider.Grant.find(details.grantId))! : new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    if (missingOIDCScope.length) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (missingOIDCClaims.length) grant.addOIDCClaims(missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missingResourceScopes)) grant.addResourceScope(resource, scopes.join(' '));
    return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }
  if (req.method === 'GET') return form();
  if (req.method !== 'POST' || !(req.url ?? '').split('?')[0].endsWith('/login')) throw new Error('not a step of the login');
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const fields = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  const account = accounts.find((a) => a.username === fields.get('username'));
  if (!account || account.password !== fields.get('password')) return form('Wrong user name or password.');
  await provider.interactionFinished(req, res, { login: { accountId: account.accountId } }, { mergeWithLastSubmission: false });
}

function createProvider(issuer: string, jwks: { keys: JWK[] }, accounts: ProviderAccount[], redirectUris: string[] = []): Provider {
  const byId = new Map(accounts.map((a) => [a.accountId, a]));
  const codeFlow = redirectUris.length > 0;
  const claimNames = ['sub', ...new Set(accounts.flatMap((a) => Object.keys(a.claims)))];
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: SERVICE_CLIENT_ID, client_secret: SERVICE_CLIENT_SECRET,
        grant_types: codeFlow ? ['password', 'authorization_code'] : ['password'], response_types: codeFlow ? ['code'] : [], redirect_uris: redirectUris,
      },
      {
        client_id: MACHINE_CLIENT_ID, client_secret: MACHINE_CLIENT_SECRET,
        grant_types: ['client_credentials'], response_types: [], redirect_uris: [],
      },
    ],
    jwks,
    adapter: MemoryAdapter,
    cookies: { keys: ['test-cookie-key-0123456789'] },
    // The account's claims in its ID token, also when the code flow issues an access token besides.
    claims: { openid: claimNames },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // The service is the provider's own first-party client: no consent page.
    loadExistingGrant: async (ctx: GrantContext) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      if (ctx.oidc.client.clientId !== SERVICE_CLIENT_ID || !ctx.oidc.session?.accountId) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid');
      grant.addOIDCClaims(claimNames);
      grant.addResourceScope(SERVICE_RESOURCE, 'openid');
      await grant.save();
      return grant;
    },
    ttl: { AccessToken: 600, ClientCredentials: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 600, Session: 600 },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = byId.get(sub);
      return account ? { accountId: sub, claims: async () => ({ sub, ...account.claims }) } : undefined;
    },
    // The account's claims in its access tokens; a client-credentials token has no account, so none.
    extraTokenClaims: async (_ctx: unknown, token: { accountId?: string }) => (token.accountId ? byId.get(token.accountId)?.claims : undefined),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => SERVICE_RESOURCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resource: string) => resourceServer(resource),
      },
    },
  });
  provider.registerGrantType('password', async (ctx) => {
    const { username, password, resource = SERVICE_RESOURCE } = ctx.oidc.params;
    const account = accounts.find((a) => a.username === username);
    if (!account || account.password !== password) throw new errors.InvalidGrant('invalid username or password');
    const token = new provider.AccessToken({
      accountId: account.accountId,
      client: ctx.oidc.client,
      scope: 'openid',
      gty: 'password',
      resourceServer: new provider.ResourceServer(resource, resourceServer(resource)),
    });
    ctx.body = { access_token: await token.save(), token_type: 'Bearer', expires_in: token.expiration, scope: 'openid' };
  }, ['username', 'password', 'scope', 'resource']);
  return provider;
}

interface GrantContext {
  oidc: {
    result?: { consent?: { grantId?: string } };
    session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
    client: { clientId: string };
    provider: Provider;
  };
}

function resourceServer(resource: string) {
  const audience = resource === SERVICE_RESOURCE ? SERVICE_CLIENT_ID : resource === OTHER_RESOURCE ? OTHER_AUDIENCE : undefined;
  if (!audience) throw new errors.InvalidTarget();
  return { scope: 'openid', audience, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
}
