/**
 * A point in time as the interfaces take it (`version`, `Accept-Version`):
 * epoch milliseconds, digits only, no later than a JavaScript date can be.
 * One rule for the REST and the query interface; each answers a bad value
 * in its own error format.
 */
const MAX_EPOCH_MS = 8_640_000_000_000_000;

/** The time the text names, or undefined when it is no such time. */
export function epochMillis(text: string): number | undefined {
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const ms = Number(text);
  return ms <= MAX_EPOCH_MS ? ms : undefined;
}
