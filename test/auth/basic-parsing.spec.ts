import { expect } from 'chai';
import { basic, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createUser, expectNoSecretInLog, secret } from './fixtures.ts';

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('basic authentication: what a client can send', () => {
  let t: TestService;
  let db: string;
  const colon = { loginId: 'colon', password: secret('pa:ss:wört-1') };
  const umlaut = { loginId: 'umlaut', password: secret('Müller-Lüdenscheidt-ß') };
  const unicode = { loginId: 'jürgen', password: secret('パスワード-€-😀') };

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    for (const u of [colon, umlaut, unicode]) await createUser(t, db, u);
  });
  after(() => t.close());

  const withHeader = (authorization: string) => t.request(`/rest/${db}/tenants`, { headers: { authorization } });

  // Each case uses a login ID of its own, so that the failures add up to no lock.
  const refused: Record<string, string> = {
    'no colon': `Basic ${base64('nocolon')}`,
    'an empty login ID': `Basic ${base64(':some-Passwort')}`,
    'an empty password': `Basic ${base64('empty:')}`,
    'only a colon': `Basic ${base64(':')}`,
    'text that is not Base64': 'Basic not*base64!',
    'Base64 of bytes that are not UTF-8': `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0xc3, 0x28]).toString('base64')}`,
    'no credentials after the scheme': 'Basic ',
    'the scheme alone': 'Basic',
    'two tokens': `Basic ${base64('two:tokens')} ${base64('x:y')}`,
    'a NUL in the login ID': `Basic ${base64('nul\u0000id:some-Passwort')}`,
    'a control character in the login ID': `Basic ${base64('tab\tid:some-Passwort')}`,
    'a huge login ID (8 KB header)': `Basic ${base64(`${'x'.repeat(6000)}:some-Passwort`)}`,
    'a huge password (8 KB header)': `Basic ${base64(`hugepw:${'y'.repeat(6000)}`)}`,
    'another scheme': 'Bearer abc.def.ghi',
    'a known login ID with a wrong password': basic('umlaut', 'Muller-Ludenscheidt-ss'),
  };
  for (const [what, authorization] of Object.entries(refused)) {
    it(`answers 401 with the Basic challenge to ${what}`, async () => {
      const r = await withHeader(authorization);
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.match(/^Basic realm="[^"]+", charset="UTF-8"$/);
      expect((await r.json()).statusCode).to.equal(401);
    });
  }

  it('signs in with a password that holds colons: only the first colon separates', async () => {
    expect((await withHeader(basic(colon.loginId, colon.password))).status).to.equal(200);
  });

  it('signs in with UTF-8 passwords and login IDs (umlauts, CJK, emoji)', async () => {
    expect((await withHeader(basic(umlaut.loginId, umlaut.password))).status).to.equal(200);
    expect((await withHeader(basic(unicode.loginId, unicode.password))).status).to.equal(200);
  });

  it('takes an umlaut composed or decomposed (NFC or NFD) as the same password', async () => {
    expect((await withHeader(basic(umlaut.loginId, umlaut.password.normalize('NFD')))).status).to.equal(200);
  });

  it('accepts the scheme name in any case', async () => {
    expect((await withHeader(`basic ${base64(`${colon.loginId}:${colon.password}`)}`)).status).to.equal(200);
    expect((await withHeader(`BASIC ${base64(`${colon.loginId}:${colon.password}`)}`)).status).to.equal(200);
  });

  it('writes no password to the log', () => {
    expectNoSecretInLog([colon, umlaut, unicode]);
  });
});
