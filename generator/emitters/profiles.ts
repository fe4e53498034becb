/**
 * Emits the standard profiles the service ships (decisions §6), from the
 * resolved metamodel, so that they always name exactly its types and
 * properties:
 * - `standard-annotations.gen.yaml`: every type with its own properties
 *   (inherited ones are annotated at the supertype), labelled in German
 *   (`label`) and English (`labelEn`), with the literals of enumerations;
 * - `standard-profile.gen.yaml`: the view of every concrete type in the
 *   user interface: groups, and each property's group, order and visibility.
 * Names the label table below does not know are labelled from the name
 * itself, so a type added to `meta` gets a usable label after a regenerate.
 */
import { readFileSync } from 'node:fs';
import { Document, parse } from 'yaml';
import { type Emitter, header } from '../emitter.ts';
import type { Metamodel, TypeDef } from '../../runtime/metamodel/model.ts';
import { STATUS_LABELS_PATH } from './views.ts';

type Labels = [de: string, en: string];

const TYPE_LABELS: Record<string, Labels> = {
  Resource: ['Ressource', 'Resource'],
  Asset: ['Asset', 'Asset'],
  Activity: ['Aktivität', 'Activity'],
  Processing: ['Verarbeitung', 'Processing'],
  Scheme: ['Schema', 'Scheme'],
  Collection: ['Sammlung', 'Collection'],
  Classifier: ['Geschäftsobjekt', 'Classifier'],
  BusinessAttribute: ['Attribut', 'Business attribute'],
  Derivation: ['Ableitung', 'Derivation'],
  Enumeration: ['Aufzählung', 'Enumeration'],
  Literal: ['Literal', 'Literal'],
  Organization: ['Organisation', 'Organization'],
  Person: ['Person', 'Person'],
  Group: ['Gruppe', 'Group'],
  Attribution: ['Zuständigkeit', 'Attribution'],
  Tenant: ['Mandant', 'Tenant'],
  User: ['Benutzer', 'User'],
  Usage: ['Verwendung', 'Usage'],
  Deployment: ['Bereitstellung', 'Deployment'],
  Dataset: ['Datensatz', 'Dataset'],
  Distribution: ['Distribution', 'Distribution'],
  System: ['System', 'System'],
  DataObject: ['Datenobjekt', 'Data object'],
  UmlClass: ['Klasse', 'Class'],
  UmlAttribute: ['Attribut', 'Attribute'],
  Composition: ['Komposition', 'Composition'],
  Datatype: ['Datentyp', 'Datatype'],
  ReferenceObject: ['Referenzobjekt', 'Reference object'],
  ReferenceValue: ['Referenzwert', 'Reference value'],
  Post: ['Stelle', 'Post'],
  HoldsPost: ['Stellenbesetzung', 'Post held'],
};

/** By `Type.property` where one name means different things, else by property name. */
const PROPERTY_LABELS: Record<string, Labels> = {
  id: ['Technischer Schlüssel', 'Technical key'],
  _version: ['Version', 'Version'],
  tenant: ['Mandant', 'Tenant'],
  createdBy: ['Erstellt von', 'Created by'],
  dateCreated: ['Erstellt am', 'Created at'],
  modifiedBy: ['Geändert von', 'Modified by'],
  dateModified: ['Geändert am', 'Modified at'],
  db: ['Datenbank', 'Database'],
  label: ['Name', 'Label'],
  title: ['Titel', 'Title'],
  description: ['Beschreibung', 'Description'],
  status: ['Status', 'Status'],
  modelId: ['Modell', 'Model'],
  parentId: ['Übergeordnetes Objekt', 'Parent'],
  href: ['Adresse', 'Address'],
  attributedTo: ['Zuständigkeiten', 'Responsibilities'],
  'Attribution.attributedTo': ['Zuständig', 'Responsible'],
  attributionFor: ['Zuständigkeit für', 'Responsibility for'],
  role: ['Rolle', 'Role'],
  collections: ['Sammlungen', 'Collections'],
  classifiers: ['Geschäftsobjekte', 'Classifiers'],
  enumerations: ['Aufzählungen', 'Enumerations'],
  processings: ['Verarbeitungen', 'Processings'],
  specializes: ['Spezialisiert', 'Specializes'],
  abstract: ['Abstrakt', 'Abstract'],
  pluralName: ['Pluralname', 'Plural name'],
  root: ['Oberste Ebene', 'Top level'],
  labelFrom: ['Name gebildet aus', 'Label from'],
  attributes: ['Attribute', 'Attributes'],
  hasDomain: ['Geschäftsobjekt', 'Domain'],
  hasRange: ['Wertebereich', 'Range'],
  dataType: ['Datentyp', 'Data type'],
  identifying: ['Identifizierend', 'Identifying'],
  minCardinality: ['Minimale Kardinalität', 'Minimum cardinality'],
  maxCardinality: ['Maximale Kardinalität', 'Maximum cardinality'],
  required: ['Pflicht', 'Required'],
  cardinality: ['Kardinalität', 'Cardinality'],
  readOnly: ['Schreibgeschützt', 'Read-only'],
  writeOnly: ['Nur schreibbar', 'Write-only'],
  owner: ['Besitzer', 'Owner'],
  defaultValue: ['Vorgabewert', 'Default value'],
  inverseOf: ['Invers zu', 'Inverse of'],
  derivedTo: ['Abgeleitet nach', 'Derived to'],
  derivedFrom: ['Abgeleitet von', 'Derived from'],
  'Derivation.derivedFrom': ['Quelle', 'Source'],
  'Derivation.derivedTo': ['Ziel', 'Target'],
  qualifier: ['Qualifizierung', 'Qualifier'],
  stereotype: ['Stereotyp', 'Stereotype'],
  tags: ['Schlagwörter', 'Tags'],
  synonyms: ['Synonyme', 'Synonyms'],
  favorite: ['Favorit', 'Favorite'],
  locked: ['Gesperrt', 'Locked'],
  'Asset.readOnly': ['Nur lesbar', 'Read-only'],
  usages: ['Verwendungen', 'Usages'],
  usedBy: ['Verwendet von', 'Used by'],
  usageOf: ['Verwendet', 'Uses'],
  deployments: ['Bereitstellungen', 'Deployments'],
  deploymentOf: ['Bereitgestellt', 'Deployed'],
  deployedIn: ['Bereitgestellt in', 'Deployed in'],
  modelType: ['Modellart', 'Model type'],
  systems: ['Systeme', 'Systems'],
  dataObjects: ['Datenobjekte', 'Data objects'],
  datatypes: ['Datentypen', 'Datatypes'],
  datasets: ['Datensätze', 'Datasets'],
  distributions: ['Distributionen', 'Distributions'],
  accrualPeriodicity: ['Aktualisierungsintervall', 'Accrual periodicity'],
  spatial: ['Räumliche Abdeckung', 'Spatial coverage'],
  usageRestriction: ['Nutzungseinschränkung', 'Usage restriction'],
  retentionPeriod: ['Aufbewahrungsfrist', 'Retention period'],
  retentionJustification: ['Begründung der Aufbewahrung', 'Retention justification'],
  archiveDetails: ['Archivierung', 'Archive details'],
  archiveJustification: ['Begründung der Archivierung', 'Archive justification'],
  historicizationType: ['Historisierung', 'Historicization'],
  accessURL: ['Zugriffs-URL', 'Access URL'],
  downloadURL: ['Download-URL', 'Download URL'],
  format: ['Format', 'Format'],
  mediaType: ['Medientyp', 'Media type'],
  physicalName: ['Physischer Name', 'Physical name'],
  'UmlClass.attributes': ['Attribute', 'Attributes'],
  'UmlAttribute.hasDomain': ['Klasse', 'Class'],
  'Composition.hasDomain': ['Ganzes', 'Whole'],
  'Composition.hasRange': ['Teil', 'Part'],
  compositions: ['Kompositionen', 'Compositions'],
  timeSeries: ['Zeitreihe', 'Time series'],
  posts: ['Stellen', 'Posts'],
  holdsPost: ['Stellen', 'Posts held'],
  'HoldsPost.holdsPost': ['Stelle', 'Post'],
  heldBy: ['Person', 'Person'],
  additionalName: ['Weiterer Name', 'Additional name'],
  literals: ['Literale', 'Literals'],
  code: ['Code', 'Code'],
  order: ['Reihenfolge', 'Order'],
  organizations: ['Organisationen', 'Organizations'],
  persons: ['Personen', 'Persons'],
  groups: ['Gruppen', 'Groups'],
  givenName: ['Vorname', 'Given name'],
  familyName: ['Nachname', 'Family name'],
  email: ['E-Mail', 'Email'],
  agentOf: ['Organisation', 'Organization'],
  loginId: ['Anmeldename', 'Login ID'],
  accessLevel: ['Zugriffsstufe', 'Access level'],
  defaultTenant: ['Standardmandant', 'Default tenant'],
  serviceUser: ['Dienstbenutzer', 'Service user'],
  password: ['Passwort', 'Password'],
  subjectId: ['Subjekt-ID', 'Subject identifier'],
  isPerson: ['Person', 'Person'],
  statementTimeout: ['Abfrage-Zeitlimit (ms)', 'Statement timeout (ms)'],
};

const LITERAL_LABELS: Record<string, Record<string, Labels>> = {
  Required: { OPTIONAL: ['Optional', 'Optional'], MANDATORY: ['Pflicht', 'Mandatory'] },
  Cardinality: { ONE: ['Einer', 'One'], MANY: ['Mehrere', 'Many'] },
  AccessLevel: { READ_ONLY: ['Lesen', 'Read only'], EDITOR: ['Bearbeiten', 'Editor'], ADMINISTRATOR: ['Administrieren', 'Administrator'] },
  ModelType: {
    BusinessDataModel: ['Begriffsmodell', 'Business data model'],
    DataCatalog: ['Datenkatalog', 'Data catalog'],
    DataDomainModel: ['Datendomänenmodell', 'Data domain model'],
    DataModel: ['Datenmodell', 'Data model'],
    MeasuresCatalog: ['Kennzahlenkatalog', 'Measures catalog'],
    ProcessingDirectory: ['Verarbeitungsverzeichnis', 'Processing directory'],
    ProjectDirectory: ['Projektverzeichnis', 'Project directory'],
    QualityModel: ['Qualitätsmodell', 'Quality model'],
    ReferenceDataModel: ['Referenzdatenmodell', 'Reference data model'],
    SystemCatalog: ['Systemkatalog', 'System catalog'],
  },
};

/** The user interface shows these first, in this order; the rest follows by name. */
const LEADING = ['label', 'title', 'description', 'status'];
/** Kept by the service; shown last, in this order. */
const TRAILING = ['id', '_version', 'tenant', 'modelId', 'parentId', 'createdBy', 'dateCreated', 'modifiedBy', 'dateModified', 'db', 'href'];
/** Only of use to programs: hidden in the standard view. */
const HIDDEN = new Set(['db', 'href', 'modelId', 'parentId', 'tenant', '_version']);

function humanized(name: string): string {
  const words = name.replace(/^_/, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function typeLabels(name: string): Labels {
  return TYPE_LABELS[name] ?? [humanized(name), humanized(name)];
}

function propertyLabels(type: string, name: string): Labels {
  return PROPERTY_LABELS[`${type}.${name}`] ?? PROPERTY_LABELS[name] ?? [humanized(name), humanized(name)];
}

function rank(name: string): [number, string] {
  if (LEADING.includes(name)) return [LEADING.indexOf(name), ''];
  if (TRAILING.includes(name)) return [1000 + TRAILING.indexOf(name), ''];
  return [100, name];
}

function ordered(names: string[]): string[] {
  return [...names].sort((a, b) => {
    const [ra, na] = rank(a);
    const [rb, nb] = rank(b);
    return ra - rb || (na < nb ? -1 : na > nb ? 1 : 0);
  });
}

function statusLabels(): Record<string, Labels> {
  const raw = parse(readFileSync(STATUS_LABELS_PATH, 'utf8')) as Record<string, { en: string; de: string }>;
  return Object.fromEntries(Object.entries(raw).map(([literal, l]) => [literal, [l.de, l.en] as Labels]));
}

function literalsOf(range: string, values: string[], status: Record<string, Labels>): Record<string, unknown> {
  const known = range === 'Status' ? status : LITERAL_LABELS[range] ?? {};
  return Object.fromEntries(values.map((v) => {
    const [label, labelEn] = known[v] ?? [humanized(v.toLowerCase()), humanized(v.toLowerCase())];
    return [v, { label, labelEn }];
  }));
}

function standardAnnotations(model: Metamodel): Record<string, unknown> {
  const status = statusLabels();
  const result: Record<string, unknown> = {};
  for (const name of Object.keys(model.types).sort()) {
    const type = model.types[name];
    const [label, labelEn] = typeLabels(name);
    const own = new Map<string, Record<string, unknown>>();
    for (const p of type.properties.filter((d) => d.declaredBy === name)) {
      own.set(p.name, {
        ...labelled(propertyLabels(name, p.name)),
        order: 0,
        ...(p.readOnly ? { readOnly: true } : {}),
        ...(p.required ? { mandatory: true } : {}),
        ...(p.dataType === 'ENUMERATION' && p.values ? { literals: literalsOf(p.range!, p.values, status) } : {}),
      });
    }
    for (const l of type.lists.filter((d) => d.declaredBy === name)) {
      own.set(l.name, { ...labelled(propertyLabels(name, l.name)), order: 0, readOnly: l.inverseOf ? true : undefined });
    }
    const properties = Object.fromEntries(ordered([...own.keys()]).map((p, i) => [p, clean({ ...own.get(p), order: (i + 1) * 10 })]));
    result[name] = { label, labelEn, ...(own.size ? { properties } : {}) };
  }
  return result;
}

function labelled([label, labelEn]: Labels) {
  return { label, labelEn };
}

function clean(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

const GROUPS = {
  general: { label: 'Allgemein', labelEn: 'General', order: 10 },
  details: { label: 'Details', labelEn: 'Details', order: 20 },
  relations: { label: 'Beziehungen', labelEn: 'Relations', order: 30 },
  system: { label: 'System', labelEn: 'System', order: 40 },
};

function groupOf(type: TypeDef, name: string): keyof typeof GROUPS {
  if (LEADING.includes(name)) return 'general';
  if (TRAILING.includes(name)) return 'system';
  return type.lists.some((l) => l.name === name) ? 'relations' : 'details';
}

/** The groups are declared once, at the root of the type hierarchy, and so hold for every type. */
function standardProfile(model: Metamodel): Record<string, unknown> {
  const roots = Object.keys(model.types).filter((t) => !model.types[t].supertype).sort();
  const result: Record<string, unknown> = Object.fromEntries(roots.map((t) => [t, { groups: GROUPS }]));
  for (const name of Object.keys(model.types).sort()) {
    const type = model.types[name];
    if (type.abstract) continue;
    const readOnly = new Set(type.properties.filter((p) => p.readOnly).map((p) => p.name));
    const names = ordered([...type.properties.map((p) => p.name), ...type.lists.map((l) => l.name)]);
    const properties = Object.fromEntries(names.map((p, i) => [p, {
      group: groupOf(type, p),
      order: (i + 1) * 10,
      ...(HIDDEN.has(p) ? { hidden: true } : {}),
      ...(readOnly.has(p) ? { readOnly: true } : {}),
    }]));
    result[name] = { properties };
  }
  return result;
}

function render(emitter: string, intro: string[], content: Record<string, unknown>, model: Metamodel): string {
  const doc = new Document(content, { aliasDuplicateObjects: false });
  doc.commentBefore = intro.map((line) => (line ? ` ${line}` : '')).join('\n');
  // Each type's description, above it, where one reads the file.
  for (const pair of (doc.contents as unknown as { items: { key: { value: string; commentBefore?: string } }[] }).items) {
    const description = model.types[pair.key.value]?.description;
    if (description) pair.key.commentBefore = ` ${description}`;
  }
  return `${header(emitter, '#')}\n${doc.toString({ lineWidth: 0 })}`;
}

export const profilesEmitter: Emitter = {
  name: 'profiles',
  emit(model) {
    const annotations = render('profiles', [
      'standard-annotations: the labels of every type and property of the standard',
      'metamodel, in German (label) and English (labelEn). Properties inherited from a',
      'supertype are annotated there (Processing < Activity < Asset < Resource).',
      '',
      'A tenant\'s own annotations (profile "annotations") have the same format and may',
      'declare custom properties; see plugins/profiles/README.md.',
    ], standardAnnotations(model), model);
    const profile = render('profiles', [
      'standard-profile: how the user interface shows every concrete type: its groups,',
      'and each property\'s group, order and visibility. Labels come from the',
      'annotations. A tenant\'s own profile (profile "profile") has the same format.',
    ], standardProfile(model), model);
    return [
      { path: 'standard-annotations.gen.yaml', content: annotations },
      { path: 'standard-profile.gen.yaml', content: profile },
    ];
  },
};
