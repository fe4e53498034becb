/** The README's typed-client example, which the client's specs compile and run, so that it cannot go stale. */
import { readFileSync } from 'node:fs';

/** The TypeScript block of the README's "Typed client" section. */
export function readmeExample(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Typed client\n'));
  const block = section?.match(/```ts\n([\s\S]*?)```/);
  if (!block) throw new Error('README.md has no TypeScript example in its "Typed client" section');
  return block[1];
}
