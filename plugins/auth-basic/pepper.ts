/**
 * Parsing of SERVICE_PEPPER_STORE: `<pid>=<value>;<pid>=<value>;...`.
 * The first entry is the active pepper for new passwords; the others are
 * kept only to verify passwords hashed before the active pepper changed.
 */

export const PEPPER_STORE_SETTING = 'SERVICE_PEPPER_STORE';

// Shorter secrets add too little to the password hash to be worth the risk
// of an operator believing they are protected.
const MIN_PEPPER_BYTES = 16;

export type PepperStore = {
  current?: { id: string; secret: Buffer };
  byId: Map<string, Buffer>;
};

/** A setting that stops the start; the message names the setting, never a secret. */
// One ConfigError for the whole service, so that the start reports it as a configuration error.
export { ConfigError } from '../../runtime/host.ts';
import { ConfigError } from '../../runtime/host.ts';

export function parsePepperStore(text: string | undefined): PepperStore {
  const byId = new Map<string, Buffer>();
  // Empty entries are skipped so that a trailing ';' is harmless.
  const entries = (text ?? '').split(';').map((entry) => entry.trim());
  entries.forEach((entry, index) => {
    if (entry === '') return;
    const { id, secret } = parseEntry(entry, index + 1);
    if (byId.has(id)) throw invalid(`pepper ID "${id}" appears more than once`);
    byId.set(id, secret);
  });
  return { current: firstPepper(byId), byId };
}

function parseEntry(entry: string, position: number): { id: string; secret: Buffer } {
  const separator = entry.indexOf('=');
  // The entry itself may be a bare secret, so only its position is named.
  if (separator < 0) throw invalid(`entry ${position} has no "=" (expected <pid>=<value>)`);
  const id = entry.slice(0, separator).trim();
  const value = entry.slice(separator + 1).trim();
  if (id === '') throw invalid(`entry ${position} has an empty pepper ID`);
  // A bare padded secret ("c2VjcmV0...==") splits into a secret-like ID and
  // a value of only '=': name its position, not the ID.
  if (value.replace(/=/g, '') === '') throw invalid(`entry ${position} has no value`);
  return { id, secret: decodeSecret(id, value) };
}

function decodeSecret(id: string, value: string): Buffer {
  const secret = Buffer.from(value, 'base64');
  // Node's decoder silently skips invalid characters; a round trip catches them.
  const canonical = secret.toString('base64');
  if (value !== canonical && value !== canonical.replace(/=+$/, '')) {
    throw invalid(`the value of pepper ID "${id}" is not valid Base64`);
  }
  if (secret.length < MIN_PEPPER_BYTES) {
    throw invalid(`the value of pepper ID "${id}" is shorter than ${MIN_PEPPER_BYTES} bytes`);
  }
  return secret;
}

function firstPepper(byId: Map<string, Buffer>): PepperStore['current'] {
  const first = byId.entries().next();
  return first.done ? undefined : { id: first.value[0], secret: first.value[1] };
}

function invalid(message: string): ConfigError {
  return new ConfigError(PEPPER_STORE_SETTING, message);
}
