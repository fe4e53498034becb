/**
 * Mocha root hooks: on PostgreSQL, each run gets a database of its own on
 * the server named by TEST_DATABASE_URL, dropped at the end.
 */
import pg from 'pg';

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
  async afterAll() {
    if (!created) return;
    const client = new pg.Client({ connectionString: created.admin });
    await client.connect();
    await client.query(`drop database if exists ${created.name} with (force)`);
    await client.end();
  },
};
