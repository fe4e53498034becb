/**
 * Every message the service can show, in both languages (runtime/messages.ts
 * and every plugin's own, declared in its manifest), and the
 * start-up refusals of plugin settings: sentences a person can read, with
 * no placeholder, regular expression or validator text left in them, and no
 * English in the German ones.
 */
import { expect } from 'chai';
import { PLUGINS } from '../../plugins/index.ts';
import { ConfigError } from '../../runtime/config.ts';
import { ERRORS } from '../../runtime/errors.ts';
import { MESSAGES, translate } from '../../runtime/messages.ts';
import { checkPluginConfig } from '../../runtime/plugins.ts';
import { registerPluginMessages } from '../../runtime/plugin-loader.ts';
import { wrongTypeKey } from '../../runtime/validation.ts';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';

/** Words put into sentences (`{action}`), not sentences themselves. */
const FRAGMENT = /^action[A-Z]/;
// Plugins declare their texts in their manifests; a service registers them when it loads the plugins.
registerPluginMessages(PLUGINS);
const KEYS = Object.keys(MESSAGES.en).sort();
const SENTENCES = KEYS.filter((key) => !FRAGMENT.test(key));

/** A regular expression's syntax, or ajv's own phrasing. */
const REGEX = /\^|\\[dDsSwWb]|\[[^\]]*-[^\]]*\]|\{\d+,\d*\}|\(\?[:=!<]|\$\)|[^\s(]\$$/;
const VALIDATOR_TEXT = /must (NOT |match |have required|be equal)|must be (string|number|integer|boolean|object|array|null)\b|must match format/;
/** English words that have no business in a German sentence (type names included: they were shown as such). */
const ENGLISH = ['the', 'of', 'is', 'are', 'must', 'be', 'not', 'and', 'with', 'for', 'to', 'this', 'that', 'has', 'have', 'were',
  'cannot', 'only', 'from', 'than', 'which', 'should', 'does', 'none', 'value', 'string', 'boolean', 'integer', 'number', 'array',
  'object', 'invalid', 'allowed', 'required', 'property', 'epoch', 'milliseconds', 'database', 'job', 'query', 'settings'];

const paramsOf = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

/** A message as it reaches a person: a sentence, nothing technical in it, and in German no English word. */
function readable(language: 'en' | 'de', text: string) {
  expect(text, text).to.match(/^\p{Lu}.*[.!?]$/su);
  expect(text, text).to.not.match(/\{\w+\}/).and.not.match(REGEX).and.not.match(VALIDATOR_TEXT);
  if (language === 'de') expect(text.split(/[^\p{L}]+/u).filter((word) => ENGLISH.includes(word)), text).to.deep.equal([]);
}

/** The text with every parameter filled: `{action}` with an action, anything else with a neutral value. */
function rendered(language: 'en' | 'de', key: string): string {
  const params = Object.fromEntries(paramsOf(MESSAGES.en[key]).map((name) => [name, name === 'action' ? 'actionCreate' : 'X1']));
  return translate(language, key, params);
}

describe('message texts', () => {
  it('has every key in both languages, with the same parameters', () => {
    expect(Object.keys(MESSAGES.de).sort()).to.deep.equal(KEYS);
    for (const key of KEYS) expect(paramsOf(MESSAGES.de[key]), key).to.deep.equal(paramsOf(MESSAGES.en[key]));
    // Loaded from every plugin: the query interface's, the profiles', the access plugin's, the password method's.
    for (const key of ['statementEmpty', 'profileEmpty', 'expiresInPast', 'passwordsNotManaged']) expect(KEYS, key).to.include(key);
  });

  it('writes every message as a sentence: a capital letter first, a full stop, ! or ? last', () => {
    for (const language of ['en', 'de'] as const) {
      for (const key of SENTENCES) expect(MESSAGES[language][key], `${language} ${key}`).to.match(/^\p{Lu}.*[.!?]$/su);
      // The words put into them are words.
      for (const key of KEYS.filter((k) => FRAGMENT.test(k))) expect(MESSAGES[language][key], `${language} ${key}`).to.match(/^\p{Ll}+$/u);
    }
  });

  it('fills every parameter, shows no regular expression and no validator text', () => {
    for (const language of ['en', 'de'] as const) {
      for (const key of SENTENCES) {
        const text = rendered(language, key);
        expect(text, `${language} ${key}`).to.not.match(/\{\w+\}/);
        expect(text, `${language} ${key}`).to.not.match(REGEX);
        expect(text, `${language} ${key}`).to.not.match(VALIDATOR_TEXT);
      }
    }
  });

  it('has no English words in German texts', () => {
    for (const key of SENTENCES) {
      // The text without its parameters, which are names and values as the caller gave them.
      const words = MESSAGES.de[key].replace(/\{\w+\}/g, ' ').split(/[^\p{L}]+/u);
      const english = words.filter((word) => ENGLISH.includes(word));
      expect(english, `de ${key}: ${MESSAGES.de[key]}`).to.deep.equal([]);
      // A whole sentence after a colon starts with a capital letter in German.
      expect(MESSAGES.de[key], key).to.not.match(/: (der|die|das|ein|eine|er|sie|es|nichts|senden)\b/);
    }
  });

  it('says what a value of the wrong JSON type must be, in words of its own for each type ajv names', () => {
    expect(wrongTypeKey('boolean')).to.equal('mustBeBoolean');
    expect(wrongTypeKey('string,null')).to.equal('mustBeText');
    expect(wrongTypeKey(['string', 'object'])).to.equal('mustBeTextOrObject');
    expect(wrongTypeKey(['array', 'null'])).to.equal('mustBeList');
    expect(wrongTypeKey('integer,boolean')).to.equal('invalidValue');
  });

  it('has a message for every error code, in both languages', () => {
    for (const [code, { key }] of Object.entries(ERRORS)) {
      expect(MESSAGES.en, code).to.have.property(key);
      expect(MESSAGES.de, code).to.have.property(key);
    }
  });
});

describe('start-up refusals of plugin settings', () => {
  /** Values each constrained setting of a shipped plugin is tried with; one of them breaks every pattern there is. */
  const BAD_VALUES = ['\u0001', 'two words', '-1', '0', '/', 'x'.repeat(600)];

  it('say in words what every constrained setting must be', () => {
    let refused = 0;
    for (const manifest of PLUGINS) {
      const properties = (manifest.configSchema as { properties?: Record<string, Record<string, unknown>> } | undefined)?.properties ?? {};
      for (const [setting, schema] of Object.entries(properties)) {
        if (Object.keys(schema).every((k) => k === 'type')) continue;
        expect(schema.description, `${manifest.name} ${setting} has no description`).to.be.a('string');
        for (const value of BAD_VALUES) {
          let error: unknown;
          try {
            checkPluginConfig({ ...manifest, configSchema: { type: 'object', properties: { [setting]: schema } } }, { [setting]: value });
          } catch (err) {
            error = err;
          }
          if (!error) continue;
          refused++;
          expect(error).to.be.instanceOf(ConfigError);
          expect((error as ConfigError).message).to.equal(`${setting}: must be ${schema.description} (plugin ${manifest.name})`);
          expect((error as ConfigError).message, setting).to.not.match(REGEX).and.not.match(VALIDATOR_TEXT);
        }
      }
    }
    expect(refused).to.be.at.least(30);
  });

  it('name a missing setting and one that needs another', () => {
    const preauth = PLUGINS.find((p) => p.name === 'auth-preauth')!;
    expect(() => checkPluginConfig(preauth, { SERVICE_PRE_AUTHENTICATION: 'true' }))
      .to.throw(ConfigError, /^SERVICE_REMOTE_USER_ID: must be set \(plugin auth-preauth\)$/);
    expect(() => checkPluginConfig(preauth, { SERVICE_REMOTE_USER_ID: 'X-User', SERVICE_API_KEY_TOKEN: 'secret token' }))
      .to.throw(ConfigError, /^SERVICE_API_KEY: must be set together with SERVICE_API_KEY_TOKEN \(plugin auth-preauth\)$/);
  });
});

describe('messages in answers', () => {
  let t: TestService;
  let db: string;
  /** The answer's message and its violations' messages, each checked in the language asked for. */
  async function messages(language: 'en' | 'de', path: string, init: RequestInit & { json?: unknown; auth?: null | typeof ADMIN } = {}) {
    const r = await t.request(path, { ...init, headers: { 'accept-language': language, ...init.headers } });
    const body = await r.json();
    const texts: string[] = [body.message, ...(body.violations ?? []).map((v: { message: string }) => v.message)];
    for (const text of texts) readable(language, text);
    return { status: r.status, texts };
  }

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'S' } });
  });
  after(() => t.close());

  it('name a database in words of their own, not as an object of type database', async () => {
    expect(await messages('de', '/api/admin/databases', { method: 'POST', json: { name: 'Not A Name' } })).to.deep.equal({
      status: 400,
      texts: ['Die Datenbank kann nicht angelegt werden.', 'Ein Datenbankname beginnt mit einem Kleinbuchstaben und enthält nur Kleinbuchstaben, Ziffern und Unterstriche, höchstens 63 Zeichen.'],
    });
    await messages('en', '/api/admin/databases', { method: 'POST', json: { name: 'Not A Name' } });
    expect(await messages('de', '/api/admin/databases/nosuch')).to.deep.equal({ status: 404, texts: ['Die Datenbank nosuch wurde nicht gefunden.'] });
    expect(await messages('de', '/rest/nosuch/schemes')).to.deep.equal({ status: 404, texts: ['Die Datenbank nosuch wurde nicht gefunden.'] });
    expect((await messages('en', '/rest/nosuch/schemes')).texts).to.deep.equal(['The database nosuch was not found.']);
  });

  it('say what a value must be in words, not by its JSON type or format', async () => {
    const wrong = { _type: 'Classifier', label: 'C', abstract: 'no', root: 3 };
    expect((await messages('de', `/rest/${db}/schemes/S/classifiers`, { method: 'POST', json: wrong })).texts)
      .to.deep.equal(['Das Objekt Classifier kann nicht angelegt werden.', 'Der Wert muss true oder false sein.', 'Der Wert muss true oder false sein.']);
    await messages('en', `/rest/${db}/schemes/S/classifiers`, { method: 'POST', json: wrong });
    expect((await messages('en', `/api/${db}/queries/download?version=soon`, { method: 'PUT', json: { sql: 'select 1' } })).texts)
      .to.deep.equal(['The parameter version is invalid.', 'The value must be a time in epoch milliseconds (milliseconds since 1 January 1970, UTC).']);
    await messages('de', `/api/${db}/queries/download?version=soon`, { method: 'PUT', json: { sql: 'select 1' } });
    await messages('de', `/api/${db}/queries/download?statementTimeout=-1`, { method: 'PUT', json: { sql: 'select 1' } });
    await messages('de', `/api/${db}/queries/download`, { method: 'PUT', json: { sql: 1 } });
    await messages('de', `/api/${db}/queries/settings`, { method: 'PUT', json: { statementTimeout: 'long' } });
    await messages('de', `/api/${db}/jobs/0b7c3f5e-9a1d-4c1e-8f00-5a6b7c8d9e0f/statistics`);
    expect(await messages('de', `/rest/${db}/schemes`, { method: 'POST', body: new Uint8Array([123, 125]) }))
      .to.deep.equal({ status: 415, texts: ['Die Anfrage hat einen Inhalt, aber keinen Inhaltstyp; senden Sie application/json.'] });
  });

  it('tell missing credentials from refused ones, and neither says which part was wrong', async () => {
    expect(await messages('en', `/rest/${db}/schemes`, { auth: null })).to.deep.equal({ status: 401, texts: ['Authentication is required.'] });
    expect(await messages('de', `/rest/${db}/schemes`, { auth: null })).to.deep.equal({ status: 401, texts: ['Eine Anmeldung ist erforderlich.'] });
    for (const auth of [{ loginId: ADMIN.loginId, password: 'wrong-password' }, { loginId: 'nobody', password: ADMIN.password }]) {
      expect(await messages('en', `/rest/${db}/schemes`, { auth })).to.deep.equal({ status: 401, texts: ['The credentials were not accepted.'] });
      expect(await messages('de', `/rest/${db}/schemes`, { auth })).to.deep.equal({ status: 401, texts: ['Die Anmeldedaten wurden nicht akzeptiert.'] });
    }
    const key = await messages('en', `/rest/${db}/schemes`, { auth: null, headers: { 'service-access-key': 'mdsk_not-a-key' } });
    expect(key).to.deep.equal({ status: 401, texts: ['The credentials were not accepted.'] });
  });
});
