import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import type { ExternalIdentity } from '../../runtime/auth/types.ts';
import { createTenant, createUser, inTenant } from './fixtures.ts';
import { as, testIdentityPlugin } from './test-identity.ts';

describe('subject-identifier pinning', () => {
  let t: TestService;
  let db: string;
  let reference: { body: unknown; challenge: string | null };

  const signIn = (identity: ExternalIdentity, headers: Record<string, string> = {}) => t.request(`/rest/${db}/schemes`, as(identity, headers));
  async function user(id: string, tenant?: string) {
    return (await t.request(`/rest/${db}/users/${id}`, { headers: inTenant(tenant) })).json();
  }
  async function history(id: string) {
    return (await t.service.storage.knex.raw(`select version, changed_by, row->>'subjectId' as subject_id from "${schemaOf(db)}".history where id = ? order by version`, [id])).rows;
  }

  before(async () => {
    t = await startService({}, { plugins: [testIdentityPlugin] });
    db = await createDatabase(t);
    await createTenant(t, db, 'Second');
    const r = await t.request(`/rest/${db}/schemes`, { auth: { loginId: 'nobody', password: 'wrong-Passwort-1' } });
    reference = { body: await r.json(), challenge: r.headers.get('www-authenticate') };
  });
  after(async () => t?.close());

  it('stores the identifier of the first sign-in as a new version of the user, and accepts it afterwards without writing', async () => {
    const pinned = await createUser(t, db, { loginId: 'pinned', accessLevel: 'EDITOR' });
    expect(pinned).to.not.have.property('subjectId');
    expect((await signIn({ loginId: 'pinned', subjectId: 'sub-1' })).status).to.equal(200);
    expect(await user(pinned.id as string)).to.include({ subjectId: 'sub-1', _version: 2, modifiedBy: 'pinned' });
    expect(await history(pinned.id as string)).to.deep.equal([
      { version: 1, changed_by: 'admin', subject_id: null },
      { version: 2, changed_by: 'pinned', subject_id: 'sub-1' },
    ]);
    for (let i = 0; i < 3; i++) expect((await signIn({ loginId: 'pinned', subjectId: 'sub-1' })).status).to.equal(200);
    expect((await user(pinned.id as string))._version).to.equal(2);
  });

  it('rejects (401) a sign-in with another identifier, as it rejects bad credentials, and keeps the stored one', async () => {
    for (const subjectId of ['sub-2', 'SUB-1', 'sub-1 ', '']) {
      const r = await signIn({ loginId: 'pinned', subjectId });
      expect(r.status, JSON.stringify(subjectId)).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.equal(reference.challenge);
      expect(await r.json()).to.deep.equal(reference.body);
    }
    const [found] = (await (await t.request(`/rest/${db}/users?loginId=pinned`)).json())._embedded.users;
    expect(found).to.include({ subjectId: 'sub-1', _version: 2 });
  });

  it('does not check the identifier of a method that does not pin subjects', async () => {
    expect((await signIn({ loginId: 'pinned' })).status).to.equal(200);
  });

  it('pins each user of a login ID on its own, tenant by tenant', async () => {
    const second = await createUser(t, db, { loginId: 'pinned', accessLevel: 'READ_ONLY', tenant: 'Second' });
    expect((await signIn({ loginId: 'pinned', subjectId: 'sub-1' }, inTenant('Second'))).status).to.equal(200);
    expect((await user(second.id as string, 'Second')).subjectId).to.equal('sub-1');
    const third = await createUser(t, db, { loginId: 'twice', accessLevel: 'READ_ONLY', tenant: 'Second' });
    await createUser(t, db, { loginId: 'twice', accessLevel: 'READ_ONLY' });
    expect((await signIn({ loginId: 'twice', subjectId: 'sub-x' }, inTenant('Second'))).status).to.equal(200);
    expect((await signIn({ loginId: 'twice', subjectId: 'sub-y' }, inTenant('Second'))).status).to.equal(401);
    expect((await user(third.id as string, 'Second')).subjectId).to.equal('sub-x');
  });

  it('stores one identifier when first sign-ins with different ones race', async () => {
    const racer = await createUser(t, db, { loginId: 'racer', accessLevel: 'READ_ONLY' });
    const subjects = ['A', 'B', 'A', 'B', 'A', 'B', 'C', 'C'];
    const answers = await Promise.all(subjects.map((subjectId) => signIn({ loginId: 'racer', subjectId })));
    const stored = (await user(racer.id as string)).subjectId;
    expect(['A', 'B', 'C']).to.include(stored);
    subjects.forEach((s, i) => expect(answers[i].status, s).to.equal(s === stored ? 200 : 401));
    expect((await history(racer.id as string)).map((h: { subject_id: string | null }) => h.subject_id)).to.deep.equal([null, stored]);
  });

  it('gives a user made by a CREATE rule the identifier of the sign-in that made it', async () => {
    await t.request(`/rest/${db}/tenants/Default/accessRules`, { method: 'PUT', json: [{ action: 'CREATE', accessLevel: 'READ_ONLY' }] });
    expect((await signIn({ loginId: 'newcomer', subjectId: 'sub-new' })).status).to.equal(200);
    const [made] = (await (await t.request(`/rest/${db}/users?loginId=newcomer`)).json())._embedded.users;
    expect(made).to.include({ subjectId: 'sub-new', _version: 1 });
    expect((await signIn({ loginId: 'newcomer', subjectId: 'sub-other' })).status).to.equal(401);
    // Two first sign-ins of a new login ID with different identifiers: one user, one identifier.
    const answers = await Promise.all(['P', 'Q', 'P', 'Q'].map((subjectId) => signIn({ loginId: 'newcomer-2', subjectId })));
    const [one] = (await (await t.request(`/rest/${db}/users?loginId=newcomer-2`)).json())._embedded.users;
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 200, 401, 401]);
    expect(['P', 'Q']).to.include(one.subjectId);
  });

  it('pins a system administrator\'s user too', async () => {
    const admin = await createUser(t, db, { loginId: 'admin', accessLevel: 'READ_ONLY', tenant: 'Second' });
    expect((await signIn({ loginId: 'admin', subjectId: 'root-sub' }, inTenant('Second'))).status).to.equal(200);
    expect((await signIn({ loginId: 'admin', subjectId: 'intruder' }, inTenant('Second'))).status).to.equal(401);
    expect((await user(admin.id as string, 'Second')).subjectId).to.equal('root-sub');
  });

  it('pins a system administrator\'s identifier service-wide, without a user: another is refused in every database and on /api/admin', async () => {
    const other = await createDatabase(t);
    const admin = (subjectId: string | null, path = `/rest/${other}/schemes`) => t.request(path, as({ loginId: 'admin', subjectId }));
    // Pinned by the sign-in of the test before, which went through the administrator's user in Second.
    for (const path of [`/rest/${other}/schemes`, `/rest/${db}/schemes`, '/api/admin/databases']) {
      expect((await admin('root-sub', path)).status, path).to.equal(200);
      expect((await admin('intruder', path)).status, path).to.equal(401);
    }
    expect((await t.service.storage.knex.raw(`select subject_id from service.admin_subjects where login_id = 'admin'`)).rows).to.deep.equal([{ subject_id: 'root-sub' }]);
  });

  it('pins the first identifier of a system administrator who signs in to no tenant, on /api/admin', async () => {
    await t.service.storage.knex.raw(`delete from service.admin_subjects`);
    const admin = (subjectId: string) => t.request('/api/admin/databases', as({ loginId: 'admin', subjectId }));
    const answers = await Promise.all(['first', 'second', 'first', 'second'].map(admin));
    const [{ subject_id: pinned }] = (await t.service.storage.knex.raw(`select subject_id from service.admin_subjects where login_id = 'admin'`)).rows;
    expect(answers.map((a) => a.status)).to.deep.equal(['first', 'second', 'first', 'second'].map((s) => (s === pinned ? 200 : 401)));
    await t.service.storage.knex.raw(`update service.admin_subjects set subject_id = 'root-sub'`);
  });

  it('refuses a pinned user or system administrator whose sign-in leaves the identifier out, and pins nothing for one without', async () => {
    for (const loginId of ['pinned', 'admin']) expect((await signIn({ loginId, subjectId: null })).status, loginId).to.equal(401);
    const free = await createUser(t, db, { loginId: 'unpinned', accessLevel: 'READ_ONLY' });
    expect((await signIn({ loginId: 'unpinned', subjectId: null })).status).to.equal(200);
    expect(await user(free.id as string)).to.include({ _version: 1 }).and.not.have.property('subjectId');
  });

  describe('read-only through the REST interface', () => {
    let id: string;
    const expectKept = async () => {
      const u = await user(id);
      expect(u.subjectId).to.equal('sub-kept');
      return u;
    };
    before(async () => {
      id = (await createUser(t, db, { loginId: 'kept', accessLevel: 'READ_ONLY' })).id as string;
      expect((await signIn({ loginId: 'kept', subjectId: 'sub-kept' })).status).to.equal(200);
    });

    it('ignores it when a user is created', async () => {
      const r = await t.request(`/rest/${db}/users`, { method: 'POST', json: { _type: 'User', loginId: 'chosen', subjectId: 'sub-chosen' } });
      expect(r.status).to.equal(201);
      expect(await r.json()).to.not.have.property('subjectId');
      expect((await signIn({ loginId: 'chosen', subjectId: 'sub-real' })).status).to.equal(200);
    });

    it('keeps it through PUT, PATCH (with a value or null), list PUT and list PATCH', async () => {
      const changes: [string, string, unknown][] = [
        ['PUT', `/rest/${db}/users/${id}`, { _type: 'User', loginId: 'kept', accessLevel: 'READ_ONLY', subjectId: 'sub-evil' }],
        ['PUT', `/rest/${db}/users/${id}`, { _type: 'User', loginId: 'kept', accessLevel: 'EDITOR' }],
        ['PATCH', `/rest/${db}/users/${id}`, { subjectId: 'sub-evil' }],
        ['PATCH', `/rest/${db}/users/${id}`, { subjectId: null, accessLevel: 'READ_ONLY' }],
        ['PATCH', `/rest/${db}/users`, [{ id, subjectId: 'sub-evil', givenName: 'K' }]],
      ];
      for (const [method, path, json] of changes) {
        const r = await t.request(path, { method, json });
        expect(r.status, `${method} ${path} ${JSON.stringify(json)}`).to.equal(200);
        await expectKept();
      }
      const all = (await (await t.request(`/rest/${db}/users`)).json())._embedded.users as Record<string, unknown>[];
      const listed = all.map((u) => (u.id === id ? { ...u, subjectId: 'sub-evil' } : u));
      const r = await t.request(`/rest/${db}/users`, { method: 'PUT', json: listed });
      expect(r.status).to.equal(200);
      const kept = await expectKept();
      expect(kept.givenName).to.equal('K');
      expect((await signIn({ loginId: 'kept', subjectId: 'sub-kept' })).status).to.equal(200);
      expect((await signIn({ loginId: 'kept', subjectId: 'sub-evil' })).status).to.equal(401);
    });

    it('shows it in the user\'s history as of before and after the pin', async () => {
      const versions = await history(id);
      expect(versions[0].subject_id).to.equal(null);
      expect(versions.slice(1).every((v: { subject_id: string }) => v.subject_id === 'sub-kept')).to.equal(true);
    });
  });
});
