/**
 * The custom properties a tenant's annotations declare, compiled per
 * concrete type once per upload, so that checking an object is a few map
 * lookups: what the type and its supertypes declare (the nearest
 * declaration wins), and what applies only while a property has a literal
 * (a standard property such as `status`, or a custom property with
 * literals, e.g. a stereotype).
 */
import type { Metamodel } from '../../runtime/host.ts';
import type { BaseType } from './schema.ts';
import { entriesOf, literalText } from './values.ts';

type Definition = Record<string, unknown>;

export interface CustomPropertyRule {
  name: string;
  baseType: BaseType;
  many: boolean;
  mandatory: boolean;
  /** Allowed values as compared text, or null when any value of the base type is allowed. */
  literals: Set<string> | null;
  /** Custom properties that apply while this property has a literal (compared text). */
  dependents: Map<string, CustomPropertyRule[]>;
}

export interface TypeRules {
  /** Declared for the type and its supertypes, whatever the object's values. */
  always: Map<string, CustomPropertyRule>;
  /** Declared under literals of standard properties: property → literal → custom properties. */
  byProperty: Map<string, Map<string, CustomPropertyRule[]>>;
}

const EMPTY: TypeRules = { always: new Map(), byProperty: new Map() };

export class CompiledAnnotations {
  private readonly byType = new Map<string, TypeRules>();

  /** `document`: the parsed annotation document as stored; types the metamodel no longer has are passed over. */
  constructor(private readonly document: Definition, private readonly model: Metamodel) {}

  static readonly none = new CompiledAnnotations({}, { types: {}, plurals: {}, rootLists: {}, enumerations: {} });

  rulesOf(typeName: string): TypeRules {
    let rules = this.byType.get(typeName);
    if (!rules) {
      rules = this.compile(typeName);
      this.byType.set(typeName, rules);
    }
    return rules;
  }

  private compile(typeName: string): TypeRules {
    const type = this.model.types[typeName];
    if (!type) return EMPTY;
    const rules: TypeRules = { always: new Map(), byProperty: new Map() };
    // Farthest supertype first, so that a subtype's declaration replaces its supertype's.
    for (const name of [...type.supertypes].reverse().concat(type.name)) {
      const definition = this.document[name] as Definition | null | undefined;
      if (!definition) continue;
      for (const rule of customRules(definition.customProperties)) rules.always.set(rule.name, rule);
      for (const p of entriesOf(definition.properties)) {
        for (const l of entriesOf(p.definition?.literals)) {
          const dependents = customRules(l.definition?.customProperties);
          if (!dependents.length) continue;
          const byLiteral = rules.byProperty.get(p.name) ?? new Map<string, CustomPropertyRule[]>();
          byLiteral.set(l.name, [...(byLiteral.get(l.name) ?? []), ...dependents]);
          rules.byProperty.set(p.name, byLiteral);
        }
      }
    }
    return rules;
  }
}

function customRules(set: unknown): CustomPropertyRule[] {
  return entriesOf(set).flatMap(({ name, definition }) => (definition ? [customRule(name, definition)] : []));
}

function customRule(name: string, definition: Definition): CustomPropertyRule {
  const baseType = definition.baseType as BaseType;
  const literals = definition.literals === undefined ? null : entriesOf(definition.literals);
  const dependents = new Map<string, CustomPropertyRule[]>();
  for (const l of literals ?? []) {
    const nested = customRules(l.definition?.customProperties);
    const text = literalText(baseType, l.name);
    if (nested.length && text !== null) dependents.set(text, nested);
  }
  return {
    name,
    baseType,
    many: definition.cardinality === 'MANY',
    mandatory: definition.mandatory === true,
    literals: literals && new Set(literals.map((l) => literalText(baseType, l.name)).filter((t): t is string => t !== null)),
    dependents,
  };
}
