/**
 * The round trip a user makes: change the metamodel through the REST
 * interface of `meta`, regenerate, restart, and see the change served:
 * validated, documented, and on the pages (in the browser).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ADMIN, createDatabase, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { openPage } from '../helpers/browser.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

function generate(env: Record<string, string>, outDir: string) {
  return run('npx', ['tsx', 'generator/main.ts', '--out', outDir], { cwd: ROOT, env: { ...process.env, ...env } });
}

describe('generator round trip through the meta database', function () {
  this.timeout(180_000);
  let work: string;
  let env: Record<string, string>;
  let t: TestService | undefined;

  before(() => {
    work = mkdtempSync(join(ROOT, '.tmp', 'roundtrip-'));
    // A separate generator process must see the same storage: a folder, not memory.
    env = storageEnv().SERVICE_DATABASE_URL ? storageEnv() : { SERVICE_DATA_DIR: join(work, 'data') };
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('adds a property to Person in meta, regenerates, and the restarted service accepts, validates and documents it', async () => {
    t = await startService(env);
    await createDatabase(t, 'meta');
    const person = await t.request('/rest/meta/schemes/Metamodel/classifiers/Person');
    expect(person.status).to.equal(200);
    const givenName = await (await t.request('/rest/meta/schemes/Metamodel/classifiers/Person/attributes/givenName')).json();
    expect(givenName).to.include({ _type: 'BusinessAttribute', dataType: 'STRING', required: 'MANDATORY' });
    const processing = await (await t.request('/rest/meta/schemes/Metamodel/classifiers/Processing')).json();
    const activity = await (await t.request(`/rest/meta/classifiers/${processing.specializes}`)).json();
    expect(activity.label).to.equal('Activity');
    const r = await t.request('/rest/meta/schemes/Metamodel/classifiers/Person/attributes', {
      method: 'POST', json: { _type: 'BusinessAttribute', label: 'nickname', dataType: 'STRING', description: 'What friends call the person.' },
    });
    expect(r.status, await r.clone().text()).to.equal(201);
    await t.close();
    t = undefined;

    const out = join(work, 'generated');
    const { stdout } = await generate(env, out);
    expect(stdout).to.contain('from the meta database');
    const openapi = JSON.parse(readFileSync(join(out, 'openapi.gen.json'), 'utf8'));
    expect(openapi.components.schemas.Person.properties).to.have.property('nickname');

    t = await startService({ ...env, SERVICE_GENERATED_DIR: out });
    const db = await createDatabase(t);
    const org = await (await t.request(`/rest/${db}/organizations`, { method: 'POST', json: { _type: 'Organization', label: 'ACME' } })).json();
    const created = await t.request(`/rest/${db}/persons`, { method: 'POST', json: { _type: 'Person', givenName: 'Ada', agentOf: org.id, nickname: 'Countess' } });
    expect(created.status).to.equal(201);
    expect(await created.json()).to.include({ nickname: 'Countess' });
    const wrong = await t.request(`/rest/${db}/persons`, { method: 'POST', json: { _type: 'Person', givenName: 'Bob', agentOf: org.id, nickname: 42 } });
    expect(wrong.status).to.equal(400);
    expect((await wrong.json()).violations.map((v: { path: string }) => v.path)).to.deep.equal(['nickname']);
    const spec = await (await t.request('/specification/openapi.json')).json();
    expect(spec.components.schemas.Person.properties).to.have.property('nickname');

    // The pages show it, with no change of theirs: the person's page and its form follow the metamodel.
    const ada = await (await t.request(`/rest/${db}/persons?limit=1`)).json();
    const { page } = await openPage();
    await page.goto(`${t.url}${new URL(ada._embedded.persons[0].href).pathname}`);
    await page.getByLabel('Login ID').fill(ADMIN.loginId);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#object-heading').waitFor();
    await page.getByText('Countess').waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel(/^Nickname/).inputValue()).to.equal('Countess');
    await page.context().close();
  });

  it('exits non-zero when the metamodel in meta is broken', async () => {
    t = await startService(env);
    const r = await t.request('/rest/meta/schemes/Metamodel/classifiers/Person/attributes', {
      method: 'POST', json: { _type: 'BusinessAttribute', label: 'brokenReference', dataType: 'REFERENCE' },
    });
    expect(r.status).to.equal(201);
    await t.close();
    t = undefined;
    const failed = await generate(env, join(work, 'broken')).then(() => null, (err) => err);
    expect(failed, 'the generator must fail').to.not.equal(null);
    expect(failed.code).to.not.equal(0);
    expect(failed.stderr).to.contain('brokenReference');
  });
});
