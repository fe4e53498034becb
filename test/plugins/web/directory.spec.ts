/**
 * Sign-in to the pages with the directory (LDAP): the same dialog, checked
 * by the directory driver exactly as Basic sign-in is, and the session's
 * identity assigned by the core again on every request.
 */
import { expect } from 'chai';
import { createUser } from '../../auth/fixtures.ts';
import type { Slapd } from '../../helpers/slapd.ts';
import { startService, type TestService } from '../../helpers/service.ts';
import { createDatabaseAs, credentials, directoryEnv, PEOPLE, startDirectory } from '../auth-ldap/people.ts';
import { postSession, signIn, withSession } from './helpers.ts';

describe('sign-in to the pages with the directory', () => {
  let slapd: Slapd;
  let t: TestService;
  let db: string;
  const admin = credentials(PEOPLE.admin);
  const alice = credentials(PEOPLE.alice);
  const bob = credentials(PEOPLE.bob);
  let bobUser: Record<string, unknown>;

  before(async () => {
    slapd = await startDirectory();
    t = await startService(directoryEnv(slapd));
    db = await createDatabaseAs(t, admin);
    await createUser(t, db, { loginId: 'alice', accessLevel: 'EDITOR' }, admin);
    bobUser = await createUser(t, db, { loginId: 'bob', accessLevel: 'READ_ONLY' }, admin);
  });
  after(async () => {
    await t?.close();
    await slapd?.close();
  });

  it('tells the pages to show the dialog, and opens a session with the directory password', async () => {
    expect(await (await t.request('/web/', { auth: null })).text()).to.include('"signIn":"directory"');
    const s = await signIn(t, { database: db, ...alice });
    expect(s.body).to.include({ loginId: 'alice', accessLevel: 'EDITOR', method: 'directory' });
    expect((await t.request(`/rest/${db}/schemes`, withSession(s, { method: 'POST', json: { _type: 'Scheme', label: 'From the pages' } }))).status).to.equal(201);
  });

  it('refuses a wrong directory password like an unknown person', async () => {
    const wrong = await postSession(t, { database: db, loginId: 'alice', password: 'not-alices-password' });
    const unknown = await postSession(t, { database: db, loginId: 'nobody', password: 'not-alices-password' });
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    expect((await wrong.json()).message).to.equal((await unknown.json()).message);
  });

  it('ends the session of a person whose user was removed', async () => {
    const s = await signIn(t, { database: db, ...bob });
    expect((await t.request(`/rest/${db}/schemes`, withSession(s))).status).to.equal(200);
    expect((await t.request(`/rest/${db}/users/${bobUser.id}`, { method: 'DELETE', auth: admin })).status).to.be.oneOf([200, 204]);
    expect((await t.request(`/rest/${db}/schemes`, withSession(s))).status).to.be.oneOf([401, 403]);
  });
});
