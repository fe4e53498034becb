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
 * forgotten after each. With TIMING_OUT set, each spec file's time is
 * appended there as a JSON line (in either mode), so that the test command
 * can show where a suite spends its time: from the end of the previous
 * file's last test (or the start) to the end of its own last test, its
 * `before` hooks included (and the previous file's `after` hooks).
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import pg from 'pg';
import { logLines } from './service.ts';
import { registeredSecretCount, secretsIn } from './secrets.ts';
import { afterBrowserTest, closeBrowser } from './browser.ts';

let created: { admin: string; name: string } | undefined;

/** The spec file whose tests run, since when (the end of the previous file's last test), and the end of its last test so far. */
const timing = { file: undefined as string | undefined, since: 0, last: 0 };

function fileDone(until: number) {
  if (!process.env.TIMING_OUT || !timing.file) return;
  appendFileSync(process.env.TIMING_OUT, `${JSON.stringify({ file: relative(process.cwd(), timing.file), ms: until - timing.since })}\n`);
}

export const mochaHooks = {
  async beforeAll() {
    Object.assign(timing, { file: undefined, since: Date.now(), last: Date.now() });
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
    const file = this.currentTest?.file;
    if (file !== timing.file) {
      fileDone(timing.last);
      Object.assign(timing, { file, since: timing.last });
    }
    timing.last = Date.now();
  },
  async afterAll(this: Mocha.Context) {
    await closeBrowser();
    fileDone(Date.now());
    timing.file = undefined;
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
