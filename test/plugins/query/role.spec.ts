/**
 * The read-only role's password (SERVICE_DATABASE_READONLY_PASSWORD): only a
 * SCRAM-SHA-256 verifier computed by the service reaches the database, and
 * it is the verifier PostgreSQL itself would have stored, so that the role
 * signs in with the password.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { startService, type TestService } from '../../helpers/service.ts';
import { rememberSecret } from '../../helpers/secrets.ts';
import { ensureRole, scramVerifier } from '../../../plugins/query/role.ts';
import { literal } from '../../../runtime/storage/sql.ts';

describe('Query interface: the read-only role\'s password', () => {
  let t: TestService;
  const roles: string[] = [];
  before(async () => {
    t = await startService();
  });
  after(async () => {
    for (const role of roles) await t.service.storage.knex.raw(`drop role if exists "${role}"`);
    await t?.close();
  });
  const newRole = () => {
    const role = `ro_test_${randomBytes(4).toString('hex')}`;
    roles.push(role);
    return role;
  };

  it('computes the verifier the database computes from the same password and salt, SASLprep included', async () => {
    const knex = t.service.storage.knex;
    const role = newRole();
    await knex.raw(`create role "${role}" nologin`);
    for (const password of ['plain-Secret-1', 'Pässwörd\u00ADmit\u00A0Leerzeichen', 'ﬁ-ligature-①']) {
      await knex.transaction(async (trx) => {
        await trx.raw(`set local password_encryption = 'scram-sha-256'`);
        await trx.raw(`alter role "${role}" password ${literal(password)}`);
      });
      const stored: string = (await knex.raw(`select rolpassword from pg_authid where rolname = ?`, [role])).rows[0].rolpassword;
      const [, iterations, salt] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored)!;
      expect(scramVerifier(password, Buffer.from(salt, 'base64'), Number(iterations)), password).to.equal(stored);
    }
  });

  it('sends the database the verifier only, never the password', async () => {
    const knex = t.service.storage.knex;
    const role = newRole();
    const password = rememberSecret(`ro-${randomBytes(12).toString('hex')}`);
    const sent: string[] = [];
    const record = (q: { sql: string; bindings?: unknown[] }) => sent.push(q.sql, ...(q.bindings ?? []).map(String));
    knex.on('query', record);
    try {
      await ensureRole(knex, role, password);
    } finally {
      knex.off('query', record);
    }
    expect(sent.some((text) => text.startsWith('SCRAM-SHA-256$4096:'))).to.equal(true);
    for (const text of sent) expect(text).to.not.include(password);
    const stored: string = (await knex.raw(`select rolpassword from pg_authid where rolname = ?`, [role])).rows[0].rolpassword;
    expect(stored).to.match(/^SCRAM-SHA-256\$4096:/);
    expect(sent).to.include(stored);

    if (t.service.storage.kind !== 'postgres') return;
    // The role can sign in, and reads nothing that is not granted to it. (The test server trusts every
    // local login: that the password is right is what the verifier comparison above shows.)
    const url = new URL(process.env.SERVICE_TEST_DATABASE_URL!);
    url.username = role;
    url.password = password;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      expect((await client.query('select current_user as u')).rows[0].u).to.equal(role);
      const denied = await client.query('select * from service.databases').then(() => null, (err: { code?: string }) => err.code);
      expect(denied).to.equal('42501');
    } finally {
      await client.end();
    }
  });
});
