import { expect } from 'chai';
import { ERRORS } from '../../runtime/errors.ts';
import { MESSAGES, translate } from '../../runtime/messages.ts';

describe('REST interface: error catalog', () => {
  it('names each message after its code', () => {
    const camel = (code: string) => code.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    for (const [code, { key }] of Object.entries(ERRORS)) expect(key, code).to.equal(camel(code));
  });

  it('has a message for every error code, in English and German', () => {
    for (const [code, { key }] of Object.entries(ERRORS)) {
      expect(MESSAGES.en, code).to.have.property(key);
      expect(MESSAGES.de, code).to.have.property(key);
    }
  });

  it('speaks both languages with the same keys and the same parameters', () => {
    expect(Object.keys(MESSAGES.de).sort()).to.deep.equal(Object.keys(MESSAGES.en).sort());
    const params = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort();
    for (const key of Object.keys(MESSAGES.en)) expect(params(MESSAGES.de[key]), key).to.deep.equal(params(MESSAGES.en[key]));
  });

  it('fills parameters, translating actions', () => {
    expect(translate('de', 'invalidPayload', { type: 'Person', action: 'actionCreate' })).to.equal('Das Objekt Person kann nicht angelegt werden.');
    expect(translate('en', 'objectNotFound', { type: 'Scheme', key: 'X' })).to.equal('The Scheme X was not found.');
  });
});
