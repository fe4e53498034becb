/**
 * The typed client's promise is made at compile time: a call that matches the
 * OpenAPI document compiles, one that does not is an error of the compiler.
 * This spec compiles, with the repository's own tsc, the README's example and
 * pairs of programs that differ in one call: the right one must compile, the
 * wrong one must fail with the expected error, in that call. The programs
 * import the client as a user of the package does (`metadata-service/client`),
 * so the package's exports are compiled too.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { readmeExample } from './readme-example.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** One call, right and wrong; the wrong one must fail with `code` and a message matching `message`. */
interface Case {
  name: string;
  right: string;
  wrong: string;
  code: string;
  message: RegExp;
}

const CASES: Case[] = [
  {
    name: 'a number where a label belongs in the path',
    right: `await client.GET('/rest/{db}/schemes/{key}', { params: { path: { db, key: 'Sales Model' } } });`,
    wrong: `await client.GET('/rest/{db}/schemes/{key}', { params: { path: { db, key: 42 } } });`,
    code: 'TS2322',
    message: /Type 'number' is not assignable to type 'string'/,
  },
  {
    name: 'a number where a label belongs in the body',
    right: `await client.POST('/rest/{db}/schemes', { params: { path: { db } }, body: { _type: 'Scheme', label: 'Sales Model' } });`,
    wrong: `await client.POST('/rest/{db}/schemes', { params: { path: { db } }, body: { _type: 'Scheme', label: 42 } });`,
    code: 'TS2322',
    message: /Type 'number' is not assignable to type 'string'/,
  },
  {
    name: 'a missing path parameter',
    right: `await client.DELETE('/rest/{db}/classifiers/{key}', { params: { path: { db, key: '0b7d7c1e-3a52-4b0e-9d36-7f0cb4c1a9e2' } } });`,
    wrong: `await client.DELETE('/rest/{db}/classifiers/{key}', { params: { path: { db } } });`,
    code: 'TS2741',
    message: /Property 'key' is missing/,
  },
  {
    name: 'a path the document does not have',
    right: `await client.GET('/rest/{db}/schemes', { params: { path: { db } } });`,
    wrong: `await client.GET('/rest/{db}/schemas', { params: { path: { db } } });`,
    code: 'TS2345',
    message: /Argument of type '"\/rest\/\{db\}\/schemas"' is not assignable/,
  },
  {
    name: 'a method the path does not have',
    right: `await client.GET('/health', {});`,
    wrong: `await client.PUT('/health', {});`,
    code: 'TS2345',
    message: /Argument of type '"\/health"' is not assignable/,
  },
  {
    name: 'an object of another type in a list',
    right: `await client.POST('/rest/{db}/schemes/{key}/classifiers', { params: { path: { db, key: 'Sales Model' } }, body: { _type: 'Classifier', label: 'Customer' } });`,
    wrong: `await client.POST('/rest/{db}/schemes/{key}/classifiers', { params: { path: { db, key: 'Sales Model' } }, body: { _type: 'Scheme', label: 'Customer' } });`,
    code: 'TS2322',
    message: /Type '"Scheme"' is not assignable to type '"Classifier"'/,
  },
  {
    name: 'a query parameter of the wrong type',
    right: `await client.GET('/rest/{db}/classifiers', { params: { path: { db }, query: { limit: 10 } } });`,
    wrong: `await client.GET('/rest/{db}/classifiers', { params: { path: { db }, query: { limit: '10' } } });`,
    code: 'TS2322',
    message: /Type 'string' is not assignable to type 'number'/,
  },
  {
    name: 'a query result format the interface does not have',
    right: `await client.PUT('/api/{db}/queries/download', { params: { path: { db }, query: { format: 'CSV' } }, body: { sql: 'select 1' }, parseAs: 'text' });`,
    wrong: `await client.PUT('/api/{db}/queries/download', { params: { path: { db }, query: { format: 'PDF' } }, body: { sql: 'select 1' }, parseAs: 'text' });`,
    code: 'TS2322',
    message: /Type '"PDF"' is not assignable to type '"CSV" \| "JSON" \| "XML"/,
  },
  {
    name: 'a statement without its SQL',
    right: `await client.POST('/api/{db}/queries/download', { params: { path: { db } }, body: { sql: 'select 1' } });`,
    wrong: `await client.POST('/api/{db}/queries/download', { params: { path: { db } }, body: { statement: 'select 1' } });`,
    code: 'TS2353',
    message: /'statement' does not exist in type/,
  },
  {
    name: 'a property the answer does not have',
    right: `const { data } = await client.GET('/rest/{db}/schemes/{key}', { params: { path: { db, key: 'Sales Model' } } }); void data?.label;`,
    wrong: `const { data } = await client.GET('/rest/{db}/schemes/{key}', { params: { path: { db, key: 'Sales Model' } } }); void data?.lable;`,
    code: 'TS2551',
    message: /Property 'lable' does not exist .* Did you mean 'label'\?/,
  },
];

function program(call: string): string {
  return [
    `import { createClient } from 'metadata-service/client';`,
    `const client = createClient({ baseUrl: 'http://127.0.0.1:8080', authorization: { loginId: 'admin', password: 'change-me-now' } });`,
    `const db = 'demo';`,
    `export async function call(): Promise<void> {`,
    `  ${call}`,
    `}`,
    '',
  ].join('\n');
}

interface Diagnostic {
  file: string;
  line: number;
  code: string;
  message: string;
}

/** tsc's diagnostics of the programs in `dir`, by file name; tsc exits non-zero when there are any, which is expected here. */
async function compile(dir: string, files: string[]): Promise<Diagnostic[]> {
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: relative(dir, join(root, 'tsconfig.json')), compilerOptions: { types: ['node'] }, include: [], files }));
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  const output = await promisify(execFile)(tsc, ['-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: root, maxBuffer: 16 << 20 }).then(
    (r) => r.stdout,
    (err: { stdout?: string; code?: unknown }) => {
      // 1 or 2: diagnostics were reported; anything else (a crash, a missing tsc) is this test's failure.
      if (typeof err.stdout !== 'string' || (err.code !== 1 && err.code !== 2)) throw err;
      return err.stdout;
    },
  );
  // `file(line,col): error TSnnnn: message`, the message going on in indented lines.
  const diagnostics: Diagnostic[] = [];
  for (const line of output.split('\n')) {
    const m = line.match(/^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/);
    if (m) diagnostics.push({ file: m[1].split(/[\\/]/).pop()!, line: Number(m[2]), code: m[3], message: m[4] });
    else if (line.trim() && diagnostics.length) diagnostics[diagnostics.length - 1].message += ` ${line.trim()}`;
  }
  return diagnostics;
}

describe('typed client: compile-time checks', function () {
  this.timeout(120_000);
  const dir = join(root, '.tmp', `client-typecheck-${process.pid}`);
  const names = CASES.map((_, i) => `case-${i}`);
  let diagnostics: Diagnostic[];

  before(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'readme-example.ts'), readmeExample());
    const files = ['readme-example.ts'];
    CASES.forEach((c, i) => {
      writeFileSync(join(dir, `${names[i]}-right.ts`), program(c.right));
      writeFileSync(join(dir, `${names[i]}-wrong.ts`), program(c.wrong));
      files.push(`${names[i]}-right.ts`, `${names[i]}-wrong.ts`);
    });
    diagnostics = await compile(dir, files);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles the README example', () => {
    expect(diagnostics.filter((d) => d.file === 'readme-example.ts')).to.deep.equal([]);
  });

  it('reports nothing outside the programs (the client and the generated types compile)', () => {
    expect(diagnostics.filter((d) => !/^(readme-example|case-\d+-(right|wrong))\.ts$/.test(d.file))).to.deep.equal([]);
  });

  CASES.forEach((c, i) => {
    it(`does not compile ${c.name}`, () => {
      expect(diagnostics.filter((d) => d.file === `${names[i]}-right.ts`), 'the right call').to.deep.equal([]);
      const wrong = diagnostics.filter((d) => d.file === `${names[i]}-wrong.ts`);
      expect(wrong, 'the wrong call').to.not.deep.equal([]);
      // Line 5 is the call; the error is that call's, not something else in the program.
      for (const d of wrong) expect(d.line).to.equal(5);
      expect(wrong.map((d) => d.code)).to.include(c.code);
      expect(wrong.map((d) => d.message).join('\n')).to.match(c.message);
    });
  });
});
