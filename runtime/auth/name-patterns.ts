/**
 * Name conditions of access rules (specification, access rules 6: family
 * and given names may be used): a name is either matched exactly, or by a
 * pattern in which `*` stands for any run of characters (none included) and
 * `?` for exactly one; every other character stands for itself, and the
 * whole name must match. Both sides are compared in Unicode NFC, case
 * counting, as group and tenant IDs are compared.
 *
 * Why not a regular expression: a tenant administrator writes the pattern
 * and a sign-in supplies the name, and JavaScript's backtracking engine
 * takes time exponential (or polynomial of the pattern's degree) in the
 * name for patterns such as `*a*a*a*b`; glob libraries compile to such
 * expressions. Here the pattern is cut at its `*`s into fixed-length pieces:
 * the first must stand at the start, the last at the end, and each one
 * between at its leftmost place after the one before (which is the best
 * place for a `*` pattern). That costs at most length(name) × length(pattern)
 * character comparisons, with no backtracking.
 */

/** A name condition: the name itself, or `{ "pattern": "M*ller" }`. */
export type NameMatch = string | { pattern: string };

export const NAME_MATCH_SCHEMA = {
  type: ['string', 'object'],
  minLength: 1,
  maxLength: 1000,
  additionalProperties: false,
  required: ['pattern'],
  properties: { pattern: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

export function nameMatches(condition: NameMatch, name: string | undefined): boolean {
  if (name === undefined) return false;
  const text = name.normalize('NFC');
  if (typeof condition === 'string') return condition.normalize('NFC') === text;
  return globMatches(condition.pattern.normalize('NFC'), text);
}

export function globMatches(pattern: string, name: string): boolean {
  const text = Array.from(name);
  const pieces = pattern.split('*').map((piece) => Array.from(piece));
  if (pieces.length === 1) return text.length === pieces[0].length && pieceAt(pieces[0], text, 0);
  const first = pieces[0];
  const last = pieces[pieces.length - 1];
  const end = text.length - last.length;
  if (end < first.length || !pieceAt(first, text, 0) || !pieceAt(last, text, end)) return false;
  let from = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const at = leftmost(piece, text, from, end);
    if (at < 0) return false;
    from = at + piece.length;
  }
  return true;
}

function pieceAt(piece: string[], text: string[], at: number): boolean {
  return piece.every((c, i) => c === '?' || c === text[at + i]);
}

/** Where the piece first stands within text[from, end), or -1. */
function leftmost(piece: string[], text: string[], from: number, end: number): number {
  for (let at = from; at + piece.length <= end; at++) if (pieceAt(piece, text, at)) return at;
  return -1;
}
