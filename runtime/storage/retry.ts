/**
 * Write transactions that the database could not complete for reasons of
 * timing alone run again, a bounded number of times: a deadlock (40P01), a
 * serialization failure (40001), a lock not granted within `lock_timeout`
 * (55P03), a unique key a concurrent request took after the checks found it
 * free (23505: the next attempt's checks see the key taken, or find the
 * object to change), and a version moved under an optimistic update. Each
 * attempt gets a fresh transaction; whatever it returns is used only once it
 * committed. When the attempts are used up the caller gets 503 with
 * Retry-After: a race is never the client's fault, so never a 4xx or a 500.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { createError } from '../errors.ts';

/** An optimistic update found another version than the one it read: the write is repeated on the current one. */
export class RaceLost extends Error {
  constructor() {
    super('objects changed concurrently');
  }
}

const RETRYABLE_CODES = new Set(['40P01', '40001', '55P03', '23505']);

export function isRetryable(err: unknown): boolean {
  return err instanceof RaceLost || RETRYABLE_CODES.has((err as { code?: string })?.code ?? '');
}

export interface RetryPolicy {
  attempts: number;
  /** The wait before the second attempt; it doubles with every further one, each drawn at random from its upper half. */
  firstDelayMs: number;
}

/** Five attempts wait about 150 ms in all besides their own work: short beside a client's own retry, long enough to let a competing write commit. */
export const WRITE_RETRIES: RetryPolicy = { attempts: 5, firstDelayMs: 10 };

export async function retryingTransaction<T>(knex: Knex, work: (trx: Knex.Transaction) => Promise<T>, policy: RetryPolicy = WRITE_RETRIES): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await knex.transaction(work);
    } catch (err) {
      if (!isRetryable(err)) throw err;
      if (attempt >= policy.attempts) throw createError('UNAVAILABLE', {}, [], { 'Retry-After': '1' });
      const delay = policy.firstDelayMs * 2 ** (attempt - 1);
      await sleep(delay / 2 + Math.random() * delay / 2);
    }
  }
}
