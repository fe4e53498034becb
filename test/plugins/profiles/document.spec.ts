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
import { CompiledAnnotations } from '../../../plugins/profiles/rules.ts';
import { resolveMetamodelFor } from '../../../plugins/profiles/resolved.ts';
import type { Violation } from '../../../runtime/errors.ts';
import { registerMessages, translate, type Language } from '../../../runtime/messages.ts';
import { PROFILE_MESSAGES } from '../../../plugins/profiles/messages.ts';
import { BANK, edited, fixture, INSURER, lineOf, VIEW } from './fixtures.ts';

// As the plugin loader does: the spec may run alone.
for (const [language, texts] of Object.entries(PROFILE_MESSAGES)) registerMessages(language as Language, texts);

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
      expect(v.params).to.include({ line: lineOf(source, 'Kollektion:'), column: 1, value: 'Kollektion', suggestion: 'Collection' });
    });

    it('a type name in the wrong case, which would otherwise pass as a setting', () => {
      const v = only('annotations', 'theme: {}\nclassifier:\n  label: X\n');
      expect(translate('en', v.key, v.params)).to.match(/^Line 2, column 1: classifier is not a type; did you mean Classifier\?/);
      expect(v).to.deep.include({ key: 'profileTypeCase' });
      expect(v.params).to.include({ line: 2, column: 1, suggestion: 'Classifier' });
    });

    it('an unknown base type in the realistic file, at its value', () => {
      const source = edited(fixture(BANK), '      label: Gültig ab\n      labelEn: Valid from\n      baseType: DATE', '      label: Gültig ab\n      labelEn: Valid from\n      baseType: DATUM');
      const v = only('annotations', source);
      expect(v).to.deep.include({ key: 'profileUnknownBaseType', path: 'Scheme.customProperties.gültigAb.baseType' });
      expect(v.params).to.include({ line: lineOf(source, 'baseType: DATUM'), column: 17, value: 'DATUM' });
      expect(translate('de', v.key, v.params)).to.equal(`Zeile ${v.params!.line}, Spalte 17: Der Basistyp DATUM ist unbekannt; erlaubt: STRING, TEXT, INTEGER, DECIMAL, BOOLEAN, DATE, DATETIME, REFERENCE, ID, ENUM.`);
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

    it('thousands of settings that hold properties (a file of 1 MB), without comparing each with every type', () => {
      const keys = Array.from({ length: 5000 }, (_, i) => `${'Unbekannt'.repeat(20)}${i}: { properties: {} }`).join('\n');
      const started = Date.now();
      const violations = refused('annotations', `${keys}\n`);
      expect(Date.now() - started).to.be.below(3000);
      expect(violations).to.have.length(51);
      expect(violations[0]).to.deep.include({ key: 'profileUnknownType' });
      expect(violations[50]).to.deep.include({ key: 'profileTooManyProblems', params: { count: 4950 } });
    });

    it('many problems at once, sorted by position and summarized past fifty', () => {
      const types = Array.from({ length: 60 }, (_, i) => `Typ${String(i).padStart(2, '0')}: { properties: {} }`).join('\n');
      const violations = refused('annotations', `${types}\n`);
      expect(violations).to.have.length(51);
      expect(violations[0].params).to.include({ line: 1 });
      expect(violations[49].params).to.include({ line: 50 });
      expect(violations[50]).to.deep.include({ key: 'profileTooManyProblems', params: { count: 10 } });
    });
  });
  describe('the vocabulary of the original product (decisions §7.5)', () => {
    const accepted = (source: string, kind: ProfileKind = 'annotations') => {
      const r = read(kind, source);
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      return (r as { document: Record<string, any> }).document;
    };

    it('accepts every key of the vocabulary at type, group, stereotype, property, custom property and literal level', () => {
      const document = accepted([
        'Classifier:',
        '  label: Geschäftsobjekt',
        '  plural: Geschäftsobjekte',
        '  pluralEn: Business objects',
        '  gender: n',
        '  icon: fa-cube',
        '  extends: Collection',
        '  order: 10',
        '  hidden: false',
        '  groups:',
        '    kern: { label: Kern, icon: fa-star, order: 1 }',
        '  stereotypes:',
        '    entität:',
        '      label: Entität',
        '      labelEn: Entity',
        '      icon: fa-database',
        '      properties:',
        '        title: { label: Fachbegriff, width: 300, placeholder: z. B. Kunde }',
        '      customProperties:',
        '        schlüsselattribut: { label: Schlüsselattribut }',
        '    wertobjekt: { label: Wertobjekt, icon: fa-gem }',
        '  properties:',
        '    title: { width: 40%, placeholder: Fachlicher Name, group: kern }',
        '    status:',
        '      default: WORKING',
        '      literals:',
        '        WORKING: { label: In Arbeit, group: offen, order: 2 }',
        '        FINAL: { label: Freigegeben, group: abgeschlossen, order: 1, icon: fa-check }',
        '  customProperties:',
        '    kennung: { baseType: ID, label: Kennung, width: 12em }',
        '    kurzname: { label: Kurzname, placeholder: max. 20 Zeichen, default: "" }',
        '    bemerkung:',
        '    schutzklasse:',
        '      baseType: ENUM',
        '      default: intern',
        '      literals:',
        '        öffentlich: { group: unkritisch, order: 1 }',
        '        intern: { group: unkritisch, order: 2 }',
        '        vertraulich: { group: kritisch, order: 3 }',
        '    prüfintervall: { baseType: INTEGER, default: 12, width: 80 }',
        '',
      ].join('\n'));
      expect(document.Classifier.customProperties.bemerkung).to.equal(null);
    });

    it('keeps keys it does not know, at every level inside a type, and ignores them', () => {
      const document = accepted([
        'Classifier:',
        '  sortierung: alphabetisch',
        '  groups: { kern: { farbe: blau } }',
        '  stereotypes: { entität: { farbe: grün, properties: { title: { tooltip: x } } } }',
        '  properties:',
        '    lable: Tippfehler auf Typebene',
        '    title: { lable: Vorname, tooltipPosition: oben }',
        '    status: { literals: { FINAL: { farbe: grün } } }',
        '  customProperties:',
        '    kennung: { baseType: ID, suchbar: true }',
        '',
      ].join('\n').replace('    lable: Tippfehler auf Typebene\n', ''));
      expect(document.Classifier.sortierung).to.equal('alphabetisch');
      expect(document.Classifier.properties.title.tooltipPosition).to.equal('oben');
    });

    it('keeps top-level keys that are not types as settings, whatever their case', () => {
      const document = accepted('Theme:\n  farbe: "#003366"\ntheme: { name: Blau }\nstartseite: { kacheln: [schemes] }\nStartseite: Willkommen\nMENÜ: [a, b]\nClassifier: {}\n');
      expect(Object.keys(document)).to.deep.equal(['Theme', 'theme', 'startseite', 'Startseite', 'MENÜ', 'Classifier']);
    });

    it('checks a model kind\'s entry as Scheme\'s, at the path of the kind', () => {
      accepted('Scheme:\n  groups: { kern: {} }\nDataCatalog:\n  extends: Scheme\n  properties:\n    modelType: { label: Art, group: kern }\n  customProperties:\n    katalognummer: { baseType: ID, group: kern }\n');
      expect(only('annotations', 'DataCatalog:\n  properties:\n    specializes: { label: X }\n')).to.deep.include({ key: 'profileUnknownProperty', path: 'DataCatalog.properties.specializes' });
      expect(only('annotations', 'DataCatalog:\n  customProperties:\n    nummer: { group: nirgends }\n')).to.deep.include({ key: 'profileUnknownGroup', path: 'DataCatalog.customProperties.nummer.group' });
      expect(only('annotations', 'DataCatalog:\n  customProperties:\n    nummer: { baseType: ZAHL }\n')).to.deep.include({ key: 'profileUnknownBaseType', path: 'DataCatalog.customProperties.nummer.baseType' });
    });

    it('keeps the types of decisions §7.1 and the model kinds', () => {
      accepted([
        'Dataset:',
        '  label: Datensatz',
        '  icon: fa-table',
        '  properties:',
        '    accrualPeriodicity: { label: Aktualisierungsintervall, width: 200 }',
        '  customProperties:',
        '    aufbewahrung: { baseType: INTEGER }',
        'DataDomainModel: { label: Fachdomänenmodell, extends: Scheme }',
        'ReferenceObject: { label: Referenzobjekt }',
        'Distribution: {}',
        'System: { plural: Systeme }',
        'Usage: {}',
        'Post: { label: Stelle }',
        'Classifier: { extends: Dataset }',
        '',
      ].join('\n'));
      const v = only('annotations', 'Dataset:\n  customProperties:\n    aufbewahrung: { baseType: ZAHL }\n');
      expect(v).to.deep.include({ key: 'profileUnknownBaseType', path: 'Dataset.customProperties.aufbewahrung.baseType' });
      expect(v.params).to.include({ line: 3, column: 31 });
    });

    describe('refuses a setting that looks like a type meant, naming the nearest type', () => {
      it('one that holds properties or customProperties', () => {
        let v = only('annotations', 'theme: {}\nGeschaeftsobjekt:\n  label: X\n  customProperties:\n    a: {}\n');
        expect(v).to.deep.include({ key: 'profileUnknownType', path: 'Geschaeftsobjekt' });
        expect(v.params).to.include({ line: 2, column: 1, value: 'Geschaeftsobjekt' });
        v = only('annotations', 'Organisationen:\n  properties:\n    label: { label: Name }\n');
        expect(v.params).to.include({ line: 1, column: 1, value: 'Organisationen', suggestion: 'Organization' });
        expect(translate('de', v.key, v.params)).to.equal('Zeile 1, Spalte 1: Der Typ Organisationen ist unbekannt (er enthält properties oder customProperties, die nur Typen haben); der nächstliegende Typ ist Organization.');
        // Deeper down, `properties` is a setting's own business.
        accepted('startseite:\n  kachel:\n    properties: { farbe: rot }\n');
      });

      it('one that differs from a type name by letter case alone, also from a type known later', () => {
        for (const [key, suggestion] of [['classifier', 'Classifier'], ['PERSON', 'Person'], ['dataset', 'Dataset'], ['businessAttribute', 'BusinessAttribute']]) {
          const v = only('annotations', `theme: {}\n${key}:\n  label: X\n`);
          expect(v, key).to.deep.include({ key: 'profileTypeCase', path: key });
          expect(v.params, key).to.include({ line: 2, column: 1, value: key, suggestion });
        }
      });

      it('one that differs from a type name by one letter', () => {
        for (const [key, suggestion] of [['Classifer', 'Classifier'], ['Persons', 'Person'], ['Grup', 'Group'], ['Datasets', 'Dataset'], ['Schema', 'Scheme']]) {
          const v = only('annotations', `startseite: {}\n${key}:\n  label: X\n`);
          expect(v, key).to.deep.include({ key: 'profileTypeTypo', path: key });
          expect(v.params, key).to.include({ line: 2, column: 1, value: key, suggestion });
          expect(translate('en', v.key, v.params), key).to.equal(`Line 2, column 1: ${key} is not a type; did you mean ${suggestion}? A setting must not differ from a type name by one letter only.`);
        }
      });
    });

    describe('refuses a known key with a wrong value, at its line and column', () => {
      const cases: [string, string, string, Record<string, unknown>][] = [
        ['type plural', 'Classifier:\n  plural: [a, b]\n', 'profileShapeText', { line: 2, column: 11 }],
        ['type pluralEn', 'Classifier:\n  pluralEn: 3\n', 'profileShapeText', { line: 2, column: 13 }],
        ['type gender', 'Classifier:\n  gender: { m: 1 }\n', 'profileShapeText', { line: 2, column: 11 }],
        ['type icon', 'Classifier:\n  icon: true\n', 'profileShapeText', { line: 2, column: 9 }],
        ['type order', 'Classifier:\n  order: zuerst\n', 'profileShapeNumber', { line: 2, column: 10 }],
        ['type hidden', 'Classifier:\n  hidden: ja\n', 'profileShapeBoolean', { line: 2, column: 11 }],
        ['type extends, not text', 'Classifier:\n  extends: [Collection]\n', 'profileShapeText', { line: 2, column: 12 }],
        ['type extends, unknown type', 'Classifier:\n  extends: Kollektion\n', 'profileUnknownExtends', { line: 2, column: 12, value: 'Kollektion', suggestion: 'Collection' }],
        ['type extends, itself', 'Classifier:\n  extends: Classifier\n', 'profileExtendsCycle', { line: 2, column: 12, value: 'Classifier' }],
        ['type extends, its subtype', 'Asset:\n  extends: Processing\n', 'profileExtendsCycle', { line: 2, column: 12, value: 'Processing', type: 'Asset' }],
        ['stereotypes', 'Classifier:\n  stereotypes: Entität\n', 'profileShapeMappingOrSequence', { line: 2, column: 16 }],
        ['stereotype label', 'Classifier:\n  stereotypes:\n    entität: { label: [Entität] }\n', 'profileShapeText', { line: 3, column: 23 }],
        ['stereotype icon', 'Classifier:\n  stereotypes:\n    entität:\n      icon: 7\n', 'profileShapeText', { line: 4, column: 13 }],
        ['stereotype properties', 'Classifier:\n  stereotypes:\n    entität:\n      properties:\n        titel: { label: Titel }\n', 'profileUnknownProperty', { line: 5, column: 9, value: 'titel' }],
        ['stereotype customProperties', 'Classifier:\n  stereotypes:\n    entität:\n      customProperties: [a]\n', 'profileShapeMappingOrNothing', { line: 4, column: 25 }],
        ['property width', 'Person:\n  properties:\n    email: { width: breit }\n', 'profileInvalidWidth', { line: 3, column: 21, value: 'breit' }],
        ['property width, zero', 'Person:\n  properties:\n    email: { width: 0 }\n', 'profileInvalidWidth', { line: 3, column: 21 }],
        ['property width, shape', 'Person:\n  properties:\n    email: { width: [1] }\n', 'profileShapeWidth', { line: 3, column: 21 }],
        ['property placeholder', 'Person:\n  properties:\n    email:\n      placeholder: { text: x }\n', 'profileShapeText', { line: 4, column: 20 }],
        ['property default, not of the enumeration', 'Classifier:\n  properties:\n    status: { default: FERTIG }\n', 'profileInvalidDefault', { line: 3, column: 24, value: 'FERTIG', dataType: 'ENUMERATION' }],
        ['property default, of a reference', 'Classifier:\n  properties:\n    specializes: { default: x }\n', 'profileInvalidDefault', { line: 3, column: 29, dataType: 'REFERENCE' }],
        ['custom default, not of the base type', 'Group:\n  customProperties:\n    anzahl: { baseType: INTEGER, default: viele }\n', 'profileInvalidDefault', { line: 3, column: 43, value: 'viele', dataType: 'INTEGER' }],
        ['custom default, not a literal', 'Group:\n  customProperties:\n    farbe:\n      default: lila\n      literals: [rot, grün]\n', 'profileInvalidDefault', { line: 4, column: 16, value: 'lila', dataType: 'STRING' }],
        ['custom width', 'Group:\n  customProperties:\n    farbe: { width: -3 }\n', 'profileInvalidWidth', { line: 3, column: 21 }],
        ['literal group', 'Classifier:\n  properties:\n    status:\n      literals:\n        FINAL: { group: [a] }\n', 'profileShapeText', { line: 5, column: 25 }],
        ['literal order', 'Classifier:\n  properties:\n    status:\n      literals:\n        FINAL: { order: erstes }\n', 'profileShapeNumber', { line: 5, column: 25 }],
        ['baseType', 'Group:\n  customProperties:\n    kennung: { baseType: UUID }\n', 'profileUnknownBaseType', { line: 3, column: 26, value: 'UUID' }],
        ['ID with cardinality MANY', 'Group:\n  customProperties:\n    kennung: { baseType: ID, cardinality: MANY }\n', 'profileIdNotMany', { line: 3, column: 43, value: 'kennung' }],
        ['ID with literals', 'Group:\n  customProperties:\n    kennung: { baseType: ID, literals: [a] }\n', 'profileLiteralsNotPossible', { line: 3, column: 30, dataType: 'ID' }],
        ['stereotype property literal declaring', 'Classifier:\n  stereotypes:\n    entität:\n      properties:\n        status:\n          literals:\n            FINAL:\n              label: Fertig\n              customProperties: { x: {} }\n', 'profileStereotypeLiteralCustom', { line: 9, column: 15 }],
        ['ENUM without literals', 'Group:\n  customProperties:\n    farbe: { baseType: ENUM }\n', 'profileEnumWithoutLiterals', { line: 3, column: 5, value: 'farbe' }],
      ];
      for (const [what, source, key, params] of cases) {
        it(what, () => {
          const v = only('annotations', source);
          expect(v.key, JSON.stringify(v)).to.equal(key);
          expect(v.params).to.include(params);
          expect(translate('de', v.key, v.params)).to.match(new RegExp(`^Zeile ${params.line}, Spalte ${params.column}: `));
        });
      }
    });

    it('stereotypes are alternatives: two may declare the same custom property, not one the type always has', () => {
      accepted('Classifier:\n  stereotypes:\n    a: { customProperties: { x: {} } }\n    b: { customProperties: { x: { baseType: INTEGER } } }\n');
      const v = only('annotations', 'Classifier:\n  customProperties:\n    x: {}\n  stereotypes:\n    a:\n      customProperties:\n        x: {}\n');
      expect(v).to.deep.include({ key: 'profileDeclaredTwice' });
      expect(v.params).to.include({ line: 7, column: 9, otherLine: 3 });
    });

    it('extends: groups and custom properties of the extended type count for the extending one', () => {
      accepted('Collection:\n  groups: [betrieb]\nClassifier:\n  extends: Collection\n  properties:\n    title: { group: betrieb }\n');
      const v = only('annotations', 'Collection:\n  customProperties:\n    x: {}\nClassifier:\n  extends: Collection\n  properties:\n    status:\n      literals:\n        FINAL:\n          customProperties:\n            x: {}\n');
      expect(v.key).to.equal('profileDeclaredTwice');
      // Cycles through two entries.
      const cycle = refused('annotations', 'Collection:\n  extends: Classifier\nClassifier:\n  extends: Collection\n');
      expect(cycle.map((c) => [c.key, c.params!.line])).to.deep.equal([['profileExtendsCycle', 2], ['profileExtendsCycle', 4]]);
    });

    it('names of the object prototype are no types, settings that hold properties are refused, extends to them too', () => {
      expect(only('annotations', 'Classifier:\n  extends: constructor\n')).to.deep.include({ key: 'profileUnknownExtends' });
      expect(only('annotations', 'Classifier:\n  extends: __proto__\n')).to.deep.include({ key: 'profileUnknownExtends' });
      expect(only('annotations', '__proto__:\n  properties: {}\n')).to.deep.include({ key: 'profileUnknownType', path: '__proto__' });
      const document = accepted('constructor: { a: 1 }\ntoString: x\nhasOwnProperty: [1]\nDataCatalog: { extends: constructor }\nClassifier:\n  extends: DataCatalog\n  stereotypes:\n    __proto__: { icon: x }\n    constructor: { customProperties: { a: {} } }\n');
      const rules = new CompiledAnnotations(document, metamodel);
      expect([...rules.rulesOf('Classifier').byProperty.get('stereotype')!.keys()]).to.deep.equal(['constructor']);
      expect(rules.rulesOf('constructor').always.size).to.equal(0);
      const resolved = resolveMetamodelFor(metamodel, [{ kind: 'annotations', document }], {}, 'de') as Record<string, any>;
      expect(resolved.types.Classifier.stereotypes.map((st: { name: string }) => st.name)).to.have.members(['__proto__', 'constructor']);
      expect(resolved.types.Classifier.extends).to.equal(undefined);
      expect(Object.keys(resolved.settings)).to.deep.equal(['constructor', 'toString', 'hasOwnProperty']);
    });

    it('a profile places custom properties (width, placeholder) but still declares nothing', () => {
      accepted('Classifier:\n  customProperties:\n    kennung: { width: 120, placeholder: K-0000, order: 1 }\n  stereotypes:\n    entität: { icon: fa-db, customProperties: { kennung: { width: 200 } } }\n', 'profile');
      const v = only('profile', 'Classifier:\n  stereotypes:\n    entität:\n      customProperties:\n        x: { baseType: ID }\n');
      expect(v).to.deep.include({ key: 'profileDeclaresCustom' });
      expect(v.params).to.include({ line: 5, column: 14, value: 'baseType' });
    });
  });
});
