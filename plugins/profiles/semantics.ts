/**
 * Checks a well-shaped profile document against the metamodel: every type,
 * property and group it names exists, literals are values of their property
 * or base type, and no custom property is declared twice where both could
 * apply. Typos must not pass silently (decisions §6), so each is a problem
 * with its line and column.
 */
import type { Metamodel, PropertyDef, TypeDef, Violation } from '../../runtime/host.ts';
import type { Locator } from './document.ts';
import { TYPE_KEY, type BaseType, type ProfileKind } from './schema.ts';
import { entriesOf, LITERAL_BASE_TYPES, literalText } from './values.ts';

type Path = (string | number)[];
type Definition = Record<string, unknown>;

/** Names of custom properties: letters (any language), digits and `_`, starting with a letter. */
export const CUSTOM_PROPERTY_NAME = /^\p{L}[\p{L}\p{N}_]*$/u;

/** Literals of standard properties: which data types can have them, and which literals each allows. */
function propertyLiteral(property: PropertyDef, literal: string): 'ok' | 'notInEnumeration' | 'invalid' {
  switch (property.dataType) {
    case 'ENUMERATION':
      return property.values?.includes(literal) ? 'ok' : 'notInEnumeration';
    case 'BOOLEAN':
      return literal === 'true' || literal === 'false' ? 'ok' : 'invalid';
    case 'INTEGER':
    case 'DECIMAL':
      return literalText(property.dataType, literal) === null ? 'invalid' : 'ok';
    default:
      return 'ok';
  }
}

const PROPERTY_LITERAL_TYPES = new Set(['ENUMERATION', 'BOOLEAN', 'INTEGER', 'DECIMAL', 'STRING', 'TEXT']);

class Checker {
  readonly violations: Violation[] = [];

  constructor(private readonly kind: ProfileKind, private readonly document: Definition, private readonly model: Metamodel, private readonly at: Locator) {}

  private report(path: Path, key: string, params: Record<string, unknown>, where: 'key' | 'value' = 'key') {
    this.violations.push({ path: path.join('.'), key, params: { ...this.at(path, where), ...params } });
  }

  run() {
    const lowerCaseTypes = new Map(Object.keys(this.model.types).map((t) => [t.toLowerCase(), t]));
    for (const [key, definition] of Object.entries(this.document)) {
      if (!TYPE_KEY.test(key)) {
        // A setting that is a type name in the wrong case is a typo, not a theme.
        const meant = lowerCaseTypes.get(key.toLowerCase());
        if (meant) this.report([key], 'profileTypeCase', { value: key, suggestion: meant });
        continue;
      }
      const type = this.model.types[key];
      if (!type) {
        this.report([key], 'profileUnknownType', { value: key });
        continue;
      }
      this.checkType(type, (definition as Definition | null) ?? {});
    }
  }

  /** Groups a type's properties may name: its own and those of its supertypes' annotations. */
  private groupsOf(type: TypeDef): Set<string> {
    const groups = new Set<string>();
    for (const name of [type.name, ...type.supertypes]) {
      for (const g of entriesOf((this.document[name] as Definition | null)?.groups)) groups.add(g.name);
    }
    return groups;
  }

  /** Custom properties the type has from its supertypes' annotations, always (not by literal). */
  private inherited(type: TypeDef): Set<string> {
    const names = new Set<string>();
    for (const name of type.supertypes) {
      for (const c of entriesOf((this.document[name] as Definition | null)?.customProperties)) names.add(c.name);
    }
    return names;
  }

  private checkType(type: TypeDef, definition: Definition) {
    const groups = this.groupsOf(type);
    const base: Path = [type.name];
    for (const p of entriesOf(definition.properties)) {
      const path = [...base, 'properties', p.segment];
      const property = type.properties.find((d) => d.name === p.name);
      const list = type.lists.find((l) => l.name === p.name);
      if (!property && !list) {
        this.report(path, 'profileUnknownProperty', { type: type.name, value: p.name });
        continue;
      }
      this.checkGroup(type, groups, p.definition, path);
      if (p.definition?.literals !== undefined) this.checkPropertyLiterals(type, groups, property, p.definition.literals, path);
    }
    const declared = new Map<string, Path>();
    const always = new Set([...this.inherited(type), ...entriesOf(definition.customProperties).map((c) => c.name)]);
    this.checkCustomProperties(type, groups, definition.customProperties, [...base, 'customProperties'], declared, always, false);
    // Literal-specific custom properties of standard properties, after the type's own are known.
    for (const p of entriesOf(definition.properties)) {
      for (const l of entriesOf(p.definition?.literals)) {
        const path = [...base, 'properties', p.segment, 'literals', l.segment, 'customProperties'];
        this.checkCustomProperties(type, groups, l.definition?.customProperties, path, declared, always, true);
      }
    }
  }

  private checkGroup(type: TypeDef, groups: Set<string>, definition: Definition | null, path: Path) {
    const group = definition?.group;
    if (typeof group === 'string' && !groups.has(group)) this.report([...path, 'group'], 'profileUnknownGroup', { type: type.name, value: group }, 'value');
  }

  private checkPropertyLiterals(type: TypeDef, groups: Set<string>, property: PropertyDef | undefined, literals: unknown, path: Path) {
    if (!property || !PROPERTY_LITERAL_TYPES.has(property.dataType)) {
      this.report([...path, 'literals'], 'profileLiteralsNotPossible', { dataType: property?.dataType ?? 'LIST' });
      return;
    }
    for (const l of entriesOf(literals)) {
      const verdict = propertyLiteral(property, l.name);
      const at = [...path, 'literals', l.segment];
      if (verdict === 'notInEnumeration') {
        this.report(at, 'profileLiteralNotInEnumeration', { value: l.name, property: property.name, allowed: (property.values ?? []).join(', ') });
      } else if (verdict === 'invalid') {
        this.report(at, 'profileInvalidLiteral', { value: l.name, baseType: property.dataType });
      }
    }
  }

  /**
   * `declared`: every custom property of this type annotation met so far,
   * with its path; `always`: the names the type has without a literal. A
   * literal-specific custom property may not repeat either: which of the two
   * would apply could not be told. Alternatives under different literals may
   * share a name.
   */
  private checkCustomProperties(type: TypeDef, groups: Set<string>, set: unknown, path: Path, declared: Map<string, Path>, always: Set<string>, underLiteral: boolean) {
    for (const c of entriesOf(set)) {
      const at = [...path, c.segment];
      if (!CUSTOM_PROPERTY_NAME.test(c.name)) this.report(at, 'profileInvalidName', { value: c.name });
      const earlier = declared.get(c.name);
      if (underLiteral && (always.has(c.name) || (earlier && !isAlternative(earlier, at)))) {
        const other = earlier ?? at;
        this.report(at, 'profileDeclaredTwice', { value: c.name, type: type.name, otherLine: this.at(other, 'key').line });
      }
      if (!earlier) declared.set(c.name, at);
      this.checkGroup(type, groups, c.definition, at);
      if (this.kind !== 'annotations' || !c.definition) continue;
      const baseType = c.definition.baseType as BaseType;
      if (c.definition.literals === undefined) continue;
      if (!LITERAL_BASE_TYPES.has(baseType)) {
        this.report([...at, 'literals'], 'profileLiteralsNotPossible', { dataType: baseType });
        continue;
      }
      for (const l of entriesOf(c.definition.literals)) {
        const literalPath = [...at, 'literals', l.segment];
        if (literalText(baseType, l.name) === null) this.report(literalPath, 'profileInvalidLiteral', { value: l.name, baseType });
        this.checkCustomProperties(type, groups, l.definition?.customProperties, [...literalPath, 'customProperties'], declared, always, true);
      }
    }
  }
}

/** Two declarations under different literals of the same property are alternatives. */
function isAlternative(a: Path, b: Path): boolean {
  const la = a.lastIndexOf('literals');
  const lb = b.lastIndexOf('literals');
  if (la < 0 || lb < 0 || la !== lb) return false;
  return a.slice(0, la).join('\u0000') === b.slice(0, lb).join('\u0000') && a[la + 1] !== b[lb + 1];
}

export function checkAgainstMetamodel(kind: ProfileKind, document: Definition, model: Metamodel, at: Locator): Violation[] {
  const checker = new Checker(kind, document, model, at);
  checker.run();
  return checker.violations;
}
