import { expect } from 'chai';
import { rememberHeaderSecrets, rememberSecret, rememberSettingSecrets, secretsIn } from './secrets.ts';

describe('the suite\'s secret registry (checked against every log line at the end of the run)', () => {
  it('finds a remembered secret in a log line, raw or JSON-escaped, and ignores what was never remembered', () => {
    rememberSecret('Geheim"nis-42', 'password');
    const found = secretsIn(['{"msg":"request"}', '{"msg":"x","err":"Geheim\\"nis-42 was wrong"}']);
    expect(found.map((f) => f.value)).to.deep.equal(['Geheim"nis-42']);
    expect(secretsIn(['{"msg":"nothing secret here"}'])).to.deep.equal([]);
  });

  it('takes credentials from request headers and secrets from settings', () => {
    const headers = new Headers({ authorization: `Basic ${Buffer.from('ada:Pass-Wort-77').toString('base64')}`, 'service-access-key': 'mdsk_abcdefgh' });
    rememberHeaderSecrets(headers);
    rememberSettingSecrets({ SERVICE_PEPPER_STORE: 'p1=cGVwcGVyLW9uZQ==;p0=cGVwcGVyLXplcm8=', SERVICE_LOG_LEVEL: 'debug-level' });
    for (const line of ['Pass-Wort-77', 'mdsk_abcdefgh', 'cGVwcGVyLXplcm8=']) expect(secretsIn([line]), line).to.have.length(1);
    expect(secretsIn(['debug-level'])).to.have.length(0);
  });
});
