/**
 * Password hashing for basic authentication: argon2id with a random salt per
 * hash and the active pepper as argon2's secret (keyed hashing), so a stolen
 * database alone is not enough to test password guesses.
 */
import { randomBytes } from 'node:crypto';
import * as argon2 from 'argon2';
import type { PepperStore } from './pepper.ts';

export type HashParams = {
  type: typeof argon2.argon2id | typeof argon2.argon2i | typeof argon2.argon2d;
  memoryCost: number;
  timeCost: number;
  parallelism: number;
};

/** OWASP Password Storage Cheat Sheet minimum for argon2id: 19 MiB, 2 passes, 1 lane. */
export const OWASP_PARAMS: HashParams = Object.freeze({
  type: argon2.argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
});

/** What is kept per user: the encoded hash and the pepper it was keyed with. */
export type StoredPassword = { hash: string; pepperId: string | null };

export type PasswordCheck = { ok: boolean; needsRehash: boolean };

// Bounds the work an unauthenticated caller can ask for.
const MAX_PASSWORD_LENGTH = 1024;

const TYPE_NAMES: Record<HashParams['type'], string> = {
  [argon2.argon2d]: 'argon2d',
  [argon2.argon2i]: 'argon2i',
  [argon2.argon2id]: 'argon2id',
};

const REJECTED: PasswordCheck = Object.freeze({ ok: false, needsRehash: false });

export class PasswordHasher {
  constructor(
    private readonly store: PepperStore,
    private readonly params: HashParams = OWASP_PARAMS,
  ) {}

  async hash(password: string): Promise<StoredPassword> {
    if (!isAcceptable(password)) {
      throw new Error(`A password must have 1 to ${MAX_PASSWORD_LENGTH} characters`);
    }
    const pepper = this.store.current;
    const hash = await argon2.hash(canonical(password), { ...this.params, secret: pepper?.secret });
    return { hash, pepperId: pepper?.id ?? null };
  }

  /** Never throws: a removed pepper or a damaged hash is simply a failed check. */
  async verify(password: string, stored: StoredPassword): Promise<PasswordCheck> {
    if (!isAcceptable(password)) return REJECTED;
    const known = stored.pepperId === null || this.store.byId.has(stored.pepperId);
    // Without its pepper the hash cannot match; checking it anyway keeps the
    // response time from telling which users' passwords became unverifiable.
    const secret = stored.pepperId === null ? undefined : this.store.byId.get(stored.pepperId) ?? UNKNOWN_PEPPER;
    if (!(await matches(stored.hash, canonical(password), secret)) || !known) return REJECTED;
    return { ok: true, needsRehash: this.needsRehash(stored) };
  }

  /** True when the hash would come out differently if made today. */
  private needsRehash(stored: StoredPassword): boolean {
    const { type, memoryCost, timeCost, parallelism } = this.params;
    return (
      stored.pepperId !== (this.store.current?.id ?? null) ||
      // argon2.needsRehash compares cost parameters only, not the variant.
      !stored.hash.startsWith(`$${TYPE_NAMES[type]}$`) ||
      argon2.needsRehash(stored.hash, { memoryCost, timeCost, parallelism })
    );
  }
}

// Stands in for a pepper that was removed from the store.
const UNKNOWN_PEPPER = randomBytes(32);

/**
 * One form per password (Unicode NFC, as RFC 8265 prescribes for passwords):
 * an umlaut typed as one character or as a letter with a combining mark is
 * the same password.
 */
function canonical(password: string): string {
  return password.normalize('NFC');
}

function isAcceptable(password: string): boolean {
  return typeof password === 'string' && password.length > 0 && password.length <= MAX_PASSWORD_LENGTH;
}

async function matches(hash: string, password: string, secret: Buffer | undefined): Promise<boolean> {
  try {
    return await argon2.verify(hash, password, secret ? { secret } : {});
  } catch {
    // argon2 throws on a hash string it cannot parse.
    return false;
  }
}
