/** The API-KEY token of pre-authentication (SERVICE_API_KEY / SERVICE_API_KEY_TOKEN), from the caller's side. */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ADMIN, logLines, startService, type TestService } from '../../helpers/service.ts';
import { expectNoSecretInLog, secret } from '../../auth/fixtures.ts';
import { PREAUTH_ENV, proxied, rawRequest, USER_HEADER } from './helpers.ts';

const KEY_HEADER = 'X-Api-Key';

describe('pre-authentication: the API-KEY token', () => {
  const token = secret(randomBytes(24).toString('base64url'));
  let t: TestService;
  let db: string;
  const withToken = (value: string) => ({ [KEY_HEADER]: value });

  before(async () => {
    t = await startService({ ...PREAUTH_ENV, SERVICE_API_KEY: KEY_HEADER, SERVICE_API_KEY_TOKEN: token });
    // Even the system administrator needs the token, for the service-wide calls too.
    expect((await t.request('/api/admin/databases', proxied(ADMIN.loginId, {}, { method: 'POST', json: { name: 'db_without_token' } }))).status).to.equal(401);
    const r = await t.request('/api/admin/databases', proxied(ADMIN.loginId, withToken(token), { method: 'POST', json: { name: `db_${randomBytes(4).toString('hex')}` } }));
    expect(r.status).to.equal(201);
    db = (await r.json()).name;
    const u = await t.request(`/rest/${db}/users`, proxied(ADMIN.loginId, withToken(token), { method: 'POST', json: { _type: 'User', loginId: 'editor', accessLevel: 'EDITOR' } }));
    expect(u.status).to.equal(201);
  });
  after(() => t?.close());

  const session = (headers: Record<string, string>) => t.request(`/api/${db}/session`, proxied('editor', headers));

  it('authenticates a request that carries exactly the token', async () => {
    const r = await session(withToken(token));
    expect(r.status).to.equal(200);
    expect(await r.json()).to.include({ loginId: 'editor', accessLevel: 'EDITOR' });
    expect((await t.request(`/rest/${db}/schemes`, proxied('editor', withToken(token), { method: 'POST', json: { _type: 'Scheme', label: 'With token' } }))).status).to.equal(201);
  });

  it('answers 401 without the token header, with an empty one, or in another header', async () => {
    for (const headers of <Record<string, string>[]>[{}, withToken(''), { 'X-Api-Token': token }, { authorization: `Bearer ${token}` }]) {
      const r = await session(headers);
      expect(r.status, JSON.stringify(Object.keys(headers))).to.equal(401);
      expect(r.headers.get('www-authenticate') ?? '').to.not.match(/basic/i);
    }
  });

  it('answers 401 for a wrong token of the same length, a prefix, a longer one, and other cases', async () => {
    const flipped = (token[0] === 'A' ? 'B' : 'A') + token.slice(1);
    for (const wrong of [flipped, token.slice(0, -1), `${token}x`, token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase(), 'x', 'x'.repeat(4000)]) {
      expect(wrong).to.not.equal(token);
      const r = await session(withToken(wrong));
      expect(r.status).to.equal(401);
      expect((await r.json()).statusCode).to.equal(401);
    }
  });

  it('answers 401 when the header is sent twice, even with the token both times', async () => {
    const twice = await rawRequest(t.url, `/api/${db}/session`, [[USER_HEADER, 'editor'], [KEY_HEADER, token], [KEY_HEADER, token]]);
    expect(twice.status).to.equal(401);
    const once = await rawRequest(t.url, `/api/${db}/session`, [[USER_HEADER, 'editor'], [KEY_HEADER, token]]);
    expect(once.status).to.equal(200);
  });

  it('still needs the login-ID header: the token alone signs no one in', async () => {
    expect((await session(withToken(token))).status).to.equal(200);
    expect((await t.request(`/api/${db}/session`, proxied(undefined, withToken(token)))).status).to.equal(401);
  });

  it('never puts the token into a response or a log line', async () => {
    for (const value of [token, `${token}x`]) {
      const r = await session(withToken(value));
      expect(await r.text()).to.not.contain(token);
    }
    expect(logLines.some((l) => l.includes(token.slice(0, 12)))).to.equal(false);
    expectNoSecretInLog();
  });
});
