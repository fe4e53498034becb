import { expect } from 'chai';
import * as argon2 from 'argon2';
import { randomBytes } from 'node:crypto';
import { parsePepperStore, type PepperStore } from '../../../plugins/auth-basic/pepper.ts';
import { OWASP_PARAMS, PasswordHasher } from '../../../plugins/auth-basic/passwords.ts';

function pepperEntry(id: string): string {
  return `${id}=${randomBytes(24).toString('base64')}`;
}

const noPepper: PepperStore = parsePepperStore(undefined);
const entryP1 = pepperEntry('p1');
const entryP2 = pepperEntry('p2');
const storeP1 = parsePepperStore(entryP1);

describe('PasswordHasher', () => {
  it('verifies the password it hashed and rejects a wrong one', async () => {
    const hasher = new PasswordHasher(storeP1);
    const stored = await hasher.hash('correct horse');
    expect(stored.pepperId).to.equal('p1');
    expect(await hasher.verify('correct horse', stored)).to.deep.equal({ ok: true, needsRehash: false });
    expect(await hasher.verify('correct hors', stored)).to.deep.equal({ ok: false, needsRehash: false });
  });

  it('hashes without a pepper when none is configured', async () => {
    const hasher = new PasswordHasher(noPepper);
    const stored = await hasher.hash('secret');
    expect(stored.pepperId).to.equal(null);
    expect((await hasher.verify('secret', stored)).ok).to.equal(true);
  });

  it('uses a unique salt and the OWASP argon2id parameters', async () => {
    const hasher = new PasswordHasher(storeP1);
    const [first, second] = await Promise.all([hasher.hash('same'), hasher.hash('same')]);
    expect(first.hash).to.not.equal(second.hash);
    expect(first.hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(first.hash.split('$')[4]).to.not.equal(second.hash.split('$')[4]);
  });

  it('keys the hash with the pepper: without it the password does not verify', async () => {
    const stored = await new PasswordHasher(storeP1).hash('secret');
    expect(await argon2.verify(stored.hash, 'secret')).to.equal(false);
    const asUnpeppered = await new PasswordHasher(noPepper).verify('secret', { ...stored, pepperId: null });
    expect(asUnpeppered.ok).to.equal(false);
  });

  it('still verifies after a new active pepper was put in front, and asks for a rehash', async () => {
    const stored = await new PasswordHasher(storeP1).hash('secret');
    const rotated = new PasswordHasher(parsePepperStore(`${entryP2};${entryP1}`));
    expect(await rotated.verify('secret', stored)).to.deep.equal({ ok: true, needsRehash: true });
    expect((await rotated.hash('secret')).pepperId).to.equal('p2');
  });

  it('asks for a rehash of an unpeppered hash once a pepper is active', async () => {
    const stored = await new PasswordHasher(noPepper).hash('secret');
    expect(await new PasswordHasher(storeP1).verify('secret', stored)).to.deep.equal({ ok: true, needsRehash: true });
  });

  it('fails cleanly when the pepper of a hash was removed from the store', async () => {
    const stored = await new PasswordHasher(storeP1).hash('secret');
    const withoutP1 = new PasswordHasher(parsePepperStore(entryP2));
    expect(await withoutP1.verify('secret', stored)).to.deep.equal({ ok: false, needsRehash: false });
  });

  it('spends a full verification on a hash whose pepper was removed, so the time taken does not tell', async () => {
    const stored = await new PasswordHasher(storeP1).hash('secret');
    const withoutP1 = new PasswordHasher(parsePepperStore(entryP2));
    // The fastest of three runs: a busy machine can only make a run slower.
    const timed = async (check: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        await check();
        times.push(performance.now() - started);
      }
      return Math.min(...times);
    };
    const removed = await timed(() => withoutP1.verify('secret', stored));
    const wrong = await timed(() => new PasswordHasher(storeP1).verify('wrong', stored));
    // An early answer takes microseconds; argon2 takes tens of milliseconds.
    expect(removed).to.be.above(wrong * 0.3);
  });

  it('takes the composed and the decomposed form of a password (NFC, NFD) as the same password', async () => {
    const hasher = new PasswordHasher(storeP1);
    const composed = 'Grüße-Zoë';
    const decomposed = composed.normalize('NFD');
    expect(decomposed).to.not.equal(composed);
    expect((await hasher.verify(decomposed, await hasher.hash(composed))).ok).to.equal(true);
    expect((await hasher.verify(composed, await hasher.hash(decomposed))).ok).to.equal(true);
  });

  it('fails cleanly when the pepper value was altered', async () => {
    const stored = await new PasswordHasher(storeP1).hash('secret');
    const altered = new PasswordHasher(parsePepperStore(pepperEntry('p1')));
    expect((await altered.verify('secret', stored)).ok).to.equal(false);
  });

  it('verifies a hash made with weaker parameters and asks for a rehash', async () => {
    const weak = new PasswordHasher(storeP1, { ...OWASP_PARAMS, timeCost: 1, memoryCost: 8192 });
    const stored = await weak.hash('secret');
    expect(stored.hash).to.include('m=8192,t=1,p=1');
    expect(await new PasswordHasher(storeP1).verify('secret', stored)).to.deep.equal({ ok: true, needsRehash: true });
  });

  it('asks for a rehash of another argon2 variant with the same costs', async () => {
    const argon2i = new PasswordHasher(storeP1, { ...OWASP_PARAMS, type: argon2.argon2i });
    const stored = await argon2i.hash('secret');
    expect(await new PasswordHasher(storeP1).verify('secret', stored)).to.deep.equal({ ok: true, needsRehash: true });
  });

  it('answers ok:false for a hash it cannot parse', async () => {
    const hasher = new PasswordHasher(noPepper);
    for (const hash of ['', 'not a hash', '$argon2id$v=19$m=19456,t=2,p=1$broken', '$bcrypt$x$y$z']) {
      expect(await hasher.verify('secret', { hash, pepperId: null })).to.deep.equal({ ok: false, needsRehash: false });
    }
  });

  it('refuses to hash an empty or overlong password, and verify rejects them', async () => {
    const hasher = new PasswordHasher(noPepper);
    const stored = await hasher.hash('x'.repeat(1024));
    for (const password of ['', 'x'.repeat(1025)]) {
      let thrown: unknown;
      await hasher.hash(password).catch((error: unknown) => (thrown = error));
      expect(thrown).to.be.instanceOf(Error);
      expect(await hasher.verify(password, stored)).to.deep.equal({ ok: false, needsRehash: false });
    }
    expect((await hasher.verify('x'.repeat(1024), stored)).ok).to.equal(true);
  });
});
