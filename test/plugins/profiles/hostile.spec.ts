/**
 * Hostile profile uploads (issue 16): any file within the size limit is
 * refused or accepted within the read deadline, and the service answers
 * other requests meanwhile. Before, these files held the event loop for
 * 2.5 to 55 s: the bounds below leave room for a busy machine.
 */
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { READ_DEADLINE_MS } from '../../../plugins/profiles/reader.ts';
import { BANK, fixture, upload } from './fixtures.ts';

type Json = Record<string, any>;

const TOO_COMPLEX = 'The file could not be read within 1 seconds; it is too complex (deeply nested, or very many keys in one mapping).';

/** The file: about 650 kB, 60,000 aliases of 10,000 anchors, the aliases in one flow sequence on line 10,003. */
function aliasFile(): { bytes: Buffer; column: number } {
  const lines = ['theme:', '  anchors:'];
  for (let i = 0; i < 10_000; i++) lines.push(`    - &a${i} x`);
  const aliases = Array.from({ length: 60_000 }, (_, i) => `*a${i % 10_000}`);
  lines.push(`  uses: [${aliases.join(', ')}]`);
  // Where the 101st alias starts.
  const column = '  uses: ['.length + aliases.slice(0, 100).join(', ').length + ', '.length + 1;
  return { bytes: Buffer.from(`${lines.join('\n')}\n`), column };
}

/** Nesting the parser recurses into until its stack runs out, again and again: 2.5 s of CPU on the main thread before. */
function deepFile(bytes: number): Buffer {
  return Buffer.from(`theme: ${'['.repeat(bytes - 10)}\n`);
}

describe('profiles: hostile uploads', () => {
  let t: TestService;
  let db: string;

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
  });
  after(() => t.close());

  /** Uploads while asking /health every 25 ms: the answer, its time, and the slowest health check. */
  async function uploadWatched(bytes: Buffer) {
    const started = Date.now();
    let slowest = 0;
    let done = false;
    const watching = (async () => {
      while (!done) {
        const asked = Date.now();
        expect((await fetch(`${t.url}/health`)).status).to.equal(200);
        slowest = Math.max(slowest, Date.now() - asked);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const r = await upload(t, db, 'annotations', bytes);
    const ms = Date.now() - started;
    done = true;
    await watching;
    return { status: r.status, body: await r.json() as Json, ms, slowest };
  }

  it('refuses the issue\'s 650 kB file of 60,000 aliases at once, at the first alias too many', async () => {
    // The thread is started by the first upload; its start is not part of the deadline.
    await upload(t, db, 'annotations', fixture(BANK));
    const file = aliasFile();
    expect(file.bytes.length).to.be.within(600_000, 700_000);
    const { status, body, ms, slowest } = await uploadWatched(file.bytes);
    expect(status).to.equal(400);
    // Parsing 650 kB takes about half the deadline: on a busy machine the deadline may refuse it first.
    expect(body.violations).to.have.length(1);
    expect(body.violations[0].message).to.be.oneOf([
      `Line 10003, column ${file.column}: the file uses more than 100 aliases (*name); write the values out instead.`,
      TOO_COMPLEX,
    ]);
    expect(ms, 'ms to the answer').to.be.below(READ_DEADLINE_MS + 3000);
    expect(slowest, 'ms of the slowest health check').to.be.below(500);
  });

  it('stops reading a file that takes longer than the deadline, answers /health meanwhile, and reads the next file', async () => {
    const { status, body, ms, slowest } = await uploadWatched(deepFile(1024 * 1024));
    expect(status).to.equal(400);
    expect(body.violations).to.deep.equal([{ path: '', message: TOO_COMPLEX }]);
    expect(ms, 'ms to the answer').to.be.within(READ_DEADLINE_MS, READ_DEADLINE_MS + 3000);
    expect(slowest, 'ms of the slowest health check').to.be.below(500);
    const next = await upload(t, db, 'annotations', fixture(BANK));
    expect(next.status).to.equal(200);
  });

  it('answers a 1 MiB mapping of 100,000 keys within the deadline (55 s of CPU before)', async () => {
    let text = 'theme:\n';
    for (let i = 0; text.length < 1024 * 1024 - 20; i++) text += `  k${i}: 1\n`;
    const { status, ms, slowest } = await uploadWatched(Buffer.from(text));
    expect(status).to.be.oneOf([200, 400]);
    expect(ms, 'ms to the answer').to.be.below(READ_DEADLINE_MS + 3000);
    expect(slowest, 'ms of the slowest health check').to.be.below(500);
  });
});
