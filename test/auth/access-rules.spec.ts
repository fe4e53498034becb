import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { conditionHolds, matchingRule, type AccessRule } from '../../runtime/auth/access-rules.ts';
import type { ExternalIdentity } from '../../runtime/auth/types.ts';
import { createTenant, createUser, inTenant, secret, type Credentials } from './fixtures.ts';
import { as, testIdentityPlugin } from './test-identity.ts';

describe('access rules', () => {
  let t: TestService;
  let db: string;
  const tenantIds: Record<string, string> = {};
  const people: Record<string, Credentials> = {};

  const rulesPath = (tenant: string) => `/rest/${db}/tenants/${encodeURIComponent(tenant)}/accessRules`;
  async function putRules(tenant: string, rules: unknown, auth: Credentials = ADMIN) {
    const r = await t.request(rulesPath(tenant), { method: 'PUT', json: rules, auth });
    expect(r.status, await r.clone().text()).to.equal(200);
    return r.json();
  }
  async function usersNamed(loginId: string, tenant?: string): Promise<Record<string, unknown>[]> {
    const r = await t.request(`/rest/${db}/users?loginId=${encodeURIComponent(loginId)}`, { headers: inTenant(tenant) });
    return (await r.json())._embedded.users;
  }
  const schemes = (identity: ExternalIdentity, headers: Record<string, string> = {}) => t.request(`/rest/${db}/schemes`, as(identity, headers));
  const createScheme = (identity: ExternalIdentity, label = `S ${randomUUID()}`) => t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label }, ...as(identity) });

  before(async () => {
    t = await startService({}, { plugins: [testIdentityPlugin] });
    db = await createDatabase(t);
    for (const label of ['Second', 'Third']) tenantIds[label] = (await createTenant(t, db, label)).id as string;
    tenantIds.Default = (await t.service.databases.get(db))!.defaultTenant;
    for (const [loginId, accessLevel, tenant] of [['boss', 'ADMINISTRATOR', 'Default'], ['editor', 'EDITOR', 'Default'], ['reader', 'READ_ONLY', 'Default'], ['second-boss', 'ADMINISTRATOR', 'Second']] as const) {
      people[loginId] = { loginId, password: secret(`${loginId}-Regel-Passwort-1`) };
      await createUser(t, db, { ...people[loginId], accessLevel, tenant });
    }
  });
  after(async () => t?.close());

  describe('evaluation (unit)', () => {
    const rules: AccessRule[] = [
      { condition: { groups: ['g1', 'g2'] }, action: 'GRANT', accessLevel: 'READ_ONLY' },
      { condition: { tenantId: 'T-9' }, action: 'DENY' },
      { condition: { groups: ['g3'], tenantId: 'T-1' }, action: 'CREATE', accessLevel: 'ADMINISTRATOR' },
      { condition: null, action: 'CREATE', accessLevel: 'EDITOR' },
    ];
    it('takes the first rule whose condition holds, top to bottom', () => {
      expect(matchingRule(rules, { groups: ['g2'], tenantId: 'T-9' })?.index).to.equal(0);
      expect(matchingRule(rules, { groups: ['x'], tenantId: 'T-9' })?.index).to.equal(1);
      expect(matchingRule(rules, { groups: ['g3'], tenantId: 'T-1' })?.index).to.equal(2);
      expect(matchingRule(rules, { groups: ['g3'] })?.index).to.equal(3);
      expect(matchingRule(rules.slice(0, 3), {})).to.equal(null);
    });
    it('reads groups as any-of, compares exactly, and needs every part of a condition', () => {
      expect(conditionHolds({ groups: ['a', 'b'] }, { groups: ['c', 'b'] })).to.equal(true);
      expect(conditionHolds({ groups: ['a'] }, { groups: ['A'] })).to.equal(false);
      expect(conditionHolds({ groups: ['a'] }, {})).to.equal(false);
      expect(conditionHolds({ tenantId: 't' }, { tenantId: 'T' })).to.equal(false);
      expect(conditionHolds({ groups: ['a'], tenantId: 't' }, { groups: ['a'], tenantId: 'u' })).to.equal(false);
      expect(conditionHolds(null, {})).to.equal(true);
      expect(conditionHolds(undefined, {})).to.equal(true);
    });
    it('compares family and given names exactly, or by a pattern of * and ?, and needs every part', () => {
      expect(conditionHolds({ familyName: 'Müller' }, { familyName: 'Müller' })).to.equal(true);
      expect(conditionHolds({ familyName: 'Müller' }, { familyName: 'müller' })).to.equal(false);
      // The same name whether its umlaut is one character or a letter and a combining mark.
      expect(conditionHolds({ familyName: 'Mu\u0308ller' }, { familyName: 'Müller' })).to.equal(true);
      expect(conditionHolds({ familyName: { pattern: 'M*ller' } }, { familyName: 'Müller' })).to.equal(true);
      expect(conditionHolds({ familyName: { pattern: 'M?ller' } }, { familyName: 'Mueller' })).to.equal(false);
      expect(conditionHolds({ givenName: { pattern: '*' } }, {})).to.equal(false);
      expect(conditionHolds({ givenName: 'Jo', familyName: { pattern: 'S*' } }, { givenName: 'Jo', familyName: 'Doe' })).to.equal(false);
      expect(conditionHolds({ givenName: 'Jo', familyName: { pattern: 'S*' }, groups: ['g'] }, { givenName: 'Jo', familyName: 'Smith', groups: ['g'] })).to.equal(true);
      expect(matchingRule([{ condition: { groups: ['a', 'b', 'c'], givenName: { pattern: 'J*' } }, action: 'DENY' }], { groups: ['c', 'a'], givenName: 'Jo' })?.matched)
        .to.deep.equal({ groups: ['a', 'c'], givenName: 'Jo' });
    });
  });

  describe('the rules of a tenant over REST', () => {
    it('answers [] for a tenant without rules, and keeps an ordered list by label or technical key', async () => {
      expect(await (await t.request(rulesPath('Third'))).json()).to.deep.equal([]);
      const rules = [
        { condition: { groups: ['g1'] }, action: 'GRANT', accessLevel: 'READ_ONLY' },
        { condition: null, action: 'DENY' },
        { action: 'CREATE', accessLevel: 'EDITOR' },
      ];
      expect(await putRules('Third', rules)).to.deep.equal(rules);
      expect(await (await t.request(rulesPath(tenantIds.Third))).json()).to.deep.equal(rules);
      expect(await putRules(tenantIds.Third, [])).to.deep.equal([]);
      expect(await (await t.request(rulesPath('Third'))).json()).to.deep.equal([]);
    });

    const invalid: [string, unknown, { path: string; message: string }[]][] = [
      ['a body that is not a list', { action: 'GRANT' }, [{ path: '', message: 'The value must be a list (a JSON array).' }]],
      ['an unknown action', [{ action: 'ALLOW', accessLevel: 'EDITOR' }], [{ path: '0.action', message: 'The value is not allowed; allowed: GRANT, DENY, CREATE.' }]],
      ['GRANT without an access level', [{ action: 'DENY' }, { action: 'GRANT' }], [{ path: '1.accessLevel', message: 'The property is mandatory.' }]],
      ['CREATE without an access level', [{ condition: null, action: 'CREATE' }], [{ path: '0.accessLevel', message: 'The property is mandatory.' }]],
      ['an unknown access level', [{ action: 'GRANT', accessLevel: 'OWNER' }], [{ path: '0.accessLevel', message: 'The value is not allowed; allowed: READ_ONLY, EDITOR, ADMINISTRATOR.' }]],
      ['a rule without an action', [{ accessLevel: 'EDITOR' }], [{ path: '0.action', message: 'The property is mandatory.' }]],
      ['an unknown condition', [{ condition: { role: 'x' }, action: 'DENY' }], [{ path: '0.condition.role', message: 'The property is unknown.' }]],
      ['an empty condition', [{ condition: {}, action: 'DENY' }], [{ path: '0.condition', message: 'The property is mandatory.' }]],
      ['a condition that is text', [{ condition: 'g1', action: 'DENY' }], [{ path: '0.condition', message: 'The value must be a JSON object.' }]],
      ['groups that are not a list', [{ condition: { groups: 'g1' }, action: 'DENY' }], [{ path: '0.condition.groups', message: 'The value must be a list (a JSON array).' }]],
      ['an empty list of groups', [{ condition: { groups: [] }, action: 'DENY' }], [{ path: '0.condition.groups', message: 'The property is mandatory.' }]],
      ['a group that is not text', [{ condition: { groups: ['g', 7] }, action: 'DENY' }], [{ path: '0.condition.groups.1', message: 'The value must be text.' }]],
      ['a tenant ID that is a number', [{ condition: { tenantId: 7 }, action: 'DENY' }], [{ path: '0.condition.tenantId', message: 'The value must be text.' }]],
      ['an unknown property of a rule', [{ action: 'DENY', priority: 1 }], [{ path: '0.priority', message: 'The property is unknown.' }]],
      ['a rule that is not an object', [null], [{ path: '0', message: 'The value must be a JSON object.' }]],
      ['1001 rules', Array.from({ length: 1001 }, () => ({ action: 'DENY' })), [{ path: '', message: 'The list is too long: at most 1000 entries.' }]],
      ['an organization on a rule that does not create', [{ action: 'GRANT', accessLevel: 'EDITOR', organization: 'Users' }], [{ path: '0.organization', message: 'Only a CREATE rule names an organization.' }]],
      ['an organization the tenant has not at the top level', [{ action: 'DENY' }, { action: 'CREATE', accessLevel: 'EDITOR', organization: 'Nowhere' }], [{ path: '1.organization', message: 'No top-level organization of this tenant has this label.' }]],
      ['an empty organization', [{ action: 'CREATE', accessLevel: 'EDITOR', organization: '' }], [{ path: '0.organization', message: 'The property is mandatory.' }]],
      ['a name condition that is a number', [{ condition: { familyName: 7 }, action: 'DENY' }], [{ path: '0.condition.familyName', message: 'The value must be text or a JSON object.' }]],
      ['an empty name', [{ condition: { givenName: '' }, action: 'DENY' }], [{ path: '0.condition.givenName', message: 'The property is mandatory.' }]],
      ['a name pattern without its pattern', [{ condition: { givenName: { glob: 'J*' } }, action: 'DENY' }], [{ path: '0.condition.givenName.glob', message: 'The property is unknown.' }, { path: '0.condition.givenName.pattern', message: 'The property is mandatory.' }]],
      ['a name pattern over 256 characters', [{ condition: { familyName: { pattern: '*'.repeat(257) } }, action: 'DENY' }], [{ path: '0.condition.familyName.pattern', message: 'The value is too long: at most 256 characters.' }]],
    ];
    for (const [what, body, violations] of invalid) {
      it(`answers 400 with violations to ${what}, keeping the rules as they were`, async () => {
        const kept = [{ condition: { tenantId: 'kept' }, action: 'DENY' }];
        await putRules('Second', kept);
        const r = await t.request(rulesPath('Second'), { method: 'PUT', json: body });
        expect(r.status).to.equal(400);
        const error = await r.json();
        expect(error).to.include({ statusCode: 400, method: 'PUT' });
        expect(error.violations).to.deep.equal(violations);
        expect(await (await t.request(rulesPath('Second'))).json()).to.deep.equal(kept);
      });
    }

    it('answers 400, never 500, to text the database cannot store (NUL), keeping the rules as they were', async () => {
      const kept = [{ condition: { tenantId: 'kept' }, action: 'DENY' }];
      await putRules('Second', kept);
      for (const condition of [{ groups: ['g\u0000'] }, { tenantId: 't\u0000' }]) {
        const r = await t.request(rulesPath('Second'), { method: 'PUT', json: [{ condition, action: 'DENY' }] });
        expect(r.status, JSON.stringify(condition)).to.equal(400);
        expect(await r.json()).to.include({ statusCode: 400, method: 'PUT' });
      }
      expect(await (await t.request(rulesPath('Second'))).json()).to.deep.equal(kept);
    });

    it('answers 404 for a tenant that does not exist, 405 for other methods', async () => {
      expect((await t.request(rulesPath('Nope'))).status).to.equal(404);
      expect((await t.request(rulesPath(randomUUID()), { method: 'PUT', json: [] })).status).to.equal(404);
      const r = await t.request(rulesPath('Second'), { method: 'DELETE' });
      expect(r.status).to.equal(405);
      expect(r.headers.get('allow')).to.equal('GET, HEAD, PUT');
    });

    it('lets an administrator of the tenant read and replace its rules', async () => {
      const rules = [{ condition: { groups: ['ops'] }, action: 'GRANT', accessLevel: 'EDITOR' }];
      expect(await putRules('Second', rules, people['second-boss'])).to.deep.equal(rules);
      const explained = await t.request(`${rulesPath('Second')}/explain`, { method: 'POST', json: { loginId: 'x', groups: ['ops'] }, auth: people['second-boss'] });
      expect(explained.status).to.equal(200);
    });

    it('refuses (403) READ_ONLY and EDITOR users every rule call, and answers 404 to another tenant\'s administrator', async () => {
      const before = await (await t.request(rulesPath('Default'))).json();
      for (const loginId of ['reader', 'editor']) {
        for (const [method, path, json] of [['GET', rulesPath('Default')], ['PUT', rulesPath('Default'), [{ action: 'GRANT', accessLevel: 'ADMINISTRATOR' }]], ['POST', `${rulesPath('Default')}/explain`, { loginId: 'x' }], ['PUT', rulesPath('Nope'), []]] as const) {
          const r = await t.request(path, { method, json, auth: people[loginId] });
          expect(r.status, `${loginId} ${method} ${path}`).to.equal(403);
        }
      }
      for (const [method, path, json] of [['GET', rulesPath('Default')], ['PUT', rulesPath('Default'), [{ action: 'GRANT', accessLevel: 'ADMINISTRATOR' }]], ['PUT', rulesPath(tenantIds.Default), []], ['POST', `${rulesPath('Default')}/explain`, { loginId: 'x' }]] as const) {
        expect((await t.request(path, { method, json, auth: people['second-boss'] })).status, `${method} ${path}`).to.equal(404);
      }
      // Naming the tenant does not help: the other tenant's administrator has no user there.
      expect((await t.request(rulesPath('Default'), { method: 'PUT', json: [], auth: people['second-boss'], headers: inTenant('Default') })).status).to.equal(403);
      expect(await (await t.request(rulesPath('Default'))).json()).to.deep.equal(before);
    });
  });

  describe('sign-in of external identities without a user', () => {
    before(async () => {
      await putRules('Default', [
        { condition: { groups: ['readers', 'viewers'] }, action: 'GRANT', accessLevel: 'READ_ONLY' },
        { condition: { tenantId: 'blocked-org' }, action: 'DENY' },
        { condition: { groups: ['staff'] }, action: 'CREATE', accessLevel: 'EDITOR' },
        { condition: { tenantId: 'partner-org' }, action: 'GRANT', accessLevel: 'EDITOR' },
      ]);
    });

    it('GRANT: access with the rule\'s level, no user created', async () => {
      const guest = { loginId: 'guest-1', groups: ['other', 'viewers'] };
      expect((await schemes(guest)).status).to.equal(200);
      expect((await createScheme(guest)).status).to.equal(403);
      expect(await usersNamed('guest-1')).to.deep.equal([]);
      expect((await createScheme({ loginId: 'partner-1', tenantId: 'partner-org' })).status).to.equal(201);
      expect(await usersNamed('partner-1')).to.deep.equal([]);
    });

    it('applies the first rule that holds: a DENY below a GRANT does not matter, one above it does', async () => {
      expect((await schemes({ loginId: 'guest-2', groups: ['readers'], tenantId: 'blocked-org' })).status).to.equal(200);
      const denied = await schemes({ loginId: 'guest-3', groups: ['staff'], tenantId: 'blocked-org' });
      expect(denied.status).to.equal(403);
      expect(await denied.json()).to.deep.equal({ statusCode: 403, method: 'GET', message: 'You are not allowed to do this.', _links: { self: `${t.url}/rest/${db}/schemes` } });
      expect(await usersNamed('guest-3')).to.deep.equal([]);
    });

    it('denies (403) when no rule applies', async () => {
      expect((await schemes({ loginId: 'stranger', groups: ['nobody'], tenantId: 'x' })).status).to.equal(403);
      expect((await schemes({ loginId: 'stranger' })).status).to.equal(403);
    });

    it('CREATE: makes a user in the tenant with the rule\'s level and the identity\'s names, with history, once', async () => {
      const staff = { loginId: 'new-staff', groups: ['staff'], givenName: 'Jürgen', familyName: 'Ölmann', tenantId: 'org' };
      const r = await createScheme(staff, 'Made by new staff');
      expect(r.status).to.equal(201);
      expect((await r.json()).createdBy).to.equal('new-staff');
      const [user] = await usersNamed('new-staff');
      expect(user).to.include({ loginId: 'new-staff', accessLevel: 'EDITOR', givenName: 'Jürgen', familyName: 'Ölmann', title: 'Jürgen Ölmann', tenant: tenantIds.Default, _version: 1, createdBy: 'new-staff', label: 'new-staff' });
      const history = (await t.service.storage.knex.raw(`select version, operation from "${schemaOf(db)}".history where id = ?`, [user.id as string])).rows;
      expect(history).to.deep.equal([{ version: 1, operation: 'create' }]);
      // The next sign-in finds the user: its level counts now, not the rule's.
      expect((await t.request(`/rest/${db}/users/${user.id}`, { method: 'PATCH', json: { accessLevel: 'READ_ONLY' } })).status).to.equal(200);
      expect((await createScheme(staff)).status).to.equal(403);
      expect(await usersNamed('new-staff')).to.have.length(1);
    });

    it('CREATE: makes the person too, in the organization Users (made on first need), and links the user to it', async () => {
      const staff = { loginId: 'person-staff', groups: ['staff'], givenName: 'Jana', familyName: 'Überall', commonName: 'J. Überall' };
      expect((await schemes(staff)).status).to.equal(200);
      const [user] = await usersNamed('person-staff');
      const person = await (await t.request(`/rest/${db}/persons/${user.isPerson}`)).json();
      const users = await (await t.request(`/rest/${db}/organizations/Users`)).json();
      expect(person).to.include({ _type: 'Person', givenName: 'Jana', familyName: 'Überall', label: 'Jana Überall', agentOf: users.id, parentId: users.id, createdBy: 'person-staff', _version: 1 });
      // Made by the first CREATE of the tenant (new-staff's, above).
      expect(users).to.include({ _type: 'Organization', label: 'Users', parentId: null, createdBy: 'new-staff' });
      const history = (await t.service.storage.knex.raw(`select type, version, operation from "${schemaOf(db)}".history where id = any(?) order by type`, [[user.id, person.id]])).rows;
      expect(history).to.deep.equal([{ type: 'Person', version: 1, operation: 'create' }, { type: 'User', version: 1, operation: 'create' }]);
    });

    it('CREATE: names the person by the given name, else the whole name, else the login ID, and tells namesakes apart', async () => {
      const named = async (identity: ExternalIdentity) => {
        expect((await schemes({ groups: ['staff'], ...identity })).status).to.equal(200);
        const [user] = await usersNamed(identity.loginId);
        return (await t.request(`/rest/${db}/persons/${user.isPerson}`)).json();
      };
      expect(await named({ loginId: 'cn-only', commonName: 'Common Name', familyName: 'Family' })).to.include({ givenName: 'Common Name', familyName: 'Family', label: 'Common Name Family' });
      expect(await named({ loginId: 'login-only' })).to.include({ givenName: 'login-only', label: 'login-only' }).and.not.have.property('familyName');
      const twin = await named({ loginId: 'namesake', givenName: 'Common Name', familyName: 'Family' });
      expect(twin.label).to.match(/^Common Name Family \([0-9a-f]{8}\)$/);
    });

    it('CREATE: two first requests at once make one user and one person; first requests of many make one organization', async () => {
      const staff = { loginId: 'rush-staff', groups: ['staff'] };
      const answers = await Promise.all(Array.from({ length: 8 }, () => schemes(staff)));
      expect(answers.map((a) => a.status)).to.deep.equal(Array(8).fill(200));
      expect(await usersNamed('rush-staff')).to.have.length(1);
      const persons = async (tenant?: string) => (await (await t.request(`/rest/${db}/persons`, { headers: inTenant(tenant) })).json())._embedded.persons;
      expect((await persons()).filter((p: { givenName: string }) => p.givenName === 'rush-staff')).to.have.length(1);
      await putRules('Third', [{ action: 'CREATE', accessLevel: 'READ_ONLY' }]);
      const many = await Promise.all(Array.from({ length: 6 }, (_, i) => schemes({ loginId: `crowd-${i}` }, inTenant('Third'))));
      expect(many.map((a) => a.status)).to.deep.equal(Array(6).fill(200));
      const organizations = (await (await t.request(`/rest/${db}/organizations`, { headers: inTenant('Third') })).json())._embedded.organizations;
      expect(organizations.map((o: { label: string }) => o.label)).to.deep.equal(['Users']);
      expect(organizations[0].createdBy).to.match(/^crowd-\d$/);
      expect((await persons('Third')).map((p: { agentOf: string }) => p.agentOf)).to.deep.equal(Array(6).fill(organizations[0].id));
      await putRules('Third', []);
    });

    it('CREATE: puts the person into the top-level organization the rule names, made again if it was deleted since', async () => {
      const org = await (await t.request(`/rest/${db}/organizations`, { method: 'POST', headers: inTenant('Second'), json: { _type: 'Organization', label: 'Contractors' } })).json();
      await putRules('Second', [{ action: 'CREATE', accessLevel: 'READ_ONLY', organization: 'Contractors' }]);
      expect((await schemes({ loginId: 'contractor-1', givenName: 'Con' }, inTenant('Second'))).status).to.equal(200);
      const [user] = await usersNamed('contractor-1', 'Second');
      expect(await (await t.request(`/rest/${db}/persons/${user.isPerson}`, { headers: inTenant('Second') })).json()).to.include({ agentOf: org.id, givenName: 'Con' });
      expect((await t.request(`/rest/${db}/organizations/${org.id}`, { method: 'DELETE', headers: inTenant('Second') })).status).to.equal(204);
      expect((await schemes({ loginId: 'contractor-2' }, inTenant('Second'))).status).to.equal(200);
      const again = await (await t.request(`/rest/${db}/organizations/Contractors`, { headers: inTenant('Second') })).json();
      expect(again.id).to.not.equal(org.id);
      await putRules('Second', []);
    });

    it('lets family and given names decide, exactly or by pattern', async () => {
      await putRules('Third', [
        { condition: { familyName: { pattern: 'M*ller' }, givenName: 'Anna' }, action: 'GRANT', accessLevel: 'EDITOR' },
        { condition: { givenName: { pattern: '?o*' } }, action: 'GRANT', accessLevel: 'READ_ONLY' },
      ]);
      const write = (identity: ExternalIdentity) => t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: `S ${randomUUID()}` }, ...as(identity, inTenant('Third')) });
      expect((await write({ loginId: 'anna-m', givenName: 'Anna', familyName: 'Müller' })).status).to.equal(201);
      expect((await write({ loginId: 'anna-s', givenName: 'Anna', familyName: 'Schmidt' })).status).to.equal(403);
      expect((await schemes({ loginId: 'john', givenName: 'John' }, inTenant('Third'))).status).to.equal(200);
      expect((await schemes({ loginId: 'anonymous' }, inTenant('Third'))).status).to.equal(403);
      await putRules('Third', []);
    });

    it('CREATE: when a concurrent write takes the login ID as a label first, makes the user with a label of its own, not a 500', async function () {
      const url = process.env.SERVICE_TEST_DATABASE_URL;
      if (!url) this.skip(); // the embedded database runs one transaction at a time
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      const s = `"${schemaOf(db)}"`;
      const taken = randomUUID();
      try {
        // An administrator's new user labelled like the login ID, written but not yet committed.
        await holder.query('begin');
        await holder.query(`insert into ${s}.objects (id, tenant, type, list, label, version, date_created, date_modified, props)
          values ($1, $2, 'User', 'users', 'late-staff', 1, now(), now(), '{"loginId":"someone-else"}')`, [taken, tenantIds.Default]);
        const signIn = schemes({ loginId: 'late-staff', groups: ['staff'] });
        for (let tries = 0; tries < 200; tries++) {
          const waiting = await holder.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
          if (waiting.rows[0].n > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await holder.query('commit');
        expect((await signIn).status).to.equal(200);
        const [user] = await usersNamed('late-staff');
        expect(user.label).to.match(/^late-staff \([0-9a-f]{8}\)$/);
      } finally {
        await holder.query(`delete from ${s}.objects where id = $1`, [taken]);
        await holder.end();
      }
    });

    it('does not evaluate rules for an identity that has a user in the tenant', async () => {
      expect((await schemes({ loginId: 'editor', tenantId: 'blocked-org' })).status).to.equal(200);
      expect((await createScheme({ loginId: 'reader', groups: ['staff'] })).status).to.equal(403);
    });

    it('gives a system administrator access to every tenant with those rights, without a user or a rule', async () => {
      await putRules('Third', [{ condition: null, action: 'DENY' }]);
      const r = await t.request(`/rest/${db}/tenants`, { method: 'POST', json: { _type: 'Tenant', label: 'By external admin' }, ...as({ loginId: ADMIN.loginId, tenantId: 'blocked-org' }, inTenant('Third')) });
      expect(r.status).to.equal(201);
      expect((await t.request('/api/admin/databases', as({ loginId: ADMIN.loginId }))).status).to.equal(200);
      expect((await t.request('/api/admin/databases', as({ loginId: 'editor' }))).status).to.equal(403);
    });

    it('evaluates the rules of the tenant named in service-tenant, and refuses one that does not exist', async () => {
      await putRules('Third', [{ condition: { groups: ['third-party'] }, action: 'CREATE', accessLevel: 'READ_ONLY' }]);
      expect((await schemes({ loginId: 'tp-1', groups: ['third-party'] }, inTenant('Third'))).status).to.equal(200);
      expect(await usersNamed('tp-1', 'Third')).to.have.length(1);
      expect(await usersNamed('tp-1')).to.have.length(0);
      // In Default the same identity matches no rule.
      expect((await schemes({ loginId: 'tp-2', groups: ['third-party'] })).status).to.equal(403);
      expect((await schemes({ loginId: 'tp-1', groups: ['third-party'] }, inTenant('No such tenant'))).status).to.equal(403);
    });

    it('evaluates the rules of the tenant the identity names in place of the default tenant', async () => {
      expect((await schemes({ loginId: 'tp-3', groups: ['third-party'], tenantName: 'Third' })).status).to.equal(200);
      const [user] = await usersNamed('tp-3', 'Third');
      expect(user.tenant).to.equal(tenantIds.Third);
      // A tenant name that does not exist leaves the default tenant.
      expect((await schemes({ loginId: 'guest-4', groups: ['readers'], tenantName: 'Nope' })).status).to.equal(200);
    });

    it('refuses a login ID with two users in the tenant rather than guess or add a third', async () => {
      await createUser(t, db, { loginId: 'twin', accessLevel: 'EDITOR', tenant: 'Second', label: 'twin-a' } as never);
      const b = await createUser(t, db, { loginId: 'twin-b', accessLevel: 'EDITOR', tenant: 'Second' });
      // The REST interface no longer lets two users of a tenant share a login ID; a database from before may hold them.
      await t.service.storage.knex.raw(`update "${schemaOf(db)}".objects set props = props || '{"loginId":"twin"}' where id = ?`, [b.id as string]);
      await putRules('Second', [{ condition: null, action: 'CREATE', accessLevel: 'ADMINISTRATOR' }]);
      expect((await schemes({ loginId: 'twin' }, inTenant('Second'))).status).to.equal(403);
      expect(await usersNamed('twin', 'Second')).to.have.length(2);
    });

    it('never applies to a password login or an access key', async () => {
      await putRules('Default', [{ condition: null, action: 'GRANT', accessLevel: 'ADMINISTRATOR' }]);
      const r = await t.request(`/rest/${db}/schemes`, { auth: { loginId: 'no-user', password: 'any-Passwort-1' } });
      expect(r.status).to.equal(401);
      await putRules('Default', [{ condition: null, action: 'DENY' }]);
      const [reader] = await usersNamed('reader');
      const { key } = await (await t.request(`/rest/${db}/users/${reader.id}/accessKeys`, { method: 'POST', json: {} })).json();
      expect((await t.request(`/rest/${db}/schemes`, { auth: null, headers: { 'service-access-key': key } })).status).to.equal(200);
      expect((await schemes({ loginId: 'reader' })).status).to.equal(200);
      expect((await schemes({ loginId: 'guest-5', groups: ['readers'] })).status).to.equal(403);
    });
  });

  describe('explain', () => {
    const explain = async (tenant: string, body: unknown, auth: Credentials = ADMIN) => {
      const r = await t.request(`${rulesPath(tenant)}/explain`, { method: 'POST', json: body, auth });
      return { status: r.status, body: await r.json() };
    };
    before(async () => {
      await putRules('Third', [
        { condition: { groups: ['g1'] }, action: 'GRANT', accessLevel: 'READ_ONLY' },
        { condition: { tenantId: 'bad' }, action: 'DENY' },
        { condition: null, action: 'CREATE', accessLevel: 'EDITOR' },
      ]);
    });

    it('names the rule that would apply, and does not sign anyone in or create a user', async () => {
      expect((await explain('Third', { loginId: 'x1', groups: ['g1'], tenantId: 'bad' })).body).to.deep.equal({ rule: 0, action: 'GRANT', accessLevel: 'READ_ONLY', user: null, reason: 'rule', matched: { groups: ['g1'] } });
      expect((await explain('Third', { loginId: 'x1', tenantId: 'bad' })).body).to.deep.equal({ rule: 1, action: 'DENY', accessLevel: null, user: null, reason: 'rule', matched: { tenantId: 'bad' } });
      expect((await explain(tenantIds.Third, { loginId: 'x1' })).body).to.deep.equal({ rule: 2, action: 'CREATE', accessLevel: 'EDITOR', user: null, reason: 'rule', matched: {} });
      expect(await usersNamed('x1', 'Third')).to.have.length(0);
    });

    it('takes family and given names, and shows what of them met the rule that applies', async () => {
      await putRules('Second', [{ condition: { familyName: { pattern: 'Sch*dt' }, givenName: 'Ida', groups: ['g1', 'g2'] }, action: 'GRANT', accessLevel: 'EDITOR' }]);
      expect((await explain('Second', { loginId: 'x3', familyName: 'Schmidt', givenName: 'Ida', groups: ['g2', 'g9'] })).body)
        .to.deep.equal({ rule: 0, action: 'GRANT', accessLevel: 'EDITOR', user: null, reason: 'rule', matched: { familyName: 'Schmidt', givenName: 'Ida', groups: ['g2'] } });
      expect((await explain('Second', { loginId: 'x3', familyName: 'Schmitt', givenName: 'Ida', groups: ['g2'] })).body).to.include({ rule: null, reason: 'noRuleApplies' });
      expect((await explain('Second', { loginId: 'x3', familyName: 7 })).status).to.equal(400);
    });

    it('says when no rule applies', async () => {
      await putRules('Second', [{ condition: { groups: ['only'] }, action: 'GRANT', accessLevel: 'EDITOR' }]);
      expect((await explain('Second', { loginId: 'x2', groups: ['other'] })).body).to.deep.equal({ rule: null, action: 'DENY', accessLevel: null, user: null, reason: 'noRuleApplies', matched: null });
    });

    it('names the existing user, whose level counts, and the system administrator', async () => {
      const [user] = await usersNamed('tp-1', 'Third');
      expect((await explain('Third', { loginId: 'tp-1', tenantId: 'bad' })).body).to.deep.equal({ rule: null, action: null, accessLevel: 'READ_ONLY', user: user.id, reason: 'user', matched: null });
      expect((await explain('Third', { loginId: ADMIN.loginId })).body).to.deep.equal({ rule: null, action: null, accessLevel: 'ADMINISTRATOR', user: null, reason: 'systemAdministrator', matched: null });
    });

    it('answers 400 with violations to a bad request', async () => {
      const missing = await explain('Third', { groups: ['g1'] });
      expect(missing.status).to.equal(400);
      expect(missing.body.violations).to.deep.equal([{ path: 'loginId', message: 'The property is mandatory.' }]);
      const wrong = await explain('Third', { loginId: 'x', groups: 'g1', extra: 1 });
      expect(wrong.status).to.equal(400);
      expect(wrong.body.violations.map((v: { path: string }) => v.path)).to.deep.equal(['extra', 'groups']);
      expect((await t.request(`${rulesPath('Third')}/explain`, { method: 'GET' })).status).to.equal(405);
      // A NUL in the login ID reaches the user lookup: 400; in groups or a tenant ID it is only compared: no rule matches.
      expect((await explain('Third', { loginId: 'x\u0000' })).status).to.equal(400);
      for (const body of [{ loginId: 'x', groups: ['g\u0000'] }, { loginId: 'x', tenantId: '\u0000' }]) {
        const r = await explain('Third', body);
        expect(r.status, JSON.stringify(body)).to.equal(200);
        expect(r.body.action, JSON.stringify(body)).to.equal('CREATE');
      }
    });
  });
});
