/**
 * Mocha root hooks: on PostgreSQL, each run gets a database of its own on
 * the server named by TEST_DATABASE_URL, dropped at the end. After the
 * whole run, no secret any test used may stand in any log line of any test
 * service (test/helpers/secrets.ts). The browser tests' pages are checked
 * after each test and their browser closed after the run
 * (test/helpers/browser.ts).
 */
import pg from 'pg';
import { logLines } from './service.ts';
import { registeredSecretCount, secretsIn } from './secrets.ts';
import { afterBrowserTest, closeBrowser } from './browser.ts';

let created: { admin: string; name: string } | undefined;

export const mochaHooks = {
  async beforeAll() {
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
  async afterAll() {
    await closeBrowser();
    try {
      if (created) {
        const client = new pg.Client({ connectionString: created.admin });
        await client.connect();
        await client.query(`drop database if exists ${created.name} with (force)`);
        await client.end();
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
