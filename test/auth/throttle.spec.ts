import { expect } from 'chai';
import { clientAddress, LoginThrottle, SignInThrottle } from '../../runtime/auth/throttle.ts';

function clock(start = 1_000_000) {
  const time = { now: start };
  return { time, now: () => time.now };
}

function failTimes(throttle: LoginThrottle, loginId: string, times: number): void {
  for (let i = 0; i < times; i++) throttle.fail(loginId);
}

describe('LoginThrottle', () => {
  it('locks a login ID after maxFailures failures and tells when to retry', () => {
    const { time, now } = clock();
    const throttle = new LoginThrottle({ maxFailures: 3, lockMs: 30_000, now });
    failTimes(throttle, 'bob', 2);
    expect(throttle.check('bob')).to.deep.equal({ allowed: true });
    throttle.fail('bob');
    expect(throttle.check('bob')).to.deep.equal({ allowed: false, retryAfterSeconds: 30 });
    time.now += 10_500;
    expect(throttle.check('bob')).to.deep.equal({ allowed: false, retryAfterSeconds: 20 });
    time.now += 19_500;
    expect(throttle.check('bob')).to.deep.equal({ allowed: true });
  });

  it('counts only failures within the window', () => {
    const { time, now } = clock();
    const throttle = new LoginThrottle({ maxFailures: 3, windowMs: 60_000, now });
    failTimes(throttle, 'bob', 2);
    time.now += 60_001;
    throttle.fail('bob');
    expect(throttle.check('bob').allowed).to.equal(true);
    failTimes(throttle, 'bob', 1);
    expect(throttle.check('bob').allowed).to.equal(true);
    throttle.fail('bob');
    expect(throttle.check('bob').allowed).to.equal(false);
  });

  it('throttles each login ID on its own, case-sensitively', () => {
    const throttle = new LoginThrottle({ maxFailures: 2 });
    failTimes(throttle, 'bob', 2);
    expect(throttle.check('bob').allowed).to.equal(false);
    expect(throttle.check('Bob').allowed).to.equal(true);
    expect(throttle.check('alice').allowed).to.equal(true);
  });

  it('doubles the lock for each further lock within the window, up to 15 minutes', () => {
    const { time, now } = clock();
    const throttle = new LoginThrottle({ maxFailures: 2, windowMs: 60_000, lockMs: 30_000, now });
    const lockSeconds: number[] = [];
    for (let lock = 0; lock < 7; lock++) {
      failTimes(throttle, 'bob', 2);
      const decision = throttle.check('bob');
      if (decision.allowed) throw new Error('expected a lock');
      lockSeconds.push(decision.retryAfterSeconds);
      time.now += decision.retryAfterSeconds * 1000;
    }
    expect(lockSeconds).to.deep.equal([30, 60, 120, 240, 480, 900, 900]);
  });

  it('starts again at the base lock after a quiet window', () => {
    const { time, now } = clock();
    const throttle = new LoginThrottle({ maxFailures: 2, windowMs: 60_000, lockMs: 30_000, now });
    failTimes(throttle, 'bob', 2);
    time.now += 30_000 + 60_001;
    failTimes(throttle, 'bob', 2);
    expect(throttle.check('bob')).to.deep.equal({ allowed: false, retryAfterSeconds: 30 });
  });

  it('ignores failures reported while locked', () => {
    const { time, now } = clock();
    const throttle = new LoginThrottle({ maxFailures: 2, lockMs: 30_000, now });
    failTimes(throttle, 'bob', 2);
    failTimes(throttle, 'bob', 10);
    expect(throttle.check('bob')).to.deep.equal({ allowed: false, retryAfterSeconds: 30 });
    time.now += 30_000;
    expect(throttle.check('bob').allowed).to.equal(true);
  });

  it('resets a login ID on success', () => {
    const { time, now } = clock();
    const throttle = new LoginThrottle({ maxFailures: 2, lockMs: 30_000, now });
    failTimes(throttle, 'bob', 2);
    time.now += 30_000;
    throttle.fail('bob');
    throttle.succeed('bob');
    throttle.fail('bob');
    expect(throttle.check('bob').allowed).to.equal(true);
    throttle.fail('bob');
    // the earlier lock is forgotten too: the base lock again, not a doubled one
    expect(throttle.check('bob')).to.deep.equal({ allowed: false, retryAfterSeconds: 30 });
  });

  it('forgets stale login IDs and bounds the number it keeps', () => {
    const { time, now } = clock();
    const throttle = new LoginThrottle({ maxFailures: 2, maxLoginIds: 3, now });
    for (const loginId of ['u1', 'u2', 'u3', 'u4']) throttle.fail(loginId);
    expect([...throttle['states'].keys()]).to.deep.equal(['u2', 'u3', 'u4']);
    time.now += 60_001;
    throttle.check('u2');
    expect(throttle['states'].has('u2')).to.equal(false);
  });
});

describe('SignInThrottle', () => {
  const attacker = { address: '203.0.113.66', loginKey: 'victim' };
  const victim = { address: '198.51.100.7', loginKey: 'victim' };

  it('locks the pair of address and login ID, not the login ID: the same login ID from another address is allowed', () => {
    const throttle = new SignInThrottle();
    for (let i = 0; i < 5; i++) throttle.fail(attacker);
    expect(throttle.check(attacker)).to.deep.equal({ allowed: false, retryAfterSeconds: 30 });
    expect(throttle.check(victim)).to.deep.equal({ allowed: true });
    expect(throttle.check({ ...attacker, loginKey: 'someone-else' })).to.deep.equal({ allowed: true });
  });

  it('locks an address that spends its budget over many login IDs, for every login ID and for keys without one', () => {
    const { time, now } = clock();
    const throttle = new SignInThrottle({ address: { maxFailures: 10 }, now });
    for (let i = 0; i < 10; i++) throttle.fail({ address: attacker.address, loginKey: `user-${i}` });
    expect(throttle.check({ address: attacker.address, loginKey: 'fresh' })).to.deep.equal({ allowed: false, retryAfterSeconds: 60 });
    expect(throttle.check({ address: attacker.address })).to.deep.equal({ allowed: false, retryAfterSeconds: 60 });
    expect(throttle.check(victim)).to.deep.equal({ allowed: true });
    time.now += 60_000;
    expect(throttle.check({ address: attacker.address })).to.deep.equal({ allowed: true });
  });

  it('counts failures without a login ID (access keys) against the address alone', () => {
    const throttle = new SignInThrottle({ address: { maxFailures: 3 } });
    for (let i = 0; i < 3; i++) throttle.fail({ address: attacker.address });
    expect(throttle.check({ address: attacker.address }).allowed).to.equal(false);
    expect(throttle.check({ address: victim.address }).allowed).to.equal(true);
  });

  it('clears the pair on success but not the address\'s budget, which one valid account must not refill', () => {
    const throttle = new SignInThrottle({ address: { maxFailures: 6 } });
    for (let i = 0; i < 4; i++) throttle.fail(attacker);
    throttle.succeed(attacker);
    for (let i = 0; i < 4; i++) throttle.fail(attacker);
    expect(throttle.check(attacker)).to.deep.equal({ allowed: false, retryAfterSeconds: 60 });
  });

  it('tells the longer wait when pair and address are both locked', () => {
    const { time, now } = clock();
    const throttle = new SignInThrottle({ pair: { maxFailures: 2 }, address: { maxFailures: 4 }, now });
    throttle.fail(attacker);
    throttle.fail(attacker);
    time.now += 20_000;
    // Locked pairs count no more failures; the address's count goes on with other login IDs.
    throttle.fail({ ...attacker, loginKey: 'a' });
    throttle.fail({ ...attacker, loginKey: 'b' });
    expect(throttle.check(attacker)).to.deep.equal({ allowed: false, retryAfterSeconds: 60 });
  });
});

describe('clientAddress', () => {
  const of = (ip: string | undefined) => clientAddress({ ip } as never);

  it('takes IPv4 as it is, also in its IPv6-mapped form', () => {
    expect(of('192.0.2.1')).to.equal('192.0.2.1');
    expect(of('::ffff:192.0.2.1')).to.equal('192.0.2.1');
    expect(of('::FFFF:127.0.0.1')).to.equal('127.0.0.1');
  });

  it('counts an IPv6 address by its /64 prefix, however it is written', () => {
    const prefix = '2001:db8:a:b::/64';
    for (const ip of ['2001:db8:a:b::1', '2001:0db8:000a:000b:ffff:ffff:ffff:ffff', '2001:DB8:A:B:1:2:3:4', '2001:db8:a:b::9%eth0']) {
      expect(of(ip), ip).to.equal(prefix);
    }
    expect(of('2001:db8:a:c::1')).to.not.equal(prefix);
    expect(of('::1')).to.equal('0:0:0:0::/64');
    expect(of('2001:db8::')).to.equal('2001:db8:0:0::/64');
    expect(of('64:ff9b::192.0.2.1')).to.equal('64:ff9b:0:0::/64');
  });

  it('keeps anything else (no address known) as it is', () => {
    expect(of('')).to.equal('');
    expect(of(undefined)).to.equal('');
  });
});
