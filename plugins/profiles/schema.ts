/**
 * The shape of an annotation or profile document as JSON schemas, checked
 * with ajv before anything looks at the metamodel. Both kinds share one
 * shape (decisions §6); a profile only presents, so its custom properties
 * and literals cannot declare anything (no base type, no literal-specific
 * custom properties).
 *
 * Top-level keys that start with an upper-case letter are `_type` names;
 * every other top-level key (themes and the like) is a setting the service
 * keeps without looking into it.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

export type ProfileKind = 'annotations' | 'profile';

export const BASE_TYPES = ['STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'BOOLEAN', 'DATE', 'DATETIME', 'REFERENCE'] as const;
export type BaseType = typeof BASE_TYPES[number];

export const CARDINALITIES = ['ONE', 'MANY'] as const;

/** Type annotations are the top-level keys that look like `_type` names. */
export const TYPE_KEY = /^[A-Z]/;

const text = { type: 'string' };
const flag = { type: 'boolean' };
const labels = { label: text, labelEn: text, title: text, titleEn: text };
const presentation = { ...labels, order: { type: 'number' }, group: text, hidden: flag, readOnly: flag };

/** A set of names: a list of names, or a mapping of name to its definition (which may be empty). */
function namedSet(definition: object) {
  return { type: ['array', 'object'], items: { type: ['string', 'number', 'boolean'] }, additionalProperties: definition };
}

function schemaOf(kind: ProfileKind): object {
  const declares = kind === 'annotations';
  const literal = {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { ...labels, order: { type: 'number' }, hidden: flag, ...(declares ? { customProperties: { $ref: '#/$defs/customProperties' } } : {}) },
  };
  const customProperty = declares
    ? {
      type: 'object',
      additionalProperties: false,
      required: ['baseType'],
      properties: {
        ...presentation,
        baseType: { enum: [...BASE_TYPES] },
        cardinality: { enum: [...CARDINALITIES] },
        mandatory: flag,
        literals: { $ref: '#/$defs/literals' },
      },
    }
    : { type: ['object', 'null'], additionalProperties: false, properties: presentation };
  return {
    type: 'object',
    patternProperties: { [TYPE_KEY.source]: { $ref: '#/$defs/type' } },
    $defs: {
      type: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: {
          ...labels,
          hidden: flag,
          groups: namedSet({ type: ['object', 'null'], additionalProperties: false, properties: { ...labels, order: { type: 'number' }, hidden: flag } }),
          properties: { type: ['object', 'null'], additionalProperties: { $ref: '#/$defs/property' } },
          customProperties: { $ref: '#/$defs/customProperties' },
        },
      },
      property: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { ...presentation, mandatory: flag, literals: { $ref: '#/$defs/literals' } },
      },
      customProperties: { type: ['object', 'null'], additionalProperties: customProperty },
      literals: namedSet(literal),
    },
  };
}

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
const validators: Record<ProfileKind, ValidateFunction> = {
  annotations: ajv.compile(schemaOf('annotations')),
  profile: ajv.compile(schemaOf('profile')),
};

/** The shape errors of a document (as plain JSON), or none. */
export function shapeErrors(kind: ProfileKind, document: unknown): ErrorObject[] {
  const validate = validators[kind];
  return validate(document) ? [] : [...(validate.errors ?? [])];
}

/** The keys a mapping at a schema path allows, for messages about unknown keys. */
export function allowedKeys(error: ErrorObject): string[] {
  const schema = error.parentSchema as { properties?: Record<string, unknown> } | undefined;
  return Object.keys(schema?.properties ?? {});
}
