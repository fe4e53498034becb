/**
 * The REST paths of access rules (decisions §2):
 *
 *   GET  /rest/<db>/tenants/<tenant>/accessRules          → the ordered list ([] when none)
 *   PUT  /rest/<db>/tenants/<tenant>/accessRules          ← the whole list, replaced; a CREATE
 *        rule's `organization` must name a top-level organization of the tenant
 *   POST /rest/<db>/tenants/<tenant>/accessRules/explain  {loginId, groups?, tenantId?, familyName?, givenName?}
 *        → {rule, action, accessLevel, user, reason, matched}: what a sign-in
 *          of that identity into the tenant would get, without signing in as
 *          it; `matched` shows what of the identity met each part of the
 *          applying rule's condition (null when no rule applied).
 *
 * `<tenant>` is the tenant's label or technical key. Administrators of the
 * tenant and system administrators only (the rules name the groups that
 * open the tenant); another tenant answers 404 as its objects do.
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { Ajv } from 'ajv';
import { AccessRuleStore, accessRuleViolations, createError, decideAccess, oversized, requireLevel, schemaOf, UUID, violationsOf, wrongTypeKey, type AccessRule, type Directory, type ExternalIdentity, type Principal, type Violation } from '../../runtime/host.ts';

export interface RulesRestDeps {
  knex: Knex;
  rules: AccessRuleStore;
  directory: Directory;
  rulesEnabled: boolean;
  /** Tells the caches of assigned sign-ins that the rules changed. */
  changed(db: string): void;
}

interface Call {
  ctx: Context;
  principal: Principal;
  db: string;
}

const TEXT = { type: 'string', minLength: 1, maxLength: 1024 };
export const EXPLAIN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['loginId'],
  properties: { loginId: TEXT, groups: { type: 'array', maxItems: 1000, items: TEXT }, tenantId: TEXT, familyName: TEXT, givenName: TEXT },
} as const;
const validateExplain = new Ajv({ allErrors: true, strict: false }).compile(EXPLAIN_SCHEMA);

export async function handleAccessRules(deps: RulesRestDeps, call: Call, segments: string[]): Promise<boolean> {
  if (segments[0] !== 'tenants' || segments[2] !== 'accessRules' || segments.length > 4) return false;
  if (segments.length === 4 && segments[3] !== 'explain') return false;
  const { ctx, principal } = call;
  allow(ctx, segments.length === 4 ? ['POST'] : ['GET', 'HEAD', 'PUT']);
  if (!principal.systemAdmin) requireLevel(principal, 'ADMINISTRATOR');
  const tenant = await tenantOf(deps.knex, call, segments[1]);
  if (segments.length === 4) {
    ctx.body = await explain(deps, call, tenant, ctx.request.body);
    return true;
  }
  if (ctx.method === 'PUT') {
    const body = ctx.request.body;
    const violations = accessRuleViolations(body);
    if (!violations.length) violations.push(...await organizationViolations(deps.knex, call.db, tenant.id, body as unknown as AccessRule[]));
    if (violations.length) throw createError('INVALID_ACCESS_RULES', {}, violations);
    await deps.rules.setRules(call.db, tenant.id, body as unknown as AccessRule[], principal.loginId).catch((err) => {
      // The tenant was removed since it was read.
      throw (err as { code?: string }).code === '23503' ? createError('OBJECT_NOT_FOUND', { type: 'Tenant', key: segments[1] }) : err;
    });
    deps.changed(call.db);
  }
  ctx.body = await deps.rules.rulesOf(call.db, tenant.id);
  return true;
}

function allow(ctx: Context, methods: string[]) {
  if (!methods.includes(ctx.method)) throw createError('METHOD_NOT_ALLOWED', {}, [], { Allow: methods.join(', ') });
}

/** The tenant by label or technical key; a tenant administrator reaches its own only. */
async function tenantOf(knex: Knex, call: Call, key: string): Promise<{ id: string; label: string }> {
  const byId = UUID.test(key);
  const r = await knex.raw(
    `select id, label from "${schemaOf(call.db)}".objects where type = 'Tenant' and ${byId ? 'id = ?::uuid' : 'label = ?'}`,
    [byId ? key.toLowerCase() : key],
  );
  const tenant = r.rows[0] as { id: string; label: string } | undefined;
  if (!tenant || (!call.principal.systemAdmin && tenant.id !== call.principal.tenant)) throw createError('OBJECT_NOT_FOUND', { type: 'Tenant', key });
  return tenant;
}

function explainMessage(keyword: string, params: Record<string, unknown>): string {
  if (keyword === 'required' || keyword === 'minLength') return 'mandatory';
  if (keyword === 'type') return wrongTypeKey(params.type);
  return keyword === 'unknownProperty' ? 'unknownProperty' : 'invalidValue';
}

/** A rule's organization is for CREATE rules, and names a top-level organization of the tenant. */
async function organizationViolations(knex: Knex, db: string, tenant: string, rules: AccessRule[]): Promise<Violation[]> {
  const named = rules.flatMap((rule, index) => (rule.organization === undefined ? [] : [{ index, rule, label: rule.organization }]));
  if (!named.length) return [];
  const r = await knex.raw(
    `select label from "${schemaOf(db)}".objects where tenant = ? and type = 'Organization' and parent_id is null and list = 'organizations' and label = any(?::text[])`,
    [tenant, named.map((n) => n.label)],
  );
  const found = new Set(r.rows.map((row: { label: string }) => row.label));
  return named.flatMap(({ index, rule, label }) => {
    if (rule.action !== 'CREATE') return [{ path: `${index}.organization`, key: 'organizationOnlyForCreate' }];
    return found.has(label) ? [] : [{ path: `${index}.organization`, key: 'organizationNotFound' }];
  });
}

async function explain(deps: RulesRestDeps, call: Call, tenant: { id: string; label: string }, body: unknown) {
  const over = oversized(EXPLAIN_SCHEMA, body);
  if (over || !validateExplain(body)) {
    throw createError('INVALID_EXPLAIN_REQUEST', {}, (over ? [over] : violationsOf(validateExplain.errors)).map((v) => ({ path: v.path, key: explainMessage(v.keyword, v.params) })));
  }
  const identity = body as Pick<ExternalIdentity, 'loginId' | 'groups' | 'tenantId' | 'familyName' | 'givenName'>;
  const db = { name: call.db, defaultTenant: tenant.id };
  // The tenant is given, as service-tenant gives it at sign-in.
  const login = (await deps.directory.findLoginTenant(db, identity.loginId, tenant.label))!;
  const decision = await decideAccess(login, identity, () => deps.rules.rulesOf(call.db, tenant.id), deps.rulesEnabled);
  const denied = { rule: null, action: 'DENY', accessLevel: null, user: null, matched: null };
  switch (decision.kind) {
    case 'user':
      return { rule: null, action: null, accessLevel: login.systemAdmin ? 'ADMINISTRATOR' : decision.user.accessLevel, user: decision.user.id, reason: 'user', matched: null };
    case 'systemAdministrator':
      return { rule: null, action: null, accessLevel: 'ADMINISTRATOR', user: null, reason: 'systemAdministrator', matched: null };
    case 'rule': {
      const { rule, index, matched } = decision;
      return { rule: index, action: rule.action, accessLevel: rule.action === 'DENY' ? null : rule.accessLevel, user: null, reason: 'rule', matched };
    }
    default:
      return { ...denied, reason: decision.kind };
  }
}
