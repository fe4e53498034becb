/**
 * V8 flags the service's process runs with (`npm start` passes them; see
 * package.json). Node cannot take them once it has started, so they belong
 * on the command line.
 *
 * `--heap-growing-percent=100`: after each full garbage collection the old
 * generation may grow to twice what survived it. V8's own factor falls as
 * low as 1.3-1.45 once its memory reducer has run (it does when the service
 * idles for a few seconds). With about 35 MB surviving, the room left
 * (about 16 MB) is then no larger than the young generation, and V8 starts
 * incremental marking again right after every full collection: during a
 * query export under REST traffic the service ran a full collection every
 * 300-400 ms, each holding the event loop up to 15 ms plus marking steps up
 * to 24 ms, and GETs queued behind them (bench/query.ts, GETs at 200/s:
 * p99 3-7 times its p99 at rest, in every run after the first). With the
 * flag, a 35-50 MB heap leaves 35-50 MB of room, full collections come
 * seconds apart, and the same runs gave 1.1-1.7. The price is a heap up to
 * twice its live size (tens of MB here).
 */
export const HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=100'];

/** A flag's name as V8 reads it: before any `=`, with `_` and `-` alike. */
const flagName = (flag: string) => flag.split('=')[0].replace(/_/g, '-');

/**
 * The flags of HEAP_FLAGS this process was started without. A flag given
 * with another value (`--heap-growing-percent=150`) or spelling
 * (`--heap_growing_percent=100`) counts as given: whoever started node chose it.
 */
export function missingHeapFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const given = new Set(execArgv.map(flagName));
  return HEAP_FLAGS.filter((flag) => !given.has(flagName(flag)));
}
