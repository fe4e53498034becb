/**
 * What a tenant's `profile` says about statuses (decisions §7.2; README.md
 * beside this file, "Statuses"): the check of an upload's `statuses`, and
 * the compiled form a write is checked against. Pure, so that the thread
 * that reads uploads (reader-worker.mjs) can load it.
 */
import type { Metamodel, Violation } from '../../runtime/host.ts';
import type { Locator } from './document.ts';
import type { ProfileKind } from './schema.ts';

export const STATUSES_KEY = 'statuses';
/** Letters, digits and `_`, starting with a letter; as the OpenAPI document's status pattern. */
export const STATUS_NAME = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;
/** From the least to the most: a level may make every transition a lower one may. */
export const ACCESS_LEVELS = ['READ_ONLY', 'EDITOR', 'ADMINISTRATOR'];
const LABEL_KEYS = ['label', 'labelEn', 'title', 'titleEn'];

type Definition = Record<string, unknown>;
type Path = (string | number)[];

const isMapping = (v: unknown): v is Definition => !!v && typeof v === 'object' && !Array.isArray(v);

export const standardStatuses = (model: Metamodel): string[] => model.enumerations.Status ?? [];

/** The names the document declares under `statuses` (well-formed or not). */
export function declaredNames(document: Definition): string[] {
  const statuses = document[STATUSES_KEY];
  return isMapping(statuses) ? Object.keys(statuses) : [];
}

/** Problems of the `statuses` of an uploaded document, each at its line and column. */
export function checkStatuses(kind: ProfileKind, document: Definition, model: Metamodel, at: Locator): Violation[] {
  if (!Object.hasOwn(document, STATUSES_KEY)) return [];
  const violations: Violation[] = [];
  const report = (path: Path, key: string, params: Record<string, unknown> = {}, where: 'key' | 'value' = 'key') =>
    violations.push({ path: path.join('.'), key, params: { ...at(path, where), ...params } });
  if (kind !== 'profile') {
    report([STATUSES_KEY], 'profileStatusesInAnnotations');
    return violations;
  }
  const statuses = document[STATUSES_KEY];
  if (statuses === null) return violations;
  if (!isMapping(statuses)) {
    report([STATUSES_KEY], 'profileShapeMapping', {}, 'value');
    return violations;
  }
  const standard = standardStatuses(model);
  const allowed = [...standard, ...Object.keys(statuses).filter((n) => !standard.includes(n) && STATUS_NAME.test(n)).sort()];
  for (const [name, definition] of Object.entries(statuses)) {
    const path = [STATUSES_KEY, name];
    if (!STATUS_NAME.test(name)) {
      report(path, 'profileStatusName', { value: name });
      continue;
    }
    if (definition === null) continue;
    if (!isMapping(definition)) {
      report(path, 'profileShapeMappingOrNothing', {}, 'value');
      continue;
    }
    for (const key of LABEL_KEYS) {
      if (definition[key] === undefined) continue;
      if (typeof definition[key] !== 'string') report([...path, key], 'profileShapeText', {}, 'value');
      else if (standard.includes(name)) report([...path, key], 'profileStatusStandardLabel', { value: name });
    }
    const transitions = definition.transitions;
    if (transitions === undefined || transitions === null) continue;
    if (!isMapping(transitions)) {
      report([...path, 'transitions'], 'profileShapeMapping', {}, 'value');
      continue;
    }
    for (const [level, targets] of Object.entries(transitions)) {
      const at = [...path, 'transitions', level];
      if (!ACCESS_LEVELS.includes(level)) {
        report(at, 'profileAccessLevelUnknown', { value: level, allowed: ACCESS_LEVELS.join(', ') });
        continue;
      }
      if (targets === null) continue;
      if (!Array.isArray(targets)) {
        report(at, 'profileShapeSequence', {}, 'value');
        continue;
      }
      targets.forEach((target, index) => {
        if (typeof target !== 'string') report([...at, index], 'profileShapeText', {}, 'value');
        else if (!allowed.includes(target)) report([...at, index], 'profileStatusUnknown', { value: target, allowed: allowed.join(', ') }, 'value');
      });
    }
  }
  return violations;
}

export interface StatusLabels {
  label?: string;
  labelEn?: string;
}

const textOf = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** What a tenant's profile says about statuses, compiled once per upload. */
export class TenantStatuses {
  /** Declared beyond the standard ones, by name. */
  readonly declared = new Map<string, StatusLabels>();
  /** From a status: by access level, the statuses an object may move to. */
  private readonly transitions = new Map<string, Map<string, Set<string>>>();
  readonly allowed: string[];
  private readonly allowedSet: Set<string>;

  /** `document`: the parsed profile as stored (checked when it was uploaded). */
  constructor(document: Definition, model: Metamodel) {
    const standard = standardStatuses(model);
    const statuses = document[STATUSES_KEY];
    // By name: the stored document (jsonb) does not keep the file's order, and every instance must say the same.
    const entries = isMapping(statuses) ? Object.entries(statuses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
    for (const [name, definition] of entries) {
      const d = isMapping(definition) ? definition : {};
      if (!standard.includes(name)) this.declared.set(name, { label: textOf(d.label), labelEn: textOf(d.labelEn) });
      if (!isMapping(d.transitions)) continue;
      const byLevel = new Map<string, Set<string>>();
      for (const [level, targets] of Object.entries(d.transitions)) {
        byLevel.set(level, new Set(Array.isArray(targets) ? targets.filter((t): t is string => typeof t === 'string') : []));
      }
      this.transitions.set(name, byLevel);
    }
    this.allowed = [...standard, ...this.declared.keys()];
    this.allowedSet = new Set(this.allowed);
  }

  static none(model: Metamodel): TenantStatuses {
    return new TenantStatuses({}, model);
  }

  /** The statuses `level` may move an object to from `from`, or null when the profile restricts nothing there. */
  targets(from: string, level: string): Set<string> | null {
    const byLevel = this.transitions.get(from);
    if (!byLevel) return null;
    const rank = ACCESS_LEVELS.indexOf(level);
    const targets = new Set<string>();
    for (const [declaredLevel, to] of byLevel) if (ACCESS_LEVELS.indexOf(declaredLevel) <= rank) for (const t of to) targets.add(t);
    return targets;
  }

  check(status: string, previous: string | null, accessLevel: string): Violation[] {
    if (!this.allowedSet.has(status)) return [{ path: 'status', key: 'notAllowedValue', params: { allowed: this.allowed.join(', ') } }];
    if (previous === null || previous === status) return [];
    const targets = this.targets(previous, accessLevel);
    if (!targets || targets.has(status)) return [];
    return [{ path: 'status', key: 'statusTransitionRefused', params: { from: previous, to: status, accessLevel, allowed: [...targets].join(', ') || '–' } }];
  }
}

