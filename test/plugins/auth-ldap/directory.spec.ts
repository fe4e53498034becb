/**
 * The directory lookup and the sign-in driver against a real slapd: what is
 * searched and bound, on which connection, and what comes back. What slapd
 * did is read from its own log.
 */
import { expect } from 'chai';
import { createServer, type Server, type Socket } from 'node:net';
import type { Context } from 'koa';
import { CredentialCache } from '../../../runtime/auth/credential-cache.ts';
import { SignInThrottle } from '../../../runtime/auth/throttle.ts';
import { DirectoryDriver, manifest } from '../../../plugins/auth-ldap/index.ts';
import { DirectoryUnavailable, LdapDirectory } from '../../../plugins/auth-ldap/ldap-directory.ts';
import { parseDirectorySettings } from '../../../plugins/auth-ldap/settings.ts';
import type { AuthResult, ExternalIdentity } from '../../../runtime/auth/types.ts';
import { ServiceError } from '../../../runtime/errors.ts';
import { checkPluginConfig } from '../../../runtime/plugins.ts';
import type { Slapd } from '../../helpers/slapd.ts';
import { basic } from '../../helpers/service.ts';
import { directoryEnv, PEOPLE, startDirectory } from './people.ts';

type LogLine = { level: 'error' | 'info'; msg: string } & Record<string, unknown>;

function recorder() {
  const lines: LogLine[] = [];
  return {
    lines,
    error: (o: object, msg: string) => lines.push({ level: 'error', msg, ...o }),
    info: (o: object, msg: string) => lines.push({ level: 'info', msg, ...o }),
  };
}

async function rejection(attempt: Promise<unknown>): Promise<unknown> {
  try {
    await attempt;
  } catch (err) {
    return err;
  }
  expect.fail('it did not fail');
}

describe('auth-ldap against slapd', () => {
  let slapd: Slapd;
  const opened: LdapDirectory[] = [];

  before(async () => {
    slapd = await startDirectory();
  });
  after(async () => {
    await slapd?.close();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((d) => d.close()));
    // An outage test leaves slapd stopped when it fails halfway.
    await slapd.resume();
  });

  function directory(extra: Record<string, string> = {}) {
    const log = recorder();
    const d = new LdapDirectory(parseDirectorySettings(checkPluginConfig(manifest, directoryEnv(slapd, extra))), log);
    opened.push(d);
    return { directory: d, log };
  }

  /** A bind as a person's entry: not the search user's, not the stand-in bind of a login ID nobody has (a random cn). */
  const DECOY = /^cn=[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12},/;
  const personBinds = (ops: { kind: string; dn: string }[]) => ops.filter((o) => o.kind === 'BIND' && o.dn !== slapd.searchDn && !DECOY.test(o.dn));

  /** slapd's binds and searches from now on. */
  async function watch() {
    await slapd.settle();
    const before = slapd.operations().length;
    return async () => {
      await slapd.settle();
      return slapd.operations().slice(before);
    };
  }

  describe('the lookup', () => {
    it('finds the person, checks the password and maps the attributes', async () => {
      const { directory: d } = directory();
      const { alice, dora } = PEOPLE;
      expect(await d.verify(alice.uid, alice.password)).to.deep.equal({
        loginId: 'alice', groups: ['analysts', 'editors'], tenantId: 'T-4711', commonName: 'Alice Liddell', familyName: 'Liddell', givenName: 'Alice',
      });
      expect(await d.verify(dora.uid, dora.password)).to.deep.equal({
        loginId: 'dora', groups: [], commonName: 'Dora Explorer', familyName: 'Explorer', tenantName: 'Research',
      });
    });

    it('searches as the search user, then binds as the entry found, on a connection of its own', async () => {
      const { directory: d } = directory();
      const done = await watch();
      await d.verify(PEOPLE.alice.uid, PEOPLE.alice.password);
      const ops = await done();
      expect(ops.map((o) => [o.kind, o.dn])).to.deep.equal([
        ['BIND', slapd.searchDn],
        ['SRCH', slapd.suffix],
        ['BIND', slapd.dnOf(PEOPLE.alice)],
      ]);
      expect(ops[1].filter).to.equal('(uid=alice)');
      expect(ops[0].conn).to.equal(ops[1].conn);
      expect(ops[2].conn).not.to.equal(ops[1].conn);
    });

    it('keeps the search user bound: later sign-ins cost a search and a bind', async () => {
      const { directory: d } = directory();
      await d.verify(PEOPLE.alice.uid, PEOPLE.alice.password);
      const done = await watch();
      for (let i = 0; i < 5; i++) expect(await d.verify(PEOPLE.bob.uid, PEOPLE.bob.password)).not.to.equal(null);
      const ops = await done();
      expect(ops.filter((o) => o.dn === slapd.searchDn)).to.have.length(0);
      expect(ops.filter((o) => o.kind === 'SRCH')).to.have.length(5);
      const userBinds = ops.filter((o) => o.kind === 'BIND');
      expect(userBinds.map((o) => o.dn)).to.deep.equal(Array(5).fill(slapd.dnOf(PEOPLE.bob)));
      // Every person's bind on a new connection, never on the search user's.
      expect(new Set(userBinds.map((o) => o.conn)).size).to.equal(5);
      expect(userBinds.every((o) => o.op === 0)).to.equal(true);
    });

    it('shares the search connection between sign-ins at the same moment', async () => {
      const { directory: d } = directory();
      const done = await watch();
      const people = [PEOPLE.alice, PEOPLE.bob, PEOPLE.dora, PEOPLE.plain, PEOPLE.juergen];
      const results = await Promise.all(people.map((p) => d.verify(p.uid, p.password)));
      expect(results.every((r) => r !== null)).to.equal(true);
      const ops = await done();
      expect(ops.filter((o) => o.kind === 'BIND' && o.dn === slapd.searchDn)).to.have.length(1);
      expect(new Set(ops.filter((o) => o.kind === 'SRCH').map((o) => o.conn)).size).to.equal(1);
    });

    it('says null for a wrong password, an unknown login ID, and a login ID two entries share', async () => {
      const { directory: d } = directory();
      expect(await d.verify(PEOPLE.alice.uid, 'not-alices-password')).to.equal(null);
      expect(await d.verify('nobody', PEOPLE.alice.password)).to.equal(null);
      expect(await d.verify(PEOPLE.twinPeople.uid, PEOPLE.twinPeople.password)).to.equal(null);
    });

    it('binds nobody for a login ID two entries share', async () => {
      const { directory: d } = directory();
      const done = await watch();
      await d.verify(PEOPLE.twinPeople.uid, PEOPLE.twinPeople.password);
      expect(personBinds(await done())).to.deep.equal([]);
    });

    it('costs the directory the same for an unknown login ID as for a wrong password: a search, then a bind on a connection of its own', async () => {
      const { directory: d } = directory();
      await d.verify(PEOPLE.alice.uid, 'warm-up-wrong');
      const shapes = [];
      for (const loginId of [PEOPLE.alice.uid, 'nobody-at-all']) {
        const done = await watch();
        expect(await d.verify(loginId, 'not-the-password')).to.equal(null);
        const ops = await done();
        shapes.push(ops.map((o) => `${o.kind}${o.kind === 'BIND' ? `@op${o.op}` : ''}`));
        const bind = ops.find((o) => o.kind === 'BIND')!;
        expect(bind.conn, loginId).not.to.equal(ops.find((o) => o.kind === 'SRCH')!.conn);
        // The unknown ID's bind names no entry: a random name under the context that cannot exist.
        if (loginId !== PEOPLE.alice.uid) expect(bind.dn).to.match(DECOY);
      }
      expect(shapes[1]).to.deep.equal(shapes[0]);
      expect(shapes[0]).to.deep.equal(['SRCH', 'BIND@op0']);
    });

    it('checks plain-text and salted-hash passwords alike (the directory does)', async () => {
      const { directory: d } = directory();
      expect(await d.verify(PEOPLE.plain.uid, PEOPLE.plain.password)).to.include({ loginId: 'eve' });
      expect(await d.verify(PEOPLE.plain.uid, `${PEOPLE.plain.password}x`)).to.equal(null);
    });

    for (const p of [PEOPLE.juergen, PEOPLE.parens, PEOPLE.star, PEOPLE.backslash]) {
      it(`signs in ${JSON.stringify(p.uid)}, whose login ID holds special characters`, async () => {
        const { directory: d } = directory();
        expect(await d.verify(p.uid, p.password)).to.include({ loginId: p.uid, commonName: p.cn });
      });
    }

    const nearMisses: [string, string][] = [
      ['jürgen*', PEOPLE.juergen.password],
      ['jürgen.m*', PEOPLE.juergen.password],
      ['r2(d2', PEOPLE.parens.password],
      ['r2*', PEOPLE.parens.password],
      ['star', PEOPLE.star.password],
      ['st*', PEOPLE.star.password],
      ['dom\\', PEOPLE.backslash.password],
      ['dom\\5cuser', PEOPLE.backslash.password],
    ];
    for (const [loginId, password] of nearMisses) {
      it(`does not take ${JSON.stringify(loginId)} for a pattern`, async () => {
        const { directory: d } = directory();
        expect(await d.verify(loginId, password)).to.equal(null);
      });
    }

    /** Each would find exactly one person if it reached the filter unescaped. */
    const injections = ['ali*', '*lice', 'alic\\65', 'alice)(uid=alice', '*)(uid=alice', 'alice)(|(uid=*', '*', ')(uid=*', 'admin)(|(uid=*', '*)(|(objectClass=*', 'alice\u0000'];
    it('looks every injection attempt up as a literal login ID: nobody is found, nobody bound', async () => {
      const { directory: d } = directory();
      const done = await watch();
      for (const loginId of injections) {
        expect(await d.verify(loginId, PEOPLE.alice.password), loginId).to.equal(null);
      }
      const ops = await done();
      expect(personBinds(ops)).to.deep.equal([]);
      expect(ops.filter((o) => o.kind === 'SRCH').map((o) => o.filter)).to.include.members(['(uid=ali\\2A)', '(uid=alic\\5C65)', '(uid=\\2A)']);
    });

    it('works with a filter of the operator\'s choice, several {0} in it', async () => {
      const { directory: d } = directory({ SERVICE_JNDI_FILTER: '(&(objectClass=inetOrgPerson)(|(uid={0})(cn={0})))' });
      expect(await d.verify('Alice Liddell', PEOPLE.alice.password)).to.include({ loginId: 'Alice Liddell', givenName: 'Alice' });
      expect(await d.verify('alice', PEOPLE.alice.password)).to.include({ loginId: 'alice' });
      expect(await d.verify('*', PEOPLE.alice.password)).to.equal(null);
    });

    it('searches only the configured context', async () => {
      const { directory: d } = directory({ SERVICE_JNDI_CONTEXT: slapd.peopleBase });
      expect(await d.verify(PEOPLE.alice.uid, PEOPLE.alice.password)).not.to.equal(null);
      // Only one of the twins lives below ou=people: there, the login ID is no longer ambiguous.
      expect(await d.verify(PEOPLE.twinPeople.uid, PEOPLE.twinPeople.password)).to.include({ commonName: 'Twin One' });
      const { directory: contractors } = directory({ SERVICE_JNDI_CONTEXT: `ou=contractors,${slapd.suffix}` });
      expect(await contractors.verify(PEOPLE.alice.uid, PEOPLE.alice.password)).to.equal(null);
    });

    it('takes the search base from the URL, as JNDI does', async () => {
      const { directory: d } = directory({ SERVICE_JNDI_URL: `${slapd.url}/${encodeURIComponent(slapd.suffix)}`, SERVICE_JNDI_CONTEXT: 'ou=people' });
      const done = await watch();
      expect(await d.verify(PEOPLE.alice.uid, PEOPLE.alice.password)).not.to.equal(null);
      expect((await done()).find((o) => o.kind === 'SRCH')?.dn).to.equal(slapd.peopleBase);
    });
  });

  describe('when the directory fails', () => {
    it('says unavailable, not "wrong password", when the search user is refused; logs it without the password', async () => {
      const { directory: d, log } = directory({ SERVICE_JNDI_PASSWORD: 'not-the-search-password' });
      const err = await rejection(d.verify(PEOPLE.alice.uid, PEOPLE.alice.password));
      expect(err).to.be.instanceOf(DirectoryUnavailable);
      expect((err as DirectoryUnavailable).reason).to.equal('searchUserRejected');
      expect(log.lines).to.have.length(1);
      expect(log.lines[0]).to.include({ level: 'error', searchUser: slapd.searchDn });
      expect(JSON.stringify(log.lines)).not.to.include('not-the-search-password');
      expect(JSON.stringify(log.lines)).not.to.include(PEOPLE.alice.password);
    });

    it('logs a lasting outage once, not with every sign-in', async () => {
      const { directory: d, log } = directory({ SERVICE_JNDI_PASSWORD: 'not-the-search-password' });
      for (let i = 0; i < 5; i++) await rejection(d.verify(PEOPLE.alice.uid, PEOPLE.alice.password));
      expect(log.lines.filter((l) => l.level === 'error')).to.have.length(1);
    });

    it('says unavailable when slapd is down, and signs in again when it is back, on the same directory object', async () => {
      const { directory: d, log } = directory();
      expect(await d.verify(PEOPLE.alice.uid, PEOPLE.alice.password)).not.to.equal(null);
      await slapd.stop();
      const err = await rejection(d.verify(PEOPLE.bob.uid, PEOPLE.bob.password));
      expect(err).to.be.instanceOf(DirectoryUnavailable);
      expect((err as DirectoryUnavailable).reason).to.equal('unreachable');
      await slapd.resume();
      expect(await d.verify(PEOPLE.bob.uid, PEOPLE.bob.password)).to.include({ loginId: 'bob' });
      expect(log.lines.map((l) => l.level)).to.deep.equal(['error', 'info']);
    });

    it('replaces a kept connection the directory closed meanwhile, without failing the sign-in', async () => {
      const { directory: d } = directory();
      expect(await d.verify(PEOPLE.alice.uid, PEOPLE.alice.password)).not.to.equal(null);
      await slapd.stop();
      await slapd.resume();
      expect(await d.verify(PEOPLE.alice.uid, PEOPLE.alice.password)).not.to.equal(null);
    });

    it('says unavailable when the search base does not exist', async () => {
      const { directory: d, log } = directory({ SERVICE_JNDI_CONTEXT: 'ou=nowhere,dc=example,dc=org' });
      const err = await rejection(d.verify(PEOPLE.alice.uid, PEOPLE.alice.password));
      expect((err as DirectoryUnavailable).reason).to.equal('searchFailed');
      expect(log.lines[0]).to.include({ level: 'error', searchBase: 'ou=nowhere,dc=example,dc=org' });
    });

    describe('with a directory that accepts connections and never answers', () => {
      let silent: Server;
      const sockets: Socket[] = [];
      before(async () => {
        silent = createServer((socket) => sockets.push(socket));
        await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      });
      after(async () => {
        sockets.forEach((s) => s.destroy());
        await new Promise((resolve) => silent.close(resolve));
      });

      it('gives up after the read timeout', async () => {
        const port = (silent.address() as { port: number }).port;
        const { directory: d } = directory({ SERVICE_JNDI_URL: `ldap://127.0.0.1:${port}`, SERVICE_JNDI_READ_TIMEOUT: '300' });
        const started = Date.now();
        const err = await rejection(d.verify(PEOPLE.alice.uid, PEOPLE.alice.password));
        expect(err).to.be.instanceOf(DirectoryUnavailable);
        expect(Date.now() - started).to.be.within(250, 3_000);
      });
    });
  });

  describe('the driver', () => {
    function driver(options: { ttlMs?: number; now?: () => number } = {}) {
      const { directory: d, log } = directory();
      const signIns = new CredentialCache<ExternalIdentity>({ ttlMs: options.ttlMs ?? 60_000, now: options.now });
      const throttle = new SignInThrottle();
      const ldap = new DirectoryDriver({ directory: d, signIns, throttle });
      const signIn = (authorization: string | undefined, ip = '127.0.0.1') => {
        const ctx = { ip, get: (name: string) => (name.toLowerCase() === 'authorization' ? authorization ?? '' : '') } as unknown as Context;
        return ldap.authenticate({ ctx, db: { name: 'db', defaultTenant: 't' } });
      };
      return { ldap, signIn, log };
    }

    async function status(attempt: Promise<AuthResult | null>): Promise<number> {
      const err = await rejection(attempt);
      expect(err).to.be.instanceOf(ServiceError);
      return (err as ServiceError).status;
    }

    it('returns the directory\'s identity for the core to assign', async () => {
      const { signIn } = driver();
      const result = await signIn(basic(PEOPLE.alice.uid, PEOPLE.alice.password));
      expect(result).to.deep.equal({
        kind: 'external',
        identity: { loginId: 'alice', groups: ['analysts', 'editors'], tenantId: 'T-4711', commonName: 'Alice Liddell', familyName: 'Liddell', givenName: 'Alice' },
      });
    });

    it('passes over requests without Basic credentials, and refuses malformed ones with the Basic challenge', async () => {
      const { signIn, ldap } = driver();
      expect(await signIn(undefined)).to.equal(null);
      expect(await signIn('Bearer abc.def.ghi')).to.equal(null);
      const err = await rejection(signIn('Basic !!!'));
      expect((err as ServiceError).status).to.equal(401);
      expect((err as ServiceError).headers['WWW-Authenticate']).to.equal(ldap.challenge());
      expect(ldap.challenge()).to.match(/^Basic realm="/);
    });

    it('refuses an empty password before any bind, even with the directory down', async () => {
      const { signIn } = driver();
      const done = await watch();
      expect(await status(signIn(basic(PEOPLE.alice.uid, '')))).to.equal(401);
      expect(await done()).to.deep.equal([]);
      await slapd.stop();
      expect(await status(signIn(basic(PEOPLE.bob.uid, '')))).to.equal(401);
    });

    it('refuses over-long login IDs and passwords without asking the directory', async () => {
      const { signIn } = driver();
      const done = await watch();
      expect(await status(signIn(basic('a'.repeat(257), PEOPLE.alice.password)))).to.equal(401);
      expect(await status(signIn(basic(PEOPLE.alice.uid, 'p'.repeat(1025))))).to.equal(401);
      expect(await done()).to.deep.equal([]);
    });

    it('remembers a verified sign-in: repeated calls cost the directory nothing', async () => {
      const { signIn } = driver();
      await signIn(basic(PEOPLE.alice.uid, PEOPLE.alice.password));
      const done = await watch();
      for (let i = 0; i < 10; i++) expect(await signIn(basic(PEOPLE.alice.uid, PEOPLE.alice.password))).to.have.property('kind', 'external');
      expect(await done()).to.deep.equal([]);
      // Another password is not the remembered one: it is checked, and fails.
      expect(await status(signIn(basic(PEOPLE.alice.uid, 'guess-Password-1')))).to.equal(401);
    });

    it('asks the directory again once the remembered sign-in expired', async () => {
      let now = 1_000_000;
      const { signIn } = driver({ ttlMs: 10_000, now: () => now });
      await signIn(basic(PEOPLE.bob.uid, PEOPLE.bob.password));
      now += 9_000;
      let done = await watch();
      await signIn(basic(PEOPLE.bob.uid, PEOPLE.bob.password));
      expect(await done()).to.deep.equal([]);
      now += 2_000;
      done = await watch();
      await signIn(basic(PEOPLE.bob.uid, PEOPLE.bob.password));
      expect((await done()).map((o) => o.kind)).to.deep.equal(['SRCH', 'BIND']);
    });

    it('remembers nothing a caller could change: the identity handed out is a copy', async () => {
      const { signIn } = driver();
      const first = (await signIn(basic(PEOPLE.alice.uid, PEOPLE.alice.password))) as { identity: ExternalIdentity };
      first.identity.groups!.push('administrators');
      first.identity.tenantName = 'Elsewhere';
      const second = (await signIn(basic(PEOPLE.alice.uid, PEOPLE.alice.password))) as { identity: ExternalIdentity };
      expect(second.identity.groups).to.deep.equal(['analysts', 'editors']);
      expect(second.identity).not.to.have.property('tenantName');
    });

    it('verifies sign-ins of the same credentials at the same moment once', async () => {
      const { signIn } = driver();
      const done = await watch();
      const results = await Promise.all(Array.from({ length: 8 }, () => signIn(basic(PEOPLE.dora.uid, PEOPLE.dora.password))));
      expect(results.every((r) => r?.kind === 'external')).to.equal(true);
      expect((await done()).filter((o) => o.dn === slapd.dnOf(PEOPLE.dora))).to.have.length(1);
    });

    it('locks a login ID after repeated failures (429), the right password included', async () => {
      const { signIn } = driver();
      for (let i = 0; i < 5; i++) expect(await status(signIn(basic(PEOPLE.plain.uid, `wrong-${i}`)))).to.equal(401);
      const err = await rejection(signIn(basic(PEOPLE.plain.uid, PEOPLE.plain.password)));
      expect((err as ServiceError).status).to.equal(429);
      expect(Number((err as ServiceError).headers['Retry-After'])).to.be.greaterThan(0);
      // Another login ID is not affected.
      expect(await signIn(basic(PEOPLE.bob.uid, PEOPLE.bob.password))).to.have.property('kind', 'external');
    });

    it('locks the login ID for the address that failed, not for the person signing in from another (as password sign-in does)', async () => {
      const { signIn } = driver();
      for (let i = 0; i < 5; i++) expect(await status(signIn(basic(PEOPLE.plain.uid, `wrong-${i}`), '203.0.113.66'))).to.equal(401);
      expect(await status(signIn(basic(PEOPLE.plain.uid, PEOPLE.plain.password), '203.0.113.66'))).to.equal(429);
      expect(await signIn(basic(PEOPLE.plain.uid, PEOPLE.plain.password), '198.51.100.7')).to.have.property('kind', 'external');
    });

    it('counts tries under case and blank variants of a login ID, which the directory matches alike, together', async () => {
      const { signIn } = driver();
      for (const variant of ['BOB', 'Bob', ' bob', 'bob ', 'bOb']) expect(await status(signIn(basic(variant, 'guess-Password-1'))), variant).to.equal(401);
      expect(await status(signIn(basic(PEOPLE.bob.uid, PEOPLE.bob.password)))).to.equal(429);
    });

    it('answers 503 with Retry-After while the directory is down, and counts no failure', async () => {
      const { signIn } = driver();
      await slapd.stop();
      for (let i = 0; i < 6; i++) {
        const err = await rejection(signIn(basic(PEOPLE.juergen.uid, PEOPLE.juergen.password)));
        expect((err as ServiceError).status).to.equal(503);
        expect((err as ServiceError).headers['Retry-After']).to.equal('5');
      }
      await slapd.resume();
      expect(await signIn(basic(PEOPLE.juergen.uid, PEOPLE.juergen.password))).to.have.property('kind', 'external');
    });
  });
});
