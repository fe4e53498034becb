/**
 * The command-line tool (client/cli.ts, decisions §8) against the service on
 * a real port: a download and an upload (dry run, change report, a failed
 * job's logs), a query run as a job and streamed to a file (the same bytes as
 * the synchronous call), progress lines on a stream that is not a terminal,
 * the list, logs and result of jobs, a failed job's messages and exit code, a
 * refused statement, credentials from the environment (password or access
 * key), and the package's `bin` run as a process of its own.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { EXIT, run } from '../../client/cli.ts';
import { rememberSecret } from '../helpers/secrets.ts';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createUser, secret } from '../auth/fixtures.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs the tool in this process with captured output. */
async function cli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (b: Buffer) => out.push(b));
  stderr.on('data', (b: Buffer) => err.push(b));
  const code = await run(args, { env, stdout, stderr, pollMs: 20 });
  return { code, out: Buffer.concat(out).toString('utf8'), err: Buffer.concat(err).toString('utf8') };
}

describe('command-line tool', function () {
  this.timeout(120_000);
  let t: TestService;
  let db: string;
  let env: Record<string, string>;
  let dir: string;

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    env = { SERVICE_URL: t.url, SERVICE_DB: db, SERVICE_LOGIN_ID: ADMIN.loginId, SERVICE_PASSWORD: ADMIN.password };
    for (const label of ['Orders', 'Billing', 'Zölle, "Gebühren"']) {
      const r = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label } });
      expect(r.status, await r.text()).to.equal(201);
    }
    dir = mkdtempSync(join(tmpdir(), 'cli-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t?.close();
  });

  const SQL = 'select label, _type from scheme_view order by label';

  it('runs a query as a job and writes the same bytes as the synchronous call, with progress lines on stderr', async () => {
    const file = join(dir, 'schemes.csv');
    const r = await cli(['query', SQL, '--out', file], env);
    expect(r.code, r.err).to.equal(EXIT.ok);
    expect(r.err).to.match(/^job [0-9a-f-]{36} started$/m);
    expect(r.err).to.match(/: COMPLETED, 3 rows$/m);
    const sync = await t.request(`/api/${db}/queries/download?format=CSV`, { method: 'PUT', json: { sql: SQL } });
    expect(readFileSync(file)).to.deep.equal(Buffer.from(await sync.arrayBuffer()));
    expect(readFileSync(file, 'utf8')).to.contain('"Zölle, ""Gebühren"""');
  });

  it('streams JSON to stdout, reads the statement from a file, and reads as of a time', async () => {
    const before = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Later' } });
    const r = await cli(['query', SQL.replace('scheme_view', 'scheme_version_view'), '--format', 'JSON', '--as-of', new Date(before).toISOString()], env);
    expect(r.code, r.err).to.equal(EXIT.ok);
    expect(JSON.parse(r.out).map((x: { label: string }) => x.label)).to.deep.equal(['Billing', 'Orders', 'Zölle, "Gebühren"']);
    const now = await cli(['query', 'ignored', '--file', join(root, 'test/fixtures/cli-query.sql'), '--format', 'JSON'], env);
    expect(now.code, now.err).to.equal(EXIT.ok);
    expect(JSON.parse(now.out)).to.deep.equal([{ n: 4 }]);
  });

  it('lists the caller\'s jobs, prints logs, and downloads a result again', async () => {
    const list = await cli(['jobs', 'list'], env);
    expect(list.code, list.err).to.equal(EXIT.ok);
    const lines = list.out.trim().split('\n');
    expect(lines.length).to.be.at.least(3);
    expect(lines[0]).to.match(/^[0-9a-f-]{36} {2}COMPLETED/);
    const id = lines[lines.length - 1].slice(0, 36);
    const logs = await cli(['jobs', 'logs', id], env);
    expect(logs.code, logs.err).to.equal(EXIT.ok);
    const again = await cli(['jobs', 'download', id], env);
    expect(again.code, again.err).to.equal(EXIT.ok);
    expect(again.out).to.match(/^label,_type\r?\n/);
    const watched = await cli(['jobs', 'watch', id], env);
    expect(watched.code).to.equal(EXIT.ok);
    expect(watched.err).to.contain(`job ${id} COMPLETED`);
  });

  it('prints a failed job\'s cause and exits 1; a refused statement exits 2 with the service\'s message', async () => {
    const failed = await cli(['query', 'select 1 / (count(*) - count(*)) from scheme_view'], env);
    expect(failed.code).to.equal(EXIT.failed);
    expect(failed.err).to.match(/FAILED/);
    expect(failed.err).to.match(/division by zero/);
    const dropped = await cli(['query', 'drop table scheme_view'], env);
    expect(dropped.code).to.equal(EXIT.failed);
    expect(dropped.err).to.match(/FAILED/);
    const refused = await cli(['query', SQL, '--statement-timeout', 'soon'], env);
    expect(refused.code).to.equal(EXIT.refused);
    expect(refused.err).to.match(/^refused \(400\): .*\n {2}statementTimeout: /);
  });

  it('takes an access key instead of a password, and refuses to run without credentials or with a wrong one', async () => {
    const admin = { loginId: 'cli-admin', password: secret('cli-Passwort-1') };
    const user = await createUser(t, db, { ...admin, accessLevel: 'ADMINISTRATOR' });
    const r = await t.request(`/rest/${db}/users/${user.id}/accessKeys`, { method: 'POST', json: { description: 'cli' } });
    const key = (await r.json()).key as string;
    rememberSecret(key);
    const keyed = await cli(['query', 'select count(*) as n from scheme_view', '--format', 'JSON'], { SERVICE_URL: t.url, SERVICE_DB: db, SERVICE_ACCESS_KEY: key });
    expect(keyed.code, keyed.err).to.equal(EXIT.ok);
    expect(JSON.parse(keyed.out)).to.deep.equal([{ n: 4 }]);
    const none = await cli(['jobs', 'list'], { SERVICE_URL: t.url, SERVICE_DB: db });
    expect(none.code).to.equal(EXIT.usage);
    expect(none.err).to.contain('SERVICE_ACCESS_KEY');
    const noPassword = await cli(['jobs', 'list'], { SERVICE_URL: t.url, SERVICE_DB: db, SERVICE_LOGIN_ID: 'x' });
    expect(noPassword.code).to.equal(EXIT.usage);
    const wrong = await cli(['jobs', 'list'], { ...env, SERVICE_PASSWORD: 'not-the-password' });
    expect(wrong.code).to.equal(EXIT.refused);
    expect(wrong.err).to.match(/^refused \(401\)/);
    expect(wrong.err).to.not.contain('not-the-password');
  });

  it('downloads a scheme to a file, uploads it into another database (a dry run first), and prints the change report', async () => {
    await t.request(`/rest/${db}/schemes/Orders/classifiers`, { method: 'POST', json: { _type: 'Classifier', label: 'Customer', description: 'Wer bestellt' } });
    const file = join(dir, 'Orders.yaml');
    const down = await cli(['download', '--scheme', 'Orders', '--out', file], env);
    expect(down.code, down.err).to.equal(EXIT.ok);
    const sync = await t.request(`/api/${db}/schemes/Orders/download?format=YAML`);
    expect(readFileSync(file, 'utf8')).to.equal(await sync.text());
    const other = await createDatabase(t);
    const otherEnv = { ...env, SERVICE_DB: other };
    const dry = await cli(['upload', file, '--scheme', 'Orders', '--dry-run'], otherEnv);
    expect(dry.code, dry.err).to.equal(EXIT.ok);
    expect(dry.err).to.match(/COMPLETED \(dry run: nothing written\): 2 read, 2 created, 0 updated/);
    expect(JSON.parse(dry.out)).to.include({ dryRun: true });
    expect((await t.request(`/rest/${other}/schemes/Orders`)).status).to.equal(404);
    const real = await cli(['upload', file, '--scheme', 'Orders'], otherEnv);
    expect(real.code, real.err).to.equal(EXIT.ok);
    expect(real.err).to.match(/: COMPLETED, 2 of 2 objects$/m);
    expect(JSON.parse(real.out).created).to.have.length(2);
    const again = await cli(['download', '--scheme', 'Orders', '--format', 'YAML'], otherEnv);
    expect(again.out).to.equal(readFileSync(file, 'utf8'));
  });

  it('prints a failed upload\'s logs with the object and its line, and exits 1; nothing is written', async () => {
    const file = join(dir, 'Broken.json');
    writeFileSync(file, JSON.stringify({ _type: 'Scheme', label: 'Broken', classifiers: [{ _type: 'Classifier', label: 'A', status: 'NOT_A_STATUS' }] }, null, 2));
    const r = await cli(['upload', file, '--scheme', 'Broken'], env);
    expect(r.code).to.equal(EXIT.failed);
    expect(r.err).to.match(/job [0-9a-f-]{36} FAILED/);
    expect(r.err).to.match(/ERROR: Refused: A \(line 5, column 5\), status: /);
    expect(r.err).not.to.contain('[object Object]');
    expect((await t.request(`/rest/${db}/schemes/Broken`)).status).to.equal(404);
    const usage = await cli(['upload', file], env);
    expect(usage.code).to.equal(EXIT.usage);
  });

  it('runs as the package\'s bin, a process of its own', async () => {
    const bin = join(root, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).bin['metadata-service']);
    const file = join(dir, 'bin.csv');
    const { stdout, stderr } = await promisify(execFile)(bin, ['query', SQL, '--out', file], { env: { ...process.env, ...env }, cwd: tmpdir() });
    expect(stdout).to.equal('');
    expect(stderr).to.match(/COMPLETED/);
    expect(readFileSync(file, 'utf8').split(/\r?\n/)[0]).to.equal('label,_type');
    const failed = await promisify(execFile)(bin, ['query', 'drop table x'], { env: { ...process.env, ...env } }).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(failed?.code).to.equal(EXIT.failed);
    expect(failed?.stderr).to.match(/FAILED/);
  });
});
