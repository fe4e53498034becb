import { expect } from 'chai';
import { LoginThrottle } from '../../../plugins/auth-basic/throttle.ts';

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
