/**
 * Reading profile files: what is accepted, and that every refusal names the
 * line and column of its cause.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { metamodel } from '../../../generated/metamodel.gen.ts';
import { readProfile, type ReadResult } from '../../../plugins/profiles/document.ts';
import type { ProfileKind } from '../../../plugins/profiles/schema.ts';
import { TENANT_PROFILES } from '../../../plugins/profiles/catalog.ts';
import type { Violation } from '../../../runtime/errors.ts';
import { translate } from '../../../runtime/messages.ts';
import { BANK, edited, fixture, INSURER, lineOf, VIEW } from './fixtures.ts';
import '../../../plugins/profiles/messages.ts';

const GENERATED = new URL('../../../generated/', import.meta.url).pathname;

function read(kind: ProfileKind, source: Buffer | string): ReadResult {
  return readProfile(kind, Buffer.isBuffer(source) ? source : Buffer.from(source), metamodel);
}

function refused(kind: ProfileKind, source: Buffer | string): Violation[] {
  const r = read(kind, source);
  if (r.ok) throw new Error('the file was accepted');
  return r.violations;
}

function only(kind: ProfileKind, source: Buffer | string): Violation {
  const violations = refused(kind, source);
  expect(violations, JSON.stringify(violations)).to.have.length(1);
  return violations[0];
}

describe('profiles: reading annotation and profile files', () => {
  describe('accepts', () => {
    it('the realistic annotation files of two tenants, keeping settings that are not types', () => {
      for (const name of [BANK, INSURER]) {
        const r = read('annotations', fixture(name));
        expect(r.ok, JSON.stringify(r)).to.equal(true);
      }
      const bank = read('annotations', fixture(BANK));
      if (!bank.ok) throw new Error('refused');
      expect(bank.document.theme).to.deep.include({ name: 'Musterbank Blau' });
      expect((bank.document.theme as Record<string, Record<string, string>>).farben['primär']).to.equal('#003366');
      expect(bank.document.sprachen).to.deep.equal(['de', 'en']);
    });

    it('the realistic profile file', () => {
      const r = read('profile', fixture(VIEW));
      expect(r.ok, JSON.stringify(r)).to.equal(true);
    });

    it('the standard profiles the generator wrote, against the metamodel they were generated from', () => {
      for (const [file, kind] of [['standard-annotations.gen.yaml', 'annotations'], ['standard-profile.gen.yaml', 'profile']] as const) {
        const r = read(kind, readFileSync(join(GENERATED, file)));
        expect(r.ok, `${file}: ${JSON.stringify(r)}`).to.equal(true);
      }
    });

    it('the initial documents of a tenant that has uploaded nothing', () => {
      for (const profile of Object.values(TENANT_PROFILES)) expect(read(profile.kind, profile.initial).ok).to.equal(true);
    });

    it('a byte order mark, lists of literals, and empty definitions', () => {
      const r = read('annotations', '\uFEFFClassifier:\n  properties:\n    status:\n      literals: [WORKING, FINAL]\n  customProperties:\n    farbe: { baseType: STRING, literals: [rot, grün] }\nGroup:\n');
      expect(r.ok, JSON.stringify(r)).to.equal(true);
    });
  });

  describe('refuses, naming line and column', () => {
    it('an empty file, a file of comments only, text that is not UTF-8', () => {
      expect(only('annotations', '').key).to.equal('profileEmpty');
      expect(only('annotations', '# nur ein Kommentar\n\n   \n').key).to.equal('profileNoDocument');
      expect(only('annotations', Buffer.from([0x43, 0x6c, 0x61, 0x73, 0x73, 0x3a, 0x20, 0xfc, 0x0a])).key).to.equal('profileNotUtf8');
    });

    it('a YAML syntax error inside the realistic file, at its line', () => {
      const source = edited(fixture(BANK), '      label: Modellversion\n', '      label: "Modellversion\n');
      const v = refused('annotations', source)[0];
      expect(v.key).to.equal('profileYamlError');
      expect(v.params!.line).to.be.at.least(lineOf(source, '"Modellversion'));
      expect(String(v.params!.detail)).to.match(/\S/);
    });

    it('a NUL character or half a surrogate pair in a text, which the database cannot keep', () => {
      const v = only('annotations', 'Group:\n  label: "Gre\\0mium"\n');
      expect(v).to.deep.include({ key: 'profileUnstorableText' });
      expect(v.params).to.include({ line: 2, column: 10 });
      expect(only('annotations', 'Group:\n  customProperties:\n    "a\\0b": { baseType: STRING }\n').key).to.equal('profileUnstorableText');
      expect(only('annotations', 'Group:\n  label: "\\uD800"\n').key).to.equal('profileUnstorableText');
      expect(read('annotations', 'Group:\n  label: "\\U0001F600 \\uD83D\\uDE00"\n').ok).to.equal(true);
    });

    it('a key given twice, at the second one', () => {
      const v = refused('annotations', 'Classifier:\n  label: A\n  label: B\n')[0];
      expect(v).to.deep.include({ key: 'profileYamlError' });
      expect(v.params).to.include({ line: 3, column: 3 });
    });

    it('more than one YAML document', () => {
      expect(refused('annotations', 'Classifier: {}\n---\nGroup: {}\n')[0].key).to.equal('profileYamlError');
    });

    it('a document that is not a mapping', () => {
      expect(only('annotations', '- Classifier\n- Group\n')).to.deep.include({ key: 'profileShapeMapping', path: '' });
      expect(only('annotations', 'nur Text\n').key).to.equal('profileShapeMapping');
    });

    it('an unknown type in the realistic file, at its key', () => {
      const source = edited(fixture(BANK), '\nCollection:\n', '\nKollektion:\n');
      const v = only('annotations', source);
      expect(v).to.deep.include({ key: 'profileUnknownType', path: 'Kollektion' });
      expect(v.params).to.include({ line: lineOf(source, 'Kollektion:'), column: 1, value: 'Kollektion' });
    });

    it('a type name in the wrong case, which would otherwise pass as a setting', () => {
      const v = only('annotations', 'theme: {}\nclassifier:\n  label: X\n');
      expect(v).to.deep.include({ key: 'profileTypeCase' });
      expect(v.params).to.include({ line: 2, column: 1, suggestion: 'Classifier' });
    });

    it('an unknown base type in the realistic file, at its value', () => {
      const source = edited(fixture(BANK), '      label: Gültig ab\n      labelEn: Valid from\n      baseType: DATE', '      label: Gültig ab\n      labelEn: Valid from\n      baseType: DATUM');
      const v = only('annotations', source);
      expect(v).to.deep.include({ key: 'profileUnknownBaseType', path: 'Scheme.customProperties.gültigAb.baseType' });
      expect(v.params).to.include({ line: lineOf(source, 'baseType: DATUM'), column: 17, value: 'DATUM' });
      expect(translate('de', v.key, v.params)).to.equal(`Zeile ${v.params!.line}, Spalte 17: Der Basistyp DATUM ist unbekannt; erlaubt: STRING, TEXT, INTEGER, DECIMAL, BOOLEAN, DATE, DATETIME, REFERENCE.`);
    });

    it('a custom property without a base type, at its name', () => {
      const v = only('annotations', 'Group:\n  customProperties:\n    turnus:\n      label: Turnus\n');
      expect(v).to.deep.include({ key: 'profileMissingKey', path: 'Group.customProperties.turnus.baseType' });
      expect(v.params).to.include({ line: 3, column: 5 });
    });

    it('keys that are not part of the format, with what is allowed', () => {
      const v = only('annotations', 'Person:\n  properties:\n    givenName:\n      lable: Vorname\n');
      expect(v).to.deep.include({ key: 'profileUnknownKey', path: 'Person.properties.givenName.lable' });
      expect(v.params).to.include({ line: 4, column: 7, value: 'lable' });
      expect(String(v.params!.allowed)).to.contain('label');
    });

    it('values of the wrong shape', () => {
      const cases: [string, string, number][] = [
        ['Person:\n  customProperties: [a, b]\n', 'profileShapeMappingOrNothing', 2],
        ['Person:\n  label: [a]\n', 'profileShapeText', 2],
        ['Person:\n  properties:\n    email: { hidden: ja bitte }\n', 'profileShapeBoolean', 3],
        ['Person:\n  properties:\n    email: { order: zehn }\n', 'profileShapeNumber', 3],
        ['Person:\n  customProperties:\n    x: { baseType: STRING, cardinality: VIELE }\n', 'profileNotAllowedValue', 3],
      ];
      for (const [source, key, line] of cases) {
        const v = only('annotations', source);
        expect(v.key, source).to.equal(key);
        expect(v.params!.line, source).to.equal(line);
      }
    });

    it('properties, groups and literals the metamodel does not have', () => {
      const cases: [string, string, Record<string, unknown>][] = [
        ['Person:\n  properties:\n    geburtstag: { label: Geburtstag }\n', 'profileUnknownProperty', { line: 3, column: 5, value: 'geburtstag', type: 'Person' }],
        ['Person:\n  properties:\n    email: { group: kontakt }\n', 'profileUnknownGroup', { line: 3, column: 21, value: 'kontakt' }],
        ['Classifier:\n  properties:\n    status:\n      literals: [WORKING, FERTIG]\n', 'profileLiteralNotInEnumeration', { line: 4, column: 27, value: 'FERTIG', property: 'status' }],
        ['Classifier:\n  properties:\n    specializes:\n      literals: [a]\n', 'profileLiteralsNotPossible', { line: 4, column: 7, dataType: 'REFERENCE' }],
        ['Group:\n  customProperties:\n    seit: { baseType: DATETIME, literals: [heute] }\n', 'profileLiteralsNotPossible', { line: 3, dataType: 'DATETIME' }],
        ['Group:\n  customProperties:\n    anzahl:\n      baseType: INTEGER\n      literals: [1, zwei]\n', 'profileInvalidLiteral', { line: 5, value: 'zwei', baseType: 'INTEGER' }],
        ['Group:\n  customProperties:\n    2fa: { baseType: BOOLEAN }\n', 'profileInvalidName', { line: 3, column: 5, value: '2fa' }],
      ];
      for (const [source, key, params] of cases) {
        const v = only('annotations', source);
        expect(v.key, source).to.equal(key);
        expect(v.params, source).to.include(params);
      }
    });

    it('groups of a supertype are known to its subtypes; a subtype\'s are not to its supertype', () => {
      expect(read('annotations', 'Asset:\n  groups: [governance]\nProcessing:\n  properties:\n    label: { group: governance }\n').ok).to.equal(true);
      expect(only('annotations', 'Processing:\n  groups: [betrieb]\nAsset:\n  properties:\n    attributedTo: { group: betrieb }\n').key).to.equal('profileUnknownGroup');
    });

    it('a literal-specific custom property that repeats one the type always has', () => {
      const source = [
        'Asset:',
        '  customProperties:',
        '    prüfer: { baseType: REFERENCE }',
        'Classifier:',
        '  customProperties:',
        '    stereotyp:',
        '      baseType: STRING',
        '      literals:',
        '        Entität:',
        '          customProperties:',
        '            prüfer: { baseType: STRING }',
        '        Wertobjekt:',
        '          customProperties:',
        '            wurzel: { baseType: BOOLEAN }',
        '        Referenz:',
        '          customProperties:',
        '            wurzel: { baseType: BOOLEAN }',
        '',
      ].join('\n');
      const v = only('annotations', source);
      expect(v.key).to.equal('profileDeclaredTwice');
      expect(v.params).to.include({ line: 11, value: 'prüfer', type: 'Classifier' });
    });

    it('a profile that declares custom properties or literal-specific ones', () => {
      let v = only('profile', 'Classifier:\n  customProperties:\n    stereotyp:\n      baseType: STRING\n');
      expect(v).to.deep.include({ key: 'profileDeclaresCustom' });
      expect(v.params).to.include({ line: 4, column: 7, value: 'baseType' });
      v = only('profile', 'Classifier:\n  properties:\n    status:\n      literals:\n        FINAL:\n          customProperties: {}\n');
      expect(v.key).to.equal('profileDeclaresCustom');
    });

    it('an alias bomb without expanding it: more aliases than allowed, or fewer that would expand past the limit', () => {
      const bomb = (levels: number) => {
        const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
        for (let i = 1; i < levels; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
        return `${lines.join('\n')}\n`;
      };
      const started = Date.now();
      expect(only('annotations', bomb(12))).to.deep.include({ key: 'profileTooManyAliases', params: { line: 12, column: 12, limit: 100 } });
      // 90 aliases, 10^10 values written out.
      expect(only('annotations', bomb(10))).to.deep.include({ key: 'profileAliasesExpand', params: { limit: 100_000 } });
      expect(Date.now() - started).to.be.below(2000);
      expect(read('annotations', 'theme:\n  ja: &ja [ja, nein]\n  a: *ja\n  b: *ja\n').ok).to.equal(true);
      // An alias inside the value it names would be written out without end.
      expect(only('annotations', 'theme:\n  a: &a [*a]\n')).to.deep.include({ key: 'profileAliasesExpand' });
      expect(only('annotations', 'theme: &t\n  b: {c: *t}\n')).to.deep.include({ key: 'profileAliasesExpand' });
    });

    it('many problems at once, sorted by position and summarized past fifty', () => {
      const types = Array.from({ length: 60 }, (_, i) => `Typ${String(i).padStart(2, '0')}: {}`).join('\n');
      const violations = refused('annotations', `${types}\n`);
      expect(violations).to.have.length(51);
      expect(violations[0].params).to.include({ line: 1 });
      expect(violations[49].params).to.include({ line: 50 });
      expect(violations[50]).to.deep.include({ key: 'profileTooManyProblems', params: { count: 10 } });
    });
  });
});
