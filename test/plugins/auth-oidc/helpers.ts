/**
 * The OpenID Connect tests' common ground: the provider's accounts, the
 * service's settings pointing at the provider, requests with a bearer token,
 * and forged tokens. Every token a test sends is remembered, so a test can
 * check that none reached a log line or a response.
 */
import { expect } from 'chai';
import { exportJWK, SignJWT, type JWTPayload } from 'jose';
import { logLines, uniqueName, type TestService } from '../../helpers/service.ts';
import { SERVICE_CLIENT_ID, type ProviderAccount, type SigningKey, type TestProvider } from '../../helpers/oidc-provider.ts';
import { rememberSecret } from '../../helpers/secrets.ts';

export const ADMIN_LOGIN = 'admin';

/** The claims the service is told to read (SERVICE_OIDC_JWT_*): names an operator might choose for a provider. */
export const CLAIMS = {
  SERVICE_OIDC_JWT_USER_ID: 'login_id',
  SERVICE_OIDC_JWT_SUB_ID: 'sub',
  SERVICE_OIDC_JWT_GROUP_ID: 'groups',
  SERVICE_OIDC_JWT_TENANT_ID: 'tenant_id',
  SERVICE_OIDC_JWT_USER_NAME: 'name',
  SERVICE_OIDC_JWT_FAMILY_NAME: 'family_name',
  SERVICE_OIDC_JWT_GIVEN_NAME: 'given_name',
  SERVICE_OIDC_JWT_TENANT_NAME: 'tenant_name',
};

export function oidcEnv(provider: { issuer: string } | string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SERVICE_OIDC_AUTHENTICATION: 'true',
    SERVICE_OIDC_CLIENT_ID: SERVICE_CLIENT_ID,
    SERVICE_OIDC_PROVIDER_URL: typeof provider === 'string' ? provider : provider.issuer,
    SERVICE_OIDC_PROVIDER_NAME: 'test-provider',
    ...CLAIMS,
    ...extra,
  };
}

export function account(username: string, claims: Record<string, unknown> = {}, accountId = `sub-${username}`): ProviderAccount {
  return { accountId, username, password: `pw-${username}-0123`, claims: { login_id: username, ...claims } };
}

/** Every token sent by a test, for the log and response checks. */
/** Every token a test sent or made; each is also remembered for the suite's final log check. */
class SentTokens extends Set<string> {
  override add(token: string): this {
    rememberSecret(token, 'bearer token');
    return super.add(token);
  }
}

export const sentTokens = new SentTokens();

/** Request options with a bearer token (and no basic authentication). */
export function bearer(token: string, headers: Record<string, string> = {}, init: RequestInit & { json?: unknown } = {}) {
  sentTokens.add(token);
  return { ...init, auth: null, headers: { authorization: `Bearer ${token}`, ...headers } };
}

/** A password-grant token of the account with that user name. */
export async function tokenOf(provider: TestProvider, username: string): Promise<string> {
  const a = provider.accounts.find((x) => x.username === username);
  if (!a) throw new Error(`no account ${username}`);
  const token = await provider.passwordToken(a.username, a.password);
  sentTokens.add(token);
  return token;
}

export async function createDatabaseWith(t: TestService, token: string, name = uniqueName()): Promise<string> {
  const r = await t.request('/api/admin/databases', bearer(token, {}, { method: 'POST', json: { name } }));
  if (r.status !== 201) throw new Error(`creating database ${name}: ${r.status} ${await r.text()}`);
  return name;
}

export async function createTenantWith(t: TestService, db: string, token: string, label: string): Promise<Record<string, unknown>> {
  const r = await t.request(`/rest/${db}/tenants`, bearer(token, {}, { method: 'POST', json: { _type: 'Tenant', label } }));
  if (r.status !== 201) throw new Error(`creating tenant ${label}: ${r.status} ${await r.text()}`);
  return r.json();
}

export async function createUserWith(t: TestService, db: string, token: string, spec: { loginId: string; accessLevel?: string; tenant?: string; defaultTenant?: boolean }): Promise<Record<string, unknown>> {
  const { tenant, ...body } = spec;
  const r = await t.request(`/rest/${db}/users`, bearer(token, tenant ? { 'service-tenant': tenant } : {}, {
    method: 'POST', json: { _type: 'User', accessLevel: 'READ_ONLY', ...body },
  }));
  if (r.status !== 201) throw new Error(`creating user ${spec.loginId}: ${r.status} ${await r.text()}`);
  return r.json();
}

export interface Session { loginId: string; tenant: string; tenantLabel: string; accessLevel: string; systemAdmin: boolean; method: string }

export async function sessionWith(t: TestService, db: string, token: string, headers: Record<string, string> = {}): Promise<Session> {
  const r = await t.request(`/api/${db}/session`, bearer(token, headers));
  expect(r.status, `session: ${r.status} ${r.status === 200 ? '' : await r.clone().text()}`).to.equal(200);
  return r.json();
}

/** A token signed with `key` (the provider's own, to test claim checks; or an attacker's). */
export async function signed(key: Pick<SigningKey, 'kid' | 'privateKey'>, claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  const token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt', ...header }).sign(key.privateKey);
  sentTokens.add(token);
  return token;
}

/** Claims of a good token for the account, as the provider would issue them (`overrides` change them; undefined drops one). */
export function claimsFor(provider: TestProvider, a: ProviderAccount, overrides: Record<string, unknown> = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    ...a.claims, sub: a.accountId, iss: provider.issuer, aud: SERVICE_CLIENT_ID, client_id: SERVICE_CLIENT_ID,
    iat: now, exp: now + 600, jti: uniqueName('jti'), scope: 'openid', ...overrides,
  };
  for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
  return claims;
}

/** The compact token assembled from parts (for tokens jose will not make). */
export function assemble(header: object, payload: object, signature = ''): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');
  const token = `${part(header)}.${part(payload)}.${signature}`;
  sentTokens.add(token);
  return token;
}

export async function publicJwkOf(key: SigningKey) {
  return { ...(await exportJWK(key.publicKey)), kid: key.kid, alg: 'RS256', use: 'sig' };
}

/** Moves the service's clock (Date.now) forward for the duration of `task`. */
export async function later<T>(ms: number, task: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  Date.now = () => realNow.call(Date) + ms;
  try {
    return await task();
  } finally {
    Date.now = realNow;
  }
}

/** Fails naming a token found in any log line. */
export function expectNoTokenInLog() {
  for (const token of sentTokens) {
    // A token's signature part alone would already be a leak of it.
    const needles = [token, ...token.split('.').filter((p) => p.length > 20)];
    const line = logLines.find((l) => needles.some((n) => l.includes(n)));
    expect(line, 'a log line holds a bearer token').to.equal(undefined);
  }
}

/** Fails when the response body or a header holds the token. */
export async function expectNoTokenIn(r: Response, token: string) {
  const body = await r.clone().text();
  const signature = token.split('.')[2];
  expect(body.includes(token) || (!!signature && signature.length > 20 && body.includes(signature)), 'the response holds the token').to.equal(false);
  for (const [name, value] of r.headers) expect(value.includes(token), `header ${name} holds the token`).to.equal(false);
}
