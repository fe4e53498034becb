/**
 * The metamodel stored as metadata in the `meta` database: a scheme
 * "Metamodel" with one classifier per type (its attributes the type's
 * properties and lists) and one enumeration per value list; the structures
 * of records (RECORDS properties) are classifiers in its collection
 * "Records", their attributes the fields. `seedMetamodel` writes it;
 * `readMetamodel` reads it back for the generator.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { ObjectStore, plainObject, type StoredObject } from './objects.ts';
import { schemaOf } from './migrations.ts';
import type { DataType, RawMetamodel, RawProperty, RawType } from '../metamodel/model.ts';

export const META_DATABASE = 'meta';
export const METAMODEL_SCHEME = 'Metamodel';
/** The collection of the metamodel scheme that holds the record structures. */
export const RECORDS_COLLECTION = 'Records';

export async function seedMetamodel(trx: Knex.Transaction, raw: RawMetamodel, tenant: string, actor: string): Promise<void> {
  const store = new ObjectStore(trx, META_DATABASE);
  const now = await store.now();
  const objects: StoredObject[] = [];
  const make = (type: string, parent: StoredObject | null, list: string, label: string, props: Record<string, unknown>, description?: string): StoredObject => {
    const id = randomUUID();
    const o: StoredObject = {
      id, type, tenant, parentId: parent?.id ?? null, list, label, title: null, description: description ?? null,
      status: 'WORKING', modelId: parent ? (parent.modelId ?? parent.id) : id, version: 1, createdBy: actor,
      dateCreated: now, modifiedBy: actor, dateModified: now, props: withoutEmpty(props), custom: {},
    };
    objects.push(o);
    return o;
  };
  const scheme = make('Scheme', null, 'schemes', METAMODEL_SCHEME, {}, 'The types, properties and value lists of the service.');
  const ranges = new Map<string, string>();
  for (const [name, e] of Object.entries(raw.enumerations)) {
    const enumeration = make('Enumeration', scheme, 'enumerations', name, {}, e.description);
    ranges.set(name, enumeration.id);
    e.literals.forEach((literal, order) => make('Literal', enumeration, 'literals', literal, { code: literal, order }));
  }
  const attribute = (c: StoredObject, propName: string, p: RawProperty) => make('BusinessAttribute', c, 'attributes', propName, {
    hasDomain: c.id,
    hasRange: p.range ? ranges.get(p.range) : undefined,
    dataType: p.dataType,
    required: p.required ?? 'OPTIONAL',
    cardinality: p.cardinality ?? 'ONE',
    readOnly: p.readOnly,
    writeOnly: p.writeOnly,
    owner: p.owner,
    defaultValue: p.default,
    inverseOf: p.inverseOf,
  }, p.description);
  const recordEntries = Object.entries(raw.records ?? {});
  if (recordEntries.length) {
    const folder = make('Collection', scheme, 'collections', RECORDS_COLLECTION, {}, 'Structures of the records that RECORDS properties hold.');
    for (const [name, r] of recordEntries) {
      const c = make('Classifier', folder, 'classifiers', name, {}, r.description);
      ranges.set(name, c.id);
      for (const [fieldName, f] of Object.entries(r.fields)) attribute(c, fieldName, f);
    }
  }
  const classifiers = new Map<string, StoredObject>();
  for (const name of Object.keys(raw.types)) {
    const t = raw.types[name];
    const c = make('Classifier', scheme, 'classifiers', name, { abstract: t.abstract, pluralName: t.plural, root: t.root, labelFrom: t.labelFrom, modelTypes: t.modelTypes }, t.description);
    classifiers.set(name, c);
    ranges.set(name, c.id);
  }
  for (const [name, t] of Object.entries(raw.types)) {
    const c = classifiers.get(name)!;
    if (t.supertype) c.props.specializes = classifiers.get(t.supertype)!.id;
    for (const [propName, p] of Object.entries(t.properties ?? {})) attribute(c, propName, p);
  }
  await store.write(objects, (o) => plainObject(o, META_DATABASE), actor);
}

function withoutEmpty(props: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(props).filter(([, v]) => v !== undefined && v !== null && v !== false));
}

interface MetaRow { id: string; type: string; parent_id: string | null; label: string; description: string | null; props: Record<string, unknown> }

/** Reads the metamodel scheme of the `meta` database's default tenant. */
export async function readMetamodel(knex: Knex): Promise<RawMetamodel> {
  const s = `"${schemaOf(META_DATABASE)}"`;
  const scheme = await knex.raw(
    `select o.id from ${s}.objects o join service.databases d on d.name = ? and d.default_tenant = o.tenant
     where o.type = 'Scheme' and o.parent_id is null and o.label = ?`,
    [META_DATABASE, METAMODEL_SCHEME],
  );
  if (!scheme.rows.length) throw new Error(`the meta database has no scheme ${METAMODEL_SCHEME}`);
  const rows: MetaRow[] = (await knex.raw(
    `select id, type, parent_id, label, description, props from ${s}.objects where model_id = ? order by label, id`,
    [scheme.rows[0].id],
  )).rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const raw: RawMetamodel = { enumerations: {}, types: {} };
  for (const e of rows.filter((r) => r.type === 'Enumeration')) {
    const literals = rows.filter((r) => r.type === 'Literal' && r.parent_id === e.id)
      .sort((a, b) => Number(a.props.order ?? 0) - Number(b.props.order ?? 0) || a.label.localeCompare(b.label));
    raw.enumerations[e.label] = { ...(e.description ? { description: e.description } : {}), literals: literals.map((l) => l.label) };
  }
  const folder = rows.find((r) => r.type === 'Collection' && r.parent_id === scheme.rows[0].id && r.label === RECORDS_COLLECTION);
  for (const c of rows.filter((r) => r.type === 'Classifier' && folder && r.parent_id === folder.id)) {
    const fields: Record<string, RawProperty> = {};
    for (const a of rows.filter((r) => r.type === 'BusinessAttribute' && r.parent_id === c.id)) fields[a.label] = attributeToProperty(a, byId);
    (raw.records ??= {})[c.label] = { ...(c.description ? { description: c.description } : {}), fields };
  }
  for (const c of rows.filter((r) => r.type === 'Classifier' && !(folder && r.parent_id === folder.id))) {
    const p = c.props;
    const type: RawType = {
      ...(p.specializes ? { supertype: byId.get(p.specializes as string)?.label ?? `unknown ${p.specializes}` } : {}),
      ...(p.pluralName ? { plural: p.pluralName as string } : {}),
      ...(p.abstract ? { abstract: true } : {}),
      ...(p.root ? { root: true } : {}),
      ...(p.labelFrom ? { labelFrom: p.labelFrom as string } : {}),
      ...(p.modelTypes ? { modelTypes: p.modelTypes as string } : {}),
      ...(c.description ? { description: c.description } : {}),
      properties: {},
    };
    for (const a of rows.filter((r) => r.type === 'BusinessAttribute' && r.parent_id === c.id)) {
      type.properties![a.label] = attributeToProperty(a, byId);
    }
    raw.types[c.label] = type;
  }
  return raw;
}

function attributeToProperty(a: MetaRow, byId: Map<string, MetaRow>): RawProperty {
  const p = a.props;
  const range = p.hasRange ? byId.get(p.hasRange as string)?.label ?? `unknown ${p.hasRange}` : undefined;
  return {
    dataType: (p.dataType as DataType) ?? 'STRING',
    ...(range ? { range } : {}),
    ...(p.required === 'MANDATORY' ? { required: 'MANDATORY' as const } : {}),
    ...(p.cardinality === 'MANY' ? { cardinality: 'MANY' as const } : {}),
    ...(p.readOnly ? { readOnly: true } : {}),
    ...(p.writeOnly ? { writeOnly: true } : {}),
    ...(p.owner ? { owner: true } : {}),
    ...(p.defaultValue !== undefined ? { default: String(p.defaultValue) } : {}),
    ...(p.inverseOf ? { inverseOf: p.inverseOf as string } : {}),
    ...(a.description ? { description: a.description } : {}),
  };
}
