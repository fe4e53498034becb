/**
 * The shape of one type's entry in an annotation or profile document, as a
 * JSON schema checked with ajv before anything looks at the metamodel. Both
 * kinds share one shape (decisions §6, §7.5); a profile only presents, so its
 * custom properties and literals cannot declare anything (no base type, no
 * literal-specific custom properties).
 *
 * The vocabulary is the original product's (decisions §7.5), so that its
 * users' files upload unchanged: every key listed here is known and its
 * value is checked; a key the service does not know, anywhere inside a
 * type's entry, is kept and ignored (and handed on by the metamodel call).
 *
 * Which top-level keys are types and which are settings depends on the
 * metamodel: see toplevel.ts.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

export type ProfileKind = 'annotations' | 'profile';

/**
 * Base types of custom properties. `ID`: text unique among the objects of the
 * declaring type in the tenant; `ENUM`: text that must be one of the
 * property's literals.
 */
export const BASE_TYPES = ['STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'BOOLEAN', 'DATE', 'DATETIME', 'REFERENCE', 'ID', 'ENUM'] as const;
export type BaseType = typeof BASE_TYPES[number];

/** A custom property without `baseType` is text. */
export const DEFAULT_BASE_TYPE: BaseType = 'STRING';

/** The base type a custom property's declaration gives, `STRING` when it names none. */
export function baseTypeOf(definition: Record<string, unknown> | null | undefined): BaseType {
  return (definition?.baseType as BaseType | undefined) ?? DEFAULT_BASE_TYPE;
}

export const CARDINALITIES = ['ONE', 'MANY'] as const;

/** A width of a field: a number of pixels, or a CSS length (`200px`, `40%`, `12em`). */
export const WIDTH = /^\d+(\.\d+)?(px|%|em|rem|ch)?$/;

const text = { type: 'string' };
const flag = { type: 'boolean' };
const number = { type: 'number' };
const scalar = { type: ['string', 'number', 'boolean'] };
/** Text or number here; semantics.ts checks that it is a width. */
const width = { type: ['number', 'string'] };
const labels = { label: text, labelEn: text, title: text, titleEn: text };
const presentation = { ...labels, order: number, group: text, hidden: flag, readOnly: flag };
/** Keys of a field (property or custom property) beyond its presentation. */
const field = { width, default: scalar, placeholder: text };

/** A set of names: a list of names, or a mapping of name to its definition (which may be empty). */
function namedSet(definition: object) {
  return { type: ['array', 'object'], items: scalar, additionalProperties: definition };
}

/**
 * Keys a profile may not use, because they declare: ajv reports each as a
 * `false schema` error, which document.ts words as "belongs into the
 * annotations".
 */
export const DECLARING_KEYS = ['baseType', 'cardinality', 'mandatory', 'literals'] as const;

function schemaOf(kind: ProfileKind): object {
  const declares = kind === 'annotations';
  const literal = {
    type: ['object', 'null'],
    properties: {
      ...labels, order: number, group: text, hidden: flag, icon: text,
      customProperties: declares ? { $ref: '#/$defs/customProperties' } : false,
    },
  };
  const customProperty = declares
    ? {
      type: ['object', 'null'],
      properties: {
        ...presentation,
        ...field,
        baseType: { enum: [...BASE_TYPES] },
        cardinality: { enum: [...CARDINALITIES] },
        mandatory: flag,
        literals: { $ref: '#/$defs/literals' },
      },
    }
    : { type: ['object', 'null'], properties: { ...presentation, ...field, ...Object.fromEntries(DECLARING_KEYS.map((k) => [k, false])) } };
  const members = (property: string) => ({
    properties: { type: ['object', 'null'], additionalProperties: { $ref: `#/$defs/${property}` } },
    customProperties: { $ref: '#/$defs/customProperties' },
  });
  const property = (literals: string) => ({
    type: ['object', 'null'],
    properties: { ...presentation, ...field, mandatory: flag, literals: { $ref: `#/$defs/${literals}` } },
  });
  return {
    $ref: '#/$defs/type',
    $defs: {
      type: {
        type: ['object', 'null'],
        properties: {
          ...labels,
          plural: text,
          pluralEn: text,
          gender: text,
          icon: text,
          extends: text,
          order: number,
          hidden: flag,
          groups: namedSet({ type: ['object', 'null'], properties: { ...labels, order: number, hidden: flag, icon: text } }),
          stereotypes: namedSet({ $ref: '#/$defs/stereotype' }),
          ...members('property'),
        },
      },
      stereotype: {
        type: ['object', 'null'],
        properties: { ...labels, icon: text, order: number, hidden: flag, ...members('stereotypeProperty') },
      },
      property: property('literals'),
      // Under a stereotype, literals only label: what applies under a literal is declared at the type.
      stereotypeProperty: property('stereotypeLiterals'),
      customProperties: { type: ['object', 'null'], additionalProperties: customProperty },
      literals: namedSet(literal),
      stereotypeLiterals: namedSet({ ...literal, properties: { ...literal.properties, customProperties: false } }),
    },
  };
}

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
const validators: Record<ProfileKind, ValidateFunction> = {
  annotations: ajv.compile(schemaOf('annotations')),
  profile: ajv.compile(schemaOf('profile')),
};

/** JSON pointer segment of a key. */
const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The shape errors of a document (as plain JSON), or none: the document must
 * be a mapping, and each of the given top-level keys (the types, known now
 * or later) an entry of the vocabulary. Instance paths start at the document.
 */
export function shapeErrors(kind: ProfileKind, document: unknown, typeKeys: string[]): ErrorObject[] {
  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    return [{ keyword: 'type', instancePath: '', schemaPath: '#/type', params: { type: 'object' }, data: document } as ErrorObject];
  }
  const validate = validators[kind];
  const errors: ErrorObject[] = [];
  for (const key of typeKeys) {
    if (validate((document as Record<string, unknown>)[key])) continue;
    for (const e of validate.errors ?? []) errors.push({ ...e, instancePath: `/${pointer(key)}${e.instancePath}` });
  }
  return errors;
}
