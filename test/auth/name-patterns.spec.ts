import { expect } from 'chai';
import { globMatches, nameMatches } from '../../runtime/auth/name-patterns.ts';

describe('name patterns of access rules', () => {
  it('matches * as any run of characters (none too) and ? as exactly one, over the whole name', () => {
    const cases: [string, string, boolean][] = [
      ['Müller', 'Müller', true], ['Müller', 'Müllers', false], ['M*', 'M', true], ['M*', 'Müller', true], ['M*', 'aM', false],
      ['*ller', 'Müller', true], ['*ller', 'Müllerin', false], ['M*ll*r', 'Müller', true], ['M*ll*r', 'Mllr', true], ['M*ll*r', 'Mülr', false],
      ['M?ller', 'Müller', true], ['M?ller', 'Mueller', false], ['?', '', false], ['*', '', true], ['**', 'x', true],
      ['a*b*c', 'abc', true], ['a*b*c', 'acb', false], ['a*ab', 'aab', true], ['*ab*ab', 'abab', true], ['*ab*ab', 'abXab', true], ['*ab*ab', 'aab', false],
      ['?*?', 'x', false], ['?*?', 'xy', true], ['Jo?n*', 'Johnathan', true], ['Jö*', 'Jürgen', false],
    ];
    for (const [pattern, name, expected] of cases) expect(globMatches(pattern, name), `${pattern} ~ ${name}`).to.equal(expected);
  });

  it('counts a character outside the Basic Multilingual Plane as one', () => {
    expect(globMatches('?an', '𝔇an')).to.equal(true);
    expect(globMatches('??an', '𝔇an')).to.equal(false);
  });

  it('takes time linear in name times pattern for patterns that make regular expressions backtrack', () => {
    const name = 'a'.repeat(1000);
    // The first would keep a regular expression busy for ages (8 stars over 60 characters took 31 s); the second is the worst case here.
    for (const pattern of ['*a'.repeat(128) + 'b', `*${'a'.repeat(254)}b*`, `*${'a*'.repeat(127)}b*`, '?*'.repeat(128) + 'b']) {
      const started = performance.now();
      expect(globMatches(pattern, name)).to.equal(false);
      expect(performance.now() - started, pattern.slice(0, 20)).to.be.below(100);
    }
  });

  it('compares an exact name or a pattern in Unicode NFC, and never matches a missing name', () => {
    expect(nameMatches('Mu\u0308ller', 'Müller')).to.equal(true);
    expect(nameMatches({ pattern: 'Mu\u0308*' }, 'Müller')).to.equal(true);
    expect(nameMatches({ pattern: '*' }, undefined)).to.equal(false);
    expect(nameMatches('x', undefined)).to.equal(false);
  });
});
