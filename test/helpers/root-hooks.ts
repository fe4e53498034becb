/**
 * Mocha root hooks: on PostgreSQL, each run gets a database of its own on
 * the server named by TEST_DATABASE_URL, dropped at the end. After the
 * whole run, no secret any test used may stand in any log line of any test
 * service (test/helpers/secrets.ts). The browser tests' pages are checked
 * after each test and their browser closed after the run
 * (test/helpers/browser.ts).
 *
 * In mocha's parallel mode (scripts/test.sh) these hooks run around each spec
 * file in a worker that goes on to other files: the database is dropped and
 * forgotten after each, and with TIMING_OUT set the file's time is appended
 * there as a JSON line, so that the test command can show where a suite
 * spends its time.
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import pg from 'pg';
import { logLines } from './service.ts';
import { registeredSecretCount, secretsIn } from './secrets.ts';
import { afterBrowserTest, closeBrowser } from './browser.ts';

let created: { admin: string; name: string } | undefined;
let startedAt = 0;

/** The one spec file a root suite runs (parallel mode), or undefined when it runs several. */
function soleFile(root: Mocha.Suite | undefined): string | undefined {
  const files = new Set((root?.suites ?? []).map((s) => s.file).filter((f): f is string => !!f));
  return files.size === 1 ? [...files][0] : undefined;
}

export const mochaHooks = {
  async beforeAll() {
    startedAt = Date.now();
    const admin = process.env.TEST_DATABASE_URL;
    if (!admin || process.env.SERVICE_TEST_DATABASE_URL) return;
    const name = `mms_test_${process.pid}_${Date.now()}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`create database ${name}`);
    await client.end();
    const url = new URL(admin);
    url.pathname = `/${name}`;
    process.env.SERVICE_TEST_DATABASE_URL = url.toString();
    created = { admin, name };
  },
  async afterEach(this: Mocha.Context) {
    await afterBrowserTest(this.currentTest);
  },
  async afterAll(this: Mocha.Context) {
    await closeBrowser();
    const file = soleFile(this.test?.parent);
    if (process.env.TIMING_OUT && file) {
      appendFileSync(process.env.TIMING_OUT, `${JSON.stringify({ file: relative(process.cwd(), file), ms: Date.now() - startedAt })}\n`);
    }
    try {
      if (created) {
        const client = new pg.Client({ connectionString: created.admin });
        await client.connect();
        await client.query(`drop database if exists ${created.name} with (force)`);
        await client.end();
        delete process.env.SERVICE_TEST_DATABASE_URL;
        created = undefined;
      }
    } finally {
      const leaked = secretsIn(logLines);
      if (leaked.length) {
        throw new Error(`${leaked.length} of ${registeredSecretCount()} secrets used by the suite stand in the logs:\n${
          leaked.map((l) => `- ${l.kind} ${JSON.stringify(l.value)} in ${l.line.slice(0, 300)}`).join('\n')}`);
      }
      console.log(`  log check: none of the ${registeredSecretCount()} secrets the suite used is in its ${logLines.length} log lines`);
    }
  },
};
