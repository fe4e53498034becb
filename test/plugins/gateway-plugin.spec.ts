/**
 * A plugin from outside the repository (test/fixtures/gateway-plugin, its
 * own package importing only `metadata-service/host`) loaded through
 * SERVICE_PLUGINS, end to end on a real port: its sign-in method behaves
 * like a built-in one (password sign-in off while it is on, exclusions),
 * its settings are checked like a built-in's, and a manifest written for
 * another host API is refused at start.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ConfigError } from '../../runtime/config.ts';
import { PluginError } from '../../runtime/plugins.ts';
import { HOST_API_VERSION } from '../../runtime/host-version.ts';
import { ADMIN, basic, logLines, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { startMain } from '../helpers/main-process.ts';
import { rememberSecret } from '../helpers/secrets.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/gateway-plugin', import.meta.url));
/** As an operator writes it: relative to the working directory. */
const entry = (file = '') => `./${relative(process.cwd(), join(FIXTURE, file))}`;
const SECRET = rememberSecret('gateway-shared-secret-0123456789', 'gateway secret');

/**
 * The fixture's peer dependency, installed as npm installs one beside the
 * plugin: `metadata-service` is this checkout (node_modules is not kept in git).
 */
function installPeer() {
  const link = join(FIXTURE, 'node_modules', 'metadata-service');
  if (existsSync(link)) return;
  mkdirSync(join(FIXTURE, 'node_modules'), { recursive: true });
  symlinkSync(relative(join(FIXTURE, 'node_modules'), ROOT) || '.', link, 'dir');
}

const GATEWAY_ENV = { SERVICE_PLUGINS: entry(), SERVICE_GATEWAY_AUTHENTICATION: 'true', SERVICE_GATEWAY_SECRET: SECRET };

function through(loginId: string, secret: string | null = SECRET) {
  const headers: Record<string, string> = { 'x-gateway-user': loginId };
  if (secret !== null) headers['x-gateway-secret'] = secret;
  return { auth: null, headers };
}

async function startError(env: Record<string, string>): Promise<Error> {
  try {
    const t = await startService(env);
    await t.close();
  } catch (err) {
    return err as Error;
  }
  expect.fail('the service started');
}

describe('a plugin from outside the repository (SERVICE_PLUGINS)', function () {
  // The first start loads the plugin, and through it the host module as an ES module beside mocha's copy: slow on a busy machine.
  this.timeout(180_000);
  before(installPeer);

  describe('with its method on', () => {
    let t: TestService;
    const db = `gw_${Date.now().toString(36)}`;
    before(async () => {
      t = await startService(GATEWAY_ENV);
      // The system administrator signs in by the gateway too, as by every method.
      expect((await t.request('/api/admin/databases', { method: 'POST', json: { name: db }, ...through(ADMIN.loginId) })).status).to.equal(201);
      expect((await t.request(`/rest/${db}/users`, { method: 'POST', json: { _type: 'User', loginId: 'bob', accessLevel: 'EDITOR' }, ...through(ADMIN.loginId) })).status).to.equal(201);
    });
    after(async () => t?.close());

    it('signs a user in by the gateway\'s header with the right secret', async () => {
      const r = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Via gateway' }, ...through('bob') });
      expect(r.status).to.equal(201);
      expect((await r.json()).createdBy).to.equal('bob');
      const session = await (await t.request(`/api/${db}/session`, through('bob'))).json();
      expect(session).to.include({ loginId: 'bob', method: 'gateway', accessLevel: 'EDITOR' });
    });

    it('refuses the header without the secret, with a wrong one, and with one of another length', async () => {
      for (const secret of [null, rememberSecret('gateway-shared-secret-0123456780', 'wrong secret'), rememberSecret('short', 'wrong secret'), '']) {
        const r = await t.request(`/rest/${db}/schemes`, through('bob', secret));
        expect(r.status, String(secret)).to.equal(401);
        expect((await r.json()).message).to.equal('The credentials were not accepted.');
      }
      // A login ID no one has is refused by the core, as for every method: 403 once verified.
      expect((await t.request(`/rest/${db}/schemes`, through('nobody'))).status).to.equal(403);
    });

    it('turns password sign-in off, as every other method does (general rule 6)', async () => {
      const r = await t.request(`/rest/${db}/schemes`, { auth: null, headers: { authorization: basic(ADMIN.loginId, ADMIN.password) } });
      expect(r.status).to.equal(401);
      expect((await t.request(`/rest/${db}/schemes`, { auth: null })).status).to.equal(401);
    });

    it('never logs the secret', () => {
      expect(logLines.some((line) => line.includes(SECRET))).to.equal(false);
      expect(logLines.some((line) => line.includes('gateway sign-in on'))).to.equal(true);
    });
  });

  it('leaves password sign-in on while its switch is off, and its headers then sign no one in', async () => {
    const t = await startService({ ...GATEWAY_ENV, SERVICE_GATEWAY_AUTHENTICATION: 'false' });
    try {
      expect((await t.request('/api/admin/databases')).status).to.equal(200);
      expect((await t.request('/api/admin/databases', through(ADMIN.loginId))).status).to.equal(401);
    } finally {
      await t.close();
    }
  });

  it('refuses at start a manifest written for another host API, naming the plugin and both versions', async () => {
    const err = await startError({ ...GATEWAY_ENV, SERVICE_PLUGINS: entry('future.ts') });
    expect(err).to.be.instanceOf(PluginError);
    expect(err.message).to.equal(`PLUGIN_HOST_VERSION: plugin gateway was written for host API ^2; this service offers host API ${HOST_API_VERSION}`);
  });

  it('stops the start on an unknown setting under its prefix, on a missing or malformed one, and beside pre-authentication', async () => {
    const unknown = await startError({ ...GATEWAY_ENV, SERVICE_GATEWAY_SECERT: 'typo' });
    expect(unknown).to.be.instanceOf(ConfigError);
    expect((unknown as ConfigError).setting).to.equal('SERVICE_GATEWAY_SECERT');
    expect(unknown.message).to.match(/is not a setting of plugin gateway/);
    const missing = await startError({ SERVICE_PLUGINS: entry(), SERVICE_GATEWAY_AUTHENTICATION: 'true' });
    expect(missing.message).to.equal('SERVICE_GATEWAY_SECRET: must be set (plugin gateway)');
    const short = await startError({ ...GATEWAY_ENV, SERVICE_GATEWAY_SECRET: rememberSecret('too-short', 'short secret') });
    expect(short.message).to.equal('SERVICE_GATEWAY_SECRET: must be a shared secret of at least 16 characters (plugin gateway)');
    const both = await startError({ ...GATEWAY_ENV, SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_REMOTE_USER_ID: 'X-User' });
    expect(both.message).to.equal('SERVICE_GATEWAY_AUTHENTICATION: cannot be combined with SERVICE_PRE_AUTHENTICATION: both trust a header naming the user; put one proxy in front of the service');
  });

  it('stops the start, naming the entry, when SERVICE_PLUGINS names something that is not a plugin', async () => {
    const absent = await startError({ SERVICE_PLUGINS: './no/such/plugin.ts' });
    expect((absent as ConfigError).setting).to.equal('SERVICE_PLUGINS');
    expect(absent.message).to.match(/^SERVICE_PLUGINS: cannot load \.\/no\/such\/plugin\.ts: /);
    const notAPlugin = await startError({ SERVICE_PLUGINS: `${entry()};./test/helpers/secrets.ts` });
    expect(notAPlugin.message).to.equal('SERVICE_PLUGINS: ./test/helpers/secrets.ts exports no plugin manifest (an export named manifest, or the default export, with a name and a register function)');
    const twice = await startError({ ...GATEWAY_ENV, SERVICE_PLUGINS: `${entry()};${entry('index.ts')}` });
    expect(twice.message).to.match(/plugin gateway is registered twice|sign-in method gateway is declared twice/);
  });
});

/** `npm start`'s program in a process of its own: the plugin loads as an operator's installation loads it. */
describe('a plugin from outside the repository, in the service\'s own process (runtime/main.ts)', function () {
  this.timeout(180_000);
  before(installPeer);

  async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('signs in through the plugin', async () => {
    const port = await freePort();
    const main = await startMain([], port, { env: GATEWAY_ENV });
    try {
      const url = `http://127.0.0.1:${port}/api/admin/databases`;
      expect((await fetch(url, { headers: { 'x-gateway-user': 'admin', 'x-gateway-secret': SECRET } })).status).to.equal(200);
      expect((await fetch(url, { headers: { 'x-gateway-user': 'admin', 'x-gateway-secret': 'not-the-secret-at-all' } })).status).to.equal(401);
      expect(main.output()).to.not.contain(SECRET);
    } finally {
      main.child.kill('SIGTERM');
      await main.exited;
    }
  });

  it('refuses at start, exiting non-zero with a message, a plugin written for another host API', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...storageEnv(), PORT: String(await freePort()), ...GATEWAY_ENV, SERVICE_PLUGINS: entry('future.ts') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).to.equal(1);
    expect(output).to.contain(`plugin error: PLUGIN_HOST_VERSION: plugin gateway was written for host API ^2; this service offers host API ${HOST_API_VERSION}`);
    expect(output).to.not.contain(SECRET);
  });
});
