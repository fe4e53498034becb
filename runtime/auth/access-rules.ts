/**
 * Access rules (specification, "Access rules"): what happens to an
 * externally authenticated caller who matches no user in the login tenant.
 * Each tenant keeps an ordered list; the first rule whose condition holds
 * decides (GRANT, DENY or CREATE a user); none holding means denied.
 *
 * Conditions (the specification leaves their syntax open):
 * - `null` or absent: always holds;
 * - `{"groups": [...]}`: the identity is in ANY of the groups;
 * - `{"tenantId": "..."}`: the identity's tenant ID equals it;
 * - `{"familyName": ...}`, `{"givenName": ...}`: the identity's name equals
 *   the text, or matches `{"pattern": "M*ller"}` (name-patterns.ts);
 * - several keys: all must hold.
 * Comparisons are exact (case-sensitive), as group and tenant IDs of
 * identity providers are opaque identifiers.
 *
 * The rules are kept in `access_rules` (created by plugins/access), one row
 * per tenant; this module reads them because the core assigns identities.
 */
import { Ajv } from 'ajv';
import type { Knex } from 'knex';
import { booleanSetting } from '../config.ts';
import type { Violation } from '../errors.ts';
import { schemaOf } from '../storage/migrations.ts';
import { oversized, violationsOf, wrongTypeKey } from '../validation.ts';
import { NAME_MATCH_SCHEMA, nameMatches, type NameMatch } from './name-patterns.ts';
import type { AccessLevel, DatabaseInfo, ExternalIdentity, LoginTenant, UserRecord } from './types.ts';

export type AccessAction = 'GRANT' | 'DENY' | 'CREATE';

export interface AccessRuleCondition {
  groups?: string[];
  tenantId?: string;
  familyName?: NameMatch;
  givenName?: NameMatch;
}

/** What a rule's condition judges of an identity. */
export type RuleIdentity = Pick<ExternalIdentity, 'groups' | 'tenantId' | 'familyName' | 'givenName'>;

export interface AccessRule {
  condition?: AccessRuleCondition | null;
  action: AccessAction;
  accessLevel?: AccessLevel;
  /** CREATE only: the label of the tenant's top-level organization the created person belongs to. */
  organization?: string;
}

export const MAX_RULES = 1000;
const ID_TEXT = { type: 'string', minLength: 1, maxLength: 1024 };

/** The body of `PUT …/accessRules`: accessLevel is required where the action gives access. */
export const ACCESS_RULES_SCHEMA = {
  type: 'array',
  maxItems: MAX_RULES,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['action'],
    properties: {
      condition: {
        anyOf: [
          { type: 'null' },
          {
            type: 'object',
            additionalProperties: false,
            minProperties: 1,
            properties: {
              groups: { type: 'array', minItems: 1, maxItems: 1000, items: ID_TEXT },
              tenantId: ID_TEXT,
              familyName: NAME_MATCH_SCHEMA,
              givenName: NAME_MATCH_SCHEMA,
            },
          },
        ],
      },
      action: { enum: ['GRANT', 'DENY', 'CREATE'] },
      accessLevel: { enum: ['READ_ONLY', 'EDITOR', 'ADMINISTRATOR'] },
      organization: { type: 'string', minLength: 1, maxLength: 1000 },
    },
    if: { properties: { action: { enum: ['GRANT', 'CREATE'] } } },
    then: { required: ['accessLevel'] },
  },
} as const;

const validateRules = new Ajv({ allErrors: true, strict: false }).compile(ACCESS_RULES_SCHEMA);

/** One violation per offending place, in the error payload's terms; none when the rules are valid. */
export function accessRuleViolations(rules: unknown): Violation[] {
  const over = oversized(ACCESS_RULES_SCHEMA, rules);
  if (!over && validateRules(rules)) return [];
  const keys: Record<string, (p: Record<string, unknown>) => Pick<Violation, 'key' | 'params'>> = {
    required: () => ({ key: 'mandatory' }),
    unknownProperty: () => ({ key: 'unknownProperty' }),
    type: (p) => ({ key: wrongTypeKey(p.type) }),
    enum: (p) => ({ key: 'notAllowedValue', params: { allowed: (p.allowedValues as string[]).join(', ') } }),
    maxLength: (p) => ({ key: 'tooLong', params: { limit: p.limit } }),
    maxItems: (p) => ({ key: 'tooManyItems', params: { limit: p.limit } }),
    minLength: () => ({ key: 'mandatory' }),
    minItems: () => ({ key: 'mandatory' }),
    minProperties: () => ({ key: 'mandatory' }),
  };
  // `if`/`then` and `anyOf` only restate a more precise error at the same place.
  const errors = (validateRules.errors ?? []).filter((e) => e.keyword !== 'if');
  return (over ? [over] : violationsOf(errors)).map((v) => ({ path: v.path, ...(keys[v.keyword] ?? (() => ({ key: 'invalidValue' })))(v.params) }));
}

/**
 * What of the identity satisfied each part of the condition (for groups,
 * the groups it shares with the rule); null when a part does not hold. An
 * absent condition holds with nothing to show.
 */
export function conditionMatch(condition: AccessRuleCondition | null | undefined, identity: RuleIdentity): Record<string, unknown> | null {
  const matched: Record<string, unknown> = {};
  if (!condition) return matched;
  if (condition.groups !== undefined) {
    const groups = new Set(identity.groups ?? []);
    matched.groups = condition.groups.filter((g) => groups.has(g));
    if (!(matched.groups as string[]).length) return null;
  }
  if (condition.tenantId !== undefined) {
    if (condition.tenantId !== identity.tenantId) return null;
    matched.tenantId = identity.tenantId;
  }
  for (const name of ['familyName', 'givenName'] as const) {
    if (condition[name] === undefined) continue;
    if (!nameMatches(condition[name], identity[name])) return null;
    matched[name] = identity[name];
  }
  return matched;
}

/** Whether a rule's condition holds for the identity. */
export function conditionHolds(condition: AccessRuleCondition | null | undefined, identity: RuleIdentity): boolean {
  return conditionMatch(condition, identity) !== null;
}

/** The first rule whose condition holds, its position, and what of the identity matched; null when none does. */
export function matchingRule(rules: AccessRule[], identity: RuleIdentity): { index: number; rule: AccessRule; matched: Record<string, unknown> } | null {
  for (const [index, rule] of rules.entries()) {
    const matched = conditionMatch(rule.condition, identity);
    if (matched) return { index, rule, matched };
  }
  return null;
}

/**
 * `SERVICE_ACCESS_RULES` (default true); its deprecated alias
 * `SERVICE_GUEST_USERS` counts only when the newer name is not set.
 */
export function accessRulesEnabled(env: Record<string, string | undefined>): boolean {
  if (env.SERVICE_ACCESS_RULES !== undefined && env.SERVICE_ACCESS_RULES.trim() !== '') return booleanSetting(env, 'SERVICE_ACCESS_RULES', true);
  return booleanSetting(env, 'SERVICE_GUEST_USERS', true);
}

/** The tenants' rule lists in their table. */
export class AccessRuleStore {
  constructor(private readonly knex: Knex | Knex.Transaction) {}

  /** The tenant's rules; none when the table is missing (plugins/access not loaded): nobody is let in by a rule. */
  async rulesOf(db: string, tenant: string): Promise<AccessRule[]> {
    try {
      const r = await this.knex.raw(`select rules from "${schemaOf(db)}".access_rules where tenant = ?`, [tenant]);
      return (r.rows[0]?.rules as AccessRule[] | undefined) ?? [];
    } catch (err) {
      if ((err as { code?: string }).code === '42P01') return [];
      throw err;
    }
  }

  /** Replaces the tenant's rules (validated by the caller). */
  async setRules(db: string, tenant: string, rules: AccessRule[], actor: string): Promise<void> {
    await this.knex.raw(
      `insert into "${schemaOf(db)}".access_rules (tenant, rules, modified_by, date_modified) values (?, ?::jsonb, ?, now())
       on conflict (tenant) do update set rules = excluded.rules, modified_by = excluded.modified_by, date_modified = excluded.date_modified`,
      [tenant, JSON.stringify(rules), actor],
    );
  }
}

/** How a verified login ID gets (or does not get) access to its login tenant. */
export type AccessDecision =
  | { kind: 'user'; user: UserRecord }
  | { kind: 'systemAdministrator' }
  /** Two users with the login ID in the tenant: neither may be guessed, and no rule may add a third. */
  | { kind: 'ambiguous' }
  | { kind: 'accessRulesDisabled' }
  | { kind: 'rule'; index: number; rule: AccessRule; matched: Record<string, unknown> }
  | { kind: 'noRuleApplies' };

/**
 * The specification's "access to a tenant": the login ID's user there; a
 * system administrator everywhere; otherwise the tenant's access rules, when
 * they are on. One function for sign-ins and for the administrators'
 * explain call, so that the two cannot disagree.
 */
export async function decideAccess(login: LoginTenant, identity: RuleIdentity, rulesOf: () => Promise<AccessRule[]>, rulesEnabled: boolean): Promise<AccessDecision> {
  if (login.user) return { kind: 'user', user: login.user };
  if (login.systemAdmin) return { kind: 'systemAdministrator' };
  if (login.ambiguous) return { kind: 'ambiguous' };
  if (!rulesEnabled) return { kind: 'accessRulesDisabled' };
  const match = matchingRule(await rulesOf(), identity);
  return match ? { kind: 'rule', ...match } : { kind: 'noRuleApplies' };
}
