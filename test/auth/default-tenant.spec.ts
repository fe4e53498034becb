/**
 * SERVICE_DEFAULT_TENANT (decisions §7.6): the label the default tenant of a
 * new database gets. It applies when a database is created; the default
 * tenant is found by the technical key the control schema keeps, so a
 * database created under another setting keeps its tenant.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { createDatabase, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { createUser, secret } from './fixtures.ts';

describe('the default tenant\'s label (SERVICE_DEFAULT_TENANT)', () => {
  /** Storage that outlives a service: the PostgreSQL database of the run, or an embedded database in a folder. */
  let dir: string | undefined;
  let storage: Record<string, string>;
  let t: TestService | undefined;

  before(() => {
    if (storageEnv().SERVICE_DATABASE_URL) storage = storageEnv();
    else {
      dir = mkdtempSync(join(tmpdir(), 'default-tenant-'));
      storage = { SERVICE_DATA_DIR: dir };
    }
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const labels = async (db: string) => {
    const r = await t!.request(`/rest/${db}/tenants`);
    expect(r.status).to.equal(200);
    return (await r.json())._embedded.tenants.map((x: { label: string }) => x.label);
  };

  it('is Default unless set', () => {
    expect(loadConfig({}).defaultTenantLabel).to.equal('Default');
    expect(loadConfig({ SERVICE_DEFAULT_TENANT: '' }).defaultTenantLabel).to.equal('Default');
    expect(loadConfig({ SERVICE_DEFAULT_TENANT: 'Mandant' }).defaultTenantLabel).to.equal('Mandant');
    expect(loadConfig({ SERVICE_DEFAULT_TENANT: 'Amt für Daten' }).defaultTenantLabel).to.equal('Amt für Daten');
  });

  for (const value of [' Mandant', 'Mandant ', '   ', 'Man\ndant', 'Man\u0000dant', 'x'.repeat(1001)]) {
    it(`stops the start for ${JSON.stringify(value.length > 20 ? `${value.slice(0, 5)}… (${value.length})` : value)}, naming the setting`, () => {
      expect(() => loadConfig({ SERVICE_DEFAULT_TENANT: value })).to.throw(ConfigError, /^SERVICE_DEFAULT_TENANT: /);
    });
  }

  it('labels the default tenant of a database created with the setting; users without service-tenant belong to it', async () => {
    t = await startService({ ...storage, SERVICE_DEFAULT_TENANT: 'Mandant' });
    const db = await createDatabase(t);
    expect(await labels(db)).to.deep.equal(['Mandant']);
    const info = (await t.service.databases.get(db))!;
    const tenant = await (await t.request(`/rest/${db}/tenants/Mandant`)).json();
    expect(tenant.id).to.equal(info.defaultTenant);
    const user = await createUser(t, db, { loginId: 'mia', password: secret('mia-Passwort-123'), accessLevel: 'EDITOR' });
    expect(user.tenant).to.equal(info.defaultTenant);
    // She signs in to it without naming it, and by naming it.
    const mia = { loginId: 'mia', password: 'mia-Passwort-123' };
    expect((await t.request(`/rest/${db}/schemes`, { auth: mia })).status).to.equal(200);
    expect((await t.request(`/rest/${db}/schemes`, { auth: mia, headers: { 'service-tenant': 'Mandant' } })).status).to.equal(200);
    // A tenant that a system administrator labels Default later is not the default tenant.
    expect((await t.request(`/rest/${db}/tenants`, { method: 'POST', json: { _type: 'Tenant', label: 'Default' } })).status).to.equal(201);
    const r = await t.request(`/rest/${db}/tenants/Mandant`, { method: 'DELETE' });
    expect(r.status).to.equal(409);
    expect((await r.json()).message).to.equal('The tenant Mandant is the default tenant of the database and cannot be deleted.');
    expect((await t.request(`/rest/${db}/tenants/Default`, { method: 'DELETE' })).status).to.equal(204);
  });

  it('applies at creation only: after a restart with another setting, a database keeps its default tenant and label, a new one gets the new label', async () => {
    t = await startService({ ...storage, SERVICE_DEFAULT_TENANT: 'Mandant' });
    const old = await createDatabase(t);
    const before = (await t.service.databases.get(old))!.defaultTenant;
    await createUser(t, old, { loginId: 'otto', password: secret('otto-Passwort-123'), accessLevel: 'READ_ONLY' });
    await t.close();
    t = await startService(storage);
    expect(await labels(old)).to.deep.equal(['Mandant']);
    expect((await t.service.databases.get(old))!.defaultTenant).to.equal(before);
    // Its users still sign in to it without naming it; a request naming the new setting's label finds no such tenant.
    const otto = { loginId: 'otto', password: 'otto-Passwort-123' };
    expect((await t.request(`/rest/${old}/schemes`, { auth: otto })).status).to.equal(200);
    expect((await t.request(`/rest/${old}/schemes`, { auth: otto, headers: { 'service-tenant': 'Default' } })).status).to.equal(403);
    const fresh = await createDatabase(t);
    expect(await labels(fresh)).to.deep.equal(['Default']);
  });
});
