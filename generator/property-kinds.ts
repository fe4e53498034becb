/**
 * One definition per property kind (the metamodel's data types): the
 * TypeScript type of a value, its JSON Schema with every limit, and its SQL
 * column in the query interface's views. The models, validators, views and
 * OpenAPI emitters all read a value's shape from here and nowhere else, so
 * the limits the validators enforce are the limits the OpenAPI document
 * states (test/generator/property-kinds.spec.ts compares the emitted files).
 *
 * LIST and INVERSE are not values: they are lists below an object, shown as
 * links in `_links` and read at their own paths, so they have no kind here.
 * RECORDS is a value: a list of records kept inside the object (a reference
 * value's time series), each record's fields of the kinds above.
 */
import type { PropertyDef, TypeDef } from '../runtime/metamodel/model.ts';

/** A JSON Schema (draft 2020-12, which OpenAPI 3.1 uses as it is). */
export type JsonSchema = Record<string, unknown>;

export type ValueDataType = PropertyDef['dataType'];

export interface PropertyKind {
  /** TypeScript type of one value (an array item if the property is `many`). */
  typescript(p: PropertyDef): string;
  /** JSON Schema of one value, limits included. */
  schema(p: PropertyDef): JsonSchema;
  /** Column type of the SQL views. */
  sql: string;
}

/** Longest STRING (labels, titles, names) and TEXT (descriptions), in characters. */
export const STRING_MAX_LENGTH = 1000;
export const TEXT_MAX_LENGTH = 100000;

/**
 * Whole numbers stay within what a JSON number carries exactly (a larger one
 * would come back changed) and what the views' `bigint` holds.
 */
const WHOLE_NUMBER = { type: 'integer', format: 'int64', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
/** Epoch milliseconds within the range of an ECMAScript Date (±100,000,000 days). */
const EPOCH_MILLISECONDS = { type: 'integer', format: 'int64', minimum: -8.64e15, maximum: 8.64e15 };


/**
 * The canonical 8-4-4-4-12 form only, stated as a pattern so that every
 * reader of the document checks the same: a `uuid` format checker may also
 * take `urn:uuid:…`, which the database's uuid type refuses.
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID_VALUE = { type: 'string', format: 'uuid', pattern: UUID_PATTERN };

const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
/** A union of string literals, `never` for none. */
export const literalUnion = (values: readonly string[]) => (values.length ? values.map(quoted).join(' | ') : 'never');

const constant = (typescript: string, schema: JsonSchema, sql: string): PropertyKind => ({ typescript: () => typescript, schema: () => ({ ...schema }), sql });

/** Most records one RECORDS property holds. */
export const RECORDS_MAX_ITEMS = 1000;

/** The fields of a record: each of its own kind; a mandatory one must be there and not empty, an optional one may be null. */
function recordSchema(p: PropertyDef): JsonSchema {
  const fields = p.fields ?? [];
  const properties = Object.fromEntries(fields.map((f) => {
    const value = PROPERTY_KINDS[f.dataType].schema(f);
    if (!f.required) return [f.name, { anyOf: [value, { type: 'null' }] }];
    return [f.name, isFreeText(value) ? { ...value, minLength: 1 } : value];
  }));
  const required = fields.filter((f) => f.required).map((f) => f.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

const recordTypescript = (p: PropertyDef) =>
  `{ ${(p.fields ?? []).map((f) => `${f.name}${f.required ? '' : '?'}: ${PROPERTY_KINDS[f.dataType].typescript(f)}${f.required ? '' : ' | null'}`).join('; ')} }[]`;

export const PROPERTY_KINDS: Record<ValueDataType, PropertyKind> = {
  STRING: constant('string', { type: 'string', maxLength: STRING_MAX_LENGTH }, 'text'),
  TEXT: constant('string', { type: 'string', maxLength: TEXT_MAX_LENGTH }, 'text'),
  INTEGER: constant('number', WHOLE_NUMBER, 'bigint'),
  DECIMAL: constant('number', { type: 'number' }, 'numeric'),
  BOOLEAN: constant('boolean', { type: 'boolean' }, 'boolean'),
  UUID: constant('string', UUID_VALUE, 'uuid'),
  REFERENCE: constant('string', UUID_VALUE, 'uuid'),
  DATETIME: constant('number', EPOCH_MILLISECONDS, 'timestamp'),
  ENUMERATION: {
    typescript: (p) => (p.many ? `(${literalUnion(p.values ?? [])})` : literalUnion(p.values ?? [])),
    schema: (p) => ({ type: 'string', enum: [...(p.values ?? [])] }),
    sql: 'text',
  },
  RECORDS: {
    typescript: recordTypescript,
    schema: (p) => ({ type: 'array', items: recordSchema(p), maxItems: RECORDS_MAX_ITEMS }),
    sql: 'jsonb',
  },
};

/** The TypeScript type of a property: its value's, or an array of them. */
export function propertyTypescript(p: PropertyDef): string {
  const value = PROPERTY_KINDS[p.dataType].typescript(p);
  return p.many ? `${value}[]` : value;
}

export const valueSchema = (p: PropertyDef): JsonSchema => PROPERTY_KINDS[p.dataType].schema(p);
export const sqlType = (p: PropertyDef): string => PROPERTY_KINDS[p.dataType].sql;

/** A property as read: one value or an array of them. */
export function readPropertySchema(p: PropertyDef): JsonSchema {
  return p.many ? { type: 'array', items: valueSchema(p) } : valueSchema(p);
}

// A format or an enumeration already excludes the empty string.
const isFreeText = (value: JsonSchema) => value.type === 'string' && !value.format && !value.enum;

/**
 * Whether a property must be set in an object's writable state. The label is
 * the business key: mandatory unless the type forms it from other properties.
 */
export const isMandatory = (t: TypeDef, p: PropertyDef) => (p.name === 'label' ? !t.labelFrom : p.required);

/**
 * A property as written: a mandatory value must not be empty, an optional one
 * may be null (= unset). A label is never empty, even where it may be left
 * out to be formed from other properties.
 */
export function writePropertySchema(t: TypeDef, p: PropertyDef): JsonSchema {
  const mandatory = isMandatory(t, p);
  const value = valueSchema(p);
  const nonEmpty = (mandatory || p.name === 'label') && isFreeText(value) && !p.many;
  const schema: JsonSchema = p.many
    ? { type: 'array', items: value, ...(mandatory ? { minItems: 1 } : {}) }
    : { ...value, ...(nonEmpty ? { minLength: 1 } : {}) };
  return mandatory ? schema : { anyOf: [schema, { type: 'null' }] };
}

/** The TypeScript type of a property in a write form: an optional one may be null. */
export function writePropertyTypescript(t: TypeDef, p: PropertyDef): string {
  return isMandatory(t, p) ? propertyTypescript(p) : `${propertyTypescript(p)} | null`;
}
