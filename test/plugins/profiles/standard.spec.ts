/**
 * The standard profiles: generated from the metamodel, checked in under
 * generated/, consistent with the metamodel they come from, and accepted by
 * the same checks an upload gets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { profilesEmitter } from '../../../generator/emitters/profiles.ts';
import { resolveMetamodel } from '../../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../../runtime/metamodel/standard.ts';
import { readProfile } from '../../../plugins/profiles/document.ts';
import type { RawMetamodel } from '../../../runtime/metamodel/model.ts';

const GENERATED = new URL('../../../generated/', import.meta.url).pathname;

describe('profiles: the standard profiles', () => {
  const model = resolveMetamodel(readStandardMetamodel());
  const files = Object.fromEntries(profilesEmitter.emit(model).map((f) => [f.path, f.content]));

  it('are what generated/ holds (npm run generate -- --standard leaves no diff)', () => {
    for (const [path, content] of Object.entries(files)) {
      expect(readFileSync(join(GENERATED, path), 'utf8'), path).to.equal(content);
    }
    expect(profilesEmitter.emit(model).map((f) => f.content)).to.deep.equal(Object.values(files));
  });

  it('annotate every type and every property where it is declared, with German and English labels', () => {
    const annotations = parse(files['standard-annotations.gen.yaml']) as Record<string, { label: string; labelEn: string; properties?: Record<string, Record<string, unknown>> }>;
    expect(Object.keys(annotations).sort()).to.deep.equal(Object.keys(model.types).sort());
    for (const type of Object.values(model.types)) {
      const own = [...type.properties, ...type.lists].filter((p) => p.declaredBy === type.name).map((p) => p.name).sort();
      expect(Object.keys(annotations[type.name].properties ?? {}).sort(), type.name).to.deep.equal(own);
    }
    expect(annotations.Processing).to.deep.include({ label: 'Verarbeitung', labelEn: 'Processing' });
    expect(annotations.Resource.properties!.status.literals).to.deep.include({ WORKING: { label: 'In Bearbeitung', labelEn: 'Working' }, PUBLISHED: { label: 'Veröffentlicht', labelEn: 'Published' } });
    expect(annotations.Person.properties!.givenName).to.include({ label: 'Vorname', mandatory: true });
    expect(annotations.Resource.properties!.id).to.include({ readOnly: true });
  });

  it('give every concrete type a view with all its properties in groups', () => {
    const profile = parse(files['standard-profile.gen.yaml']) as Record<string, { groups?: Record<string, unknown>; properties?: Record<string, { group: string; hidden?: boolean }> }>;
    const concrete = Object.values(model.types).filter((t) => !t.abstract);
    for (const type of concrete) {
      const names = [...type.properties, ...type.lists].map((p) => p.name).sort();
      expect(Object.keys(profile[type.name].properties!).sort(), type.name).to.deep.equal(names);
    }
    expect(Object.keys(profile.Resource.groups!)).to.deep.equal(['general', 'details', 'relations', 'system']);
    expect(profile.BusinessAttribute.properties!.db).to.include({ group: 'system', hidden: true });
  });

  it('follow a changed metamodel: a new type and property get labels from their names and pass the checks', () => {
    const raw = readStandardMetamodel() as RawMetamodel;
    raw.types.DataProduct = { supertype: 'Asset', plural: 'dataProducts', root: true, description: 'A data product.', properties: { servicePortalUrl: { dataType: 'STRING' } } };
    const changed = resolveMetamodel(raw);
    const emitted = Object.fromEntries(profilesEmitter.emit(changed).map((f) => [f.path, f.content]));
    const annotations = parse(emitted['standard-annotations.gen.yaml']);
    expect(annotations.DataProduct).to.deep.equal({ label: 'Data product', labelEn: 'Data product', properties: { servicePortalUrl: { label: 'Service portal url', labelEn: 'Service portal url', order: 10 } } });
    expect(readProfile('annotations', Buffer.from(emitted['standard-annotations.gen.yaml']), changed).ok).to.equal(true);
    expect(readProfile('profile', Buffer.from(emitted['standard-profile.gen.yaml']), changed).ok).to.equal(true);
    // The old metamodel does not know the new type.
    expect(readProfile('annotations', Buffer.from(emitted['standard-annotations.gen.yaml']), model).ok).to.equal(false);
  });
});
