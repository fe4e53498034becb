/**
 * Emits `limits.gen.ts`: for every type, the limits the validators enforce
 * on each of its properties as written (lengths, ranges, patterns, least
 * number of items), taken from the property kinds (generator/property-kinds.ts)
 * like the validators and the OpenAPI document. The runtime cannot import
 * the generator; the metamodel call (plugins/profiles) hands these to the
 * user interface, so that a form knows a label's longest length without a
 * second copy of the rule.
 */
import { type Emitter, header, stableJson } from '../emitter.ts';
import type { Metamodel } from '../../runtime/metamodel/model.ts';
import { writePropertySchema, type JsonSchema } from '../property-kinds.ts';

/** Keywords of a value's schema that limit it; its type and enumeration are said elsewhere. */
const LIMITS = ['minLength', 'maxLength', 'minimum', 'maximum', 'pattern', 'format', 'minItems', 'maxItems'];

const pick = (schema: JsonSchema) => Object.fromEntries(LIMITS.filter((k) => schema[k] !== undefined).map((k) => [k, schema[k]]));

/** The limits of a write schema: the non-null branch, with an array's item limits beside its own. */
export function limitsOf(schema: JsonSchema): JsonSchema {
  const value = (schema.anyOf as JsonSchema[] | undefined)?.find((s) => s.type !== 'null') ?? schema;
  return value.type === 'array' ? { ...pick(value.items as JsonSchema), ...pick(value) } : pick(value);
}

export const limitsEmitter: Emitter = {
  name: 'limits',
  emit(model: Metamodel) {
    const limits = Object.fromEntries(Object.values(model.types).map((t) => [
      t.name,
      Object.fromEntries(t.properties.map((p) => [p.name, limitsOf(writePropertySchema(t, p))])),
    ]));
    const content = [
      header('limits'),
      '',
      '/** Type → property → the limits its value has when written (JSON Schema keywords). */',
      `export const propertyLimits: Record<string, Record<string, Record<string, unknown>>> = ${stableJson(limits)};`,
      '',
    ].join('\n');
    return [{ path: 'limits.gen.ts', content }];
  },
};
