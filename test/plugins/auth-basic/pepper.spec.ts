import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ConfigError, parsePepperStore } from '../../../plugins/auth-basic/pepper.ts';

const secretA = randomBytes(24);
const secretB = randomBytes(24);
const base64A = secretA.toString('base64');
const base64B = secretB.toString('base64');

function configErrorOf(text: string): ConfigError {
  try {
    parsePepperStore(text);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(text)}`);
}

describe('parsePepperStore', () => {
  it('gives no pepper when the setting is unset, empty or blank', () => {
    for (const text of [undefined, '', '   ', ';']) {
      const store = parsePepperStore(text);
      expect(store.current).to.equal(undefined);
      expect(store.byId.size).to.equal(0);
    }
  });

  it('makes the first entry the active pepper and keeps the rest for verification', () => {
    const store = parsePepperStore(`p2=${base64B};p1=${base64A}`);
    expect(store.current?.id).to.equal('p2');
    expect(store.current?.secret.equals(secretB)).to.equal(true);
    expect([...store.byId.keys()]).to.deep.equal(['p2', 'p1']);
    expect(store.byId.get('p1')?.equals(secretA)).to.equal(true);
  });

  it('tolerates a trailing separator and whitespace around entries', () => {
    const store = parsePepperStore(`  p2 = ${base64B} ;\n p1=${base64A} ; `);
    expect([...store.byId.keys()]).to.deep.equal(['p2', 'p1']);
    expect(store.current?.secret.equals(secretB)).to.equal(true);
  });

  it('accepts Base64 without padding', () => {
    const secret = randomBytes(16); // 16 bytes encode with '=='
    const store = parsePepperStore(`p=${secret.toString('base64').replace(/=+$/, '')}`);
    expect(store.current?.secret.equals(secret)).to.equal(true);
  });

  const invalidStores: Array<[string, string, string]> = [
    ['an empty pepper ID', `=${base64A}`, 'empty pepper ID'],
    ['a duplicate pepper ID', `p1=${base64A};p1=${base64B}`, '"p1"'],
    ['an entry without "="', `p1=${base64A};${base64B}`, 'entry 2'],
    ['a value that is not Base64', `p1=${base64A.slice(0, 20)}!!${base64A.slice(20)}`, '"p1"'],
    ['an empty value', 'p1=', 'entry 1 has no value'],
    ['a bare padded secret without pepper ID', `p1=${base64A};${randomBytes(16).toString('base64')}`, 'entry 2'],
    ['a value shorter than 16 bytes', `p1=${randomBytes(15).toString('base64')}`, '16 bytes'],
  ];
  for (const [problem, text, mention] of invalidStores) {
    it(`rejects ${problem}, naming the setting but not the secret`, () => {
      const error = configErrorOf(text);
      expect(error.setting).to.equal('SERVICE_PEPPER_STORE');
      expect(error.message).to.include('SERVICE_PEPPER_STORE').and.include(mention);
      // no secret, nor any recognisable piece of one, may appear
      for (const entry of text.split(';')) {
        const value = entry.includes('=') ? entry.slice(entry.indexOf('=') + 1) : entry;
        const secretPart = value.replace(/=+$/, '').slice(0, 8);
        if (secretPart.length === 8) expect(error.message).not.to.include(secretPart);
      }
      expect(error.message).not.to.include(base64A).and.not.to.include(base64B);
    });
  }
});
