/**
 * A private OpenLDAP slapd for the directory sign-in tests: generated
 * slapd.conf (mdb backend, the core/cosine/inetorgperson/nis schemas) in a
 * temporary folder, listening on a free loopback port, with a root DN for
 * loading entries and a separate search user that may read people but not
 * their passwords. slapd logs every operation (`-d stats`), so a test can
 * see which binds reached it. It can be stopped and started again on the
 * same port with the same entries, for outage tests.
 *
 * slapd and ldap-utils come from the distribution: `scripts/ensure-slapd.sh`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Filter } from 'ldapts';
import { freePort } from './ports.ts';

const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIR = '/usr/lib/ldap';

export interface Operation {
  /** The connection, as `<start>/<number>`: slapd counts connections anew after every start. */
  conn: string;
  op: number;
  kind: 'BIND' | 'SRCH';
  /** The bind DN, or the search base. */
  dn: string;
  filter?: string;
}

export interface Person {
  uid: string;
  password: string;
  cn: string;
  sn: string;
  givenName?: string;
  /** Multi-valued: `businessCategory`. */
  groups?: string[];
  /** `departmentNumber`. */
  tenantId?: string;
  /** `o`. */
  tenantName?: string;
  /** The organizational unit below the suffix that holds the entry. */
  ou?: string;
  /** Stored as `{SSHA}` (default) or as plain text, which slapd also checks binds against. */
  passwordScheme?: 'ssha' | 'plain';
}

/** The attributes the test people carry, as the plugin's settings name them. */
export const PERSON_ATTRIBUTES = {
  SERVICE_JNDI_GROUP_ID: 'businessCategory',
  SERVICE_JNDI_TENANT_ID: 'departmentNumber',
  SERVICE_JNDI_COMMON_NAME: 'cn',
  SERVICE_JNDI_FAMILY_NAME: 'sn',
  SERVICE_JNDI_GIVEN_NAME: 'givenName',
  SERVICE_JNDI_TENANT_NAME: 'o',
};

/** `{SSHA}` as slappasswd makes it: SHA-1 over password and salt, then the salt. */
export function sshaPassword(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash('sha1').update(Buffer.from(password, 'utf8')).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`;
}

/** An attribute value inside a DN (RFC 4514). */
export function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/\u0000/g, '\\00')
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ');
}

function slapdBinary(): string {
  for (const candidate of ['/usr/sbin/slapd', '/usr/local/sbin/slapd', '/usr/local/libexec/slapd']) if (existsSync(candidate)) return candidate;
  const which = spawnSync('sh', ['-c', 'command -v slapd'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  throw new Error('slapd is not installed: run scripts/ensure-slapd.sh');
}

const STARTED = '--- slapd started ---';
const running = new Set<ChildProcess>();
const folders = new Set<string>();
// mocha --exit (or a crash) ends the process without after hooks having run: no slapd and no folder outlives it.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

export class Slapd {
  readonly suffix = 'dc=example,dc=org';
  readonly rootDn = 'cn=root,dc=example,dc=org';
  readonly rootPassword = randomBytes(12).toString('hex');
  readonly searchDn = 'cn=search,ou=services,dc=example,dc=org';
  readonly searchPassword = `search-${randomBytes(9).toString('base64url')}`;
  readonly peopleBase = 'ou=people,dc=example,dc=org';
  /** Every line slapd logged since it was first started. */
  readonly log: string[] = [];
  private child?: ChildProcess;
  // Connections of the helper itself (settle markers): not what a test looks at.
  private readonly ignoredConns = new Set<string>();
  private exited?: Promise<void>;

  private constructor(readonly dir: string, readonly port: number, private readonly binary: string) {}

  get url(): string {
    return `ldap://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return !!this.child;
  }

  /** A fresh directory with the suffix, `ou=people`, `ou=services` and the search user. */
  static async start(): Promise<Slapd> {
    const binary = slapdBinary();
    const dir = await mkdtemp(join(tmpdir(), 'slapd-'));
    folders.add(dir);
    const slapd = new Slapd(dir, await freePort(), binary);
    try {
      await mkdir(join(dir, 'data'));
      await writeFile(join(dir, 'slapd.conf'), slapd.config());
      await slapd.resume();
      await slapd.seed();
      return slapd;
    } catch (err) {
      await slapd.close();
      throw err;
    }
  }

  /** The DN an entry of this person has. */
  dnOf(person: Pick<Person, 'uid' | 'ou'>): string {
    return `uid=${escapeDnValue(person.uid)},ou=${escapeDnValue(person.ou ?? 'people')},${this.suffix}`;
  }

  async addPerson(person: Person): Promise<string> {
    const dn = this.dnOf(person);
    const attributes: Record<string, string | string[]> = {
      objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson'],
      uid: person.uid,
      cn: person.cn,
      sn: person.sn,
      userPassword: person.passwordScheme === 'plain' ? person.password : sshaPassword(person.password),
    };
    if (person.givenName) attributes.givenName = person.givenName;
    if (person.groups?.length) attributes.businessCategory = person.groups;
    if (person.tenantId) attributes.departmentNumber = person.tenantId;
    if (person.tenantName) attributes.o = person.tenantName;
    await this.asRoot(async (client) => {
      if (person.ou && person.ou !== 'people') await this.ensureUnit(client, person.ou);
      await client.add(dn, attributes);
    });
    return dn;
  }

  /** Runs `work` on a connection bound as the root DN. */
  async asRoot<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ url: this.url, timeout: 5_000, connectTimeout: 5_000 });
    try {
      await client.bind(this.rootDn, this.rootPassword);
      return await work(client);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  /**
   * The binds and searches slapd logged, in order. Call `settle()` first:
   * slapd's log reaches this process a little after its answers do.
   */
  operations(): Operation[] {
    let start = 0;
    return this.log.flatMap((line): Operation[] => {
      if (line === STARTED) start++;
      const number = / conn=(\d+) /.exec(line)?.[1];
      if (number === undefined) return [];
      const conn = `${start}/${number}`;
      if (this.ignoredConns.has(conn)) return [];
      const bind = / op=(\d+) BIND dn="([^"]*)" method=128/.exec(line);
      if (bind) return [{ conn, op: Number(bind[1]), kind: 'BIND', dn: bind[2] }];
      const search = / op=(\d+) SRCH base="([^"]*)" .*filter="([^"]*)"/.exec(line);
      if (search) return [{ conn, op: Number(search[1]), kind: 'SRCH', dn: search[2], filter: search[3] }];
      return [];
    });
  }

  /** The DNs of the simple binds slapd answered (successful or not), in order. */
  binds(): string[] {
    return this.operations().filter((o) => o.kind === 'BIND').map((o) => o.dn);
  }

  /** Waits until slapd's log holds everything it did so far: a marked search of its own has arrived. */
  async settle(): Promise<void> {
    const marker = `settle-${randomBytes(6).toString('hex')}`;
    await this.asRoot((client) => client.search(this.suffix, { scope: 'base', filter: `(cn=${marker})`, attributes: ['1.1'] }));
    const deadline = Date.now() + 5_000;
    while (!this.log.some((line) => line.includes(marker))) {
      if (Date.now() > deadline) throw new Error('slapd\'s log does not catch up');
      await new Promise((r) => setTimeout(r, 10));
    }
    // The marker's own bind and search are not the test's.
    const starts = this.log.filter((line) => line === STARTED).length;
    const number = / conn=(\d+) /.exec(this.log.find((line) => line.includes(marker))!)?.[1];
    this.ignoredConns.add(`${starts}/${number}`);
  }

  /** Stops slapd; its entries stay for `resume()`. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    const stopped = await Promise.race([this.exited!.then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
    if (!stopped) {
      child.kill('SIGKILL');
      await this.exited;
    }
  }

  /** Starts slapd (again) on the same port and waits until it answers. */
  async resume(): Promise<void> {
    if (this.child) return;
    const child = spawn(this.binary, ['-f', join(this.dir, 'slapd.conf'), '-h', `${this.url}/`, '-d', 'stats'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    this.log.push(STARTED);
    // Whole lines only: a chunk may end in the middle of one.
    const collector = () => {
      let rest = '';
      return (chunk: Buffer) => {
        const lines = (rest + String(chunk)).split('\n');
        rest = lines.pop() ?? '';
        this.log.push(...lines.filter(Boolean));
      };
    };
    child.stdout!.on('data', collector());
    child.stderr!.on('data', collector());
    child.once('error', (err) => this.log.push(`slapd could not be run: ${err.message}`));
    this.exited = new Promise((resolve) => {
      child.once('close', () => {
        running.delete(child);
        if (this.child === child) this.child = undefined;
        resolve();
      });
    });
    await this.waitUntilAnswering();
  }

  /** Stops slapd and removes its folder. */
  async close(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
    folders.delete(this.dir);
  }

  private async waitUntilAnswering(): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (!this.child) throw new Error(`slapd exited at start:\n${this.log.slice(-20).join('\n')}`);
      try {
        await this.asRoot(async () => undefined);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`slapd does not answer on ${this.url}: ${(err as Error).message}\n${this.log.slice(-20).join('\n')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private async seed(): Promise<void> {
    await this.asRoot(async (client) => {
      await client.add(this.suffix, { objectClass: ['top', 'dcObject', 'organization'], dc: 'example', o: 'Example' });
      await this.ensureUnit(client, 'people');
      await this.ensureUnit(client, 'services');
      await client.add(this.searchDn, {
        objectClass: ['top', 'person'], cn: 'search', sn: 'search', userPassword: sshaPassword(this.searchPassword),
      });
    });
  }

  private async ensureUnit(client: Client, ou: string): Promise<void> {
    const dn = `ou=${escapeDnValue(ou)},${this.suffix}`;
    const found = await client.search(this.suffix, { scope: 'one', filter: `(ou=${Filter.escape(ou)})`, attributes: ['1.1'] });
    if (!found.searchEntries.some((e) => e.dn.toLowerCase() === dn.toLowerCase())) {
      await client.add(dn, { objectClass: ['top', 'organizationalUnit'], ou });
    }
  }

  private config(): string {
    return [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((schema) => `include ${SCHEMA_DIR}/${schema}.schema`),
      `modulepath ${MODULE_DIR}`,
      'moduleload back_mdb',
      `pidfile ${join(this.dir, 'slapd.pid')}`,
      `argsfile ${join(this.dir, 'slapd.args')}`,
      '',
      'database mdb',
      'maxsize 67108864',
      `suffix "${this.suffix}"`,
      `rootdn "${this.rootDn}"`,
      `rootpw ${this.rootPassword}`,
      `directory ${join(this.dir, 'data')}`,
      '',
      // Passwords: anyone may bind with them, nobody (not even the search user) may read them.
      'access to attrs=userPassword',
      '  by anonymous auth',
      '  by * none',
      // Everything else: the search user reads, people read themselves, anonymous sees nothing.
      'access to *',
      `  by dn.exact="${this.searchDn}" read`,
      '  by self read',
      '  by * none',
      '',
    ].join('\n');
  }
}
