/**
 * Every secret the suite uses (passwords, bearer tokens, access keys, API
 * tokens, peppers, the directory's search password), in one registry: the
 * root hook checks at the very end that none of them appears in any log line
 * of any test service (issue "Every sign-in method": "a test greps the logs
 * of the whole suite for the secrets it used"). Secrets reach it from the
 * test helpers (the credentials of every request through TestService, keys
 * the service hands out, settings named like a secret) and from `secret()`.
 */

const registry = new Map<string, string>();
/** Shorter values would be found in log lines by chance. */
const MIN_LENGTH = 6;

/** Remembers a secret for the final log check; `kind` tells which one was found. */
export function rememberSecret(value: string, kind = 'secret'): string {
  if (typeof value === 'string' && value.length >= MIN_LENGTH && !registry.has(value)) registry.set(value, kind);
  return value;
}

const SECRET_HEADERS = new Set(['authorization', 'service-access-key', 'proxy-authorization']);
const SECRET_SETTING = /PASSWORD|TOKEN|PEPPER|SECRET/;

/** The secret parts of a request's headers: credentials after their scheme, access keys. */
export function rememberHeaderSecrets(headers: Headers): void {
  for (const [name, value] of headers) {
    if (!SECRET_HEADERS.has(name.toLowerCase())) continue;
    const key = name.toLowerCase() === 'service-access-key';
    const space = value.trim().indexOf(' ');
    // A scheme alone (`Bearer`) carries no credential.
    if (!key && space < 0) continue;
    const credential = key ? value : value.trim().slice(space + 1);
    rememberSecret(credential.trim(), name.toLowerCase());
    // A basic credential's password alone is a secret too.
    if (/^basic /i.test(value)) {
      const decoded = Buffer.from(credential.trim(), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon >= 0) rememberSecret(decoded.slice(colon + 1), 'password');
    }
  }
}

/** The values of settings named like secrets (SERVICE_*_PASSWORD, SERVICE_API_KEY_TOKEN, SERVICE_PEPPER_STORE …). */
export function rememberSettingSecrets(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (!value || !SECRET_SETTING.test(name)) continue;
    rememberSecret(value, name);
    // Each pepper of the store on its own.
    if (name === 'SERVICE_PEPPER_STORE') for (const entry of value.split(';')) rememberSecret(entry.slice(entry.indexOf('=') + 1), name);
  }
}

/** The secrets found in the lines, each with the first line holding it (raw or JSON-escaped). */
export function secretsIn(lines: readonly string[]): { kind: string; value: string; line: string }[] {
  const found: { kind: string; value: string; line: string }[] = [];
  for (const [value, kind] of registry) {
    const escaped = JSON.stringify(value).slice(1, -1);
    const line = lines.find((l) => l.includes(value) || l.includes(escaped));
    if (line !== undefined) found.push({ kind, value, line });
  }
  return found;
}

export function registeredSecretCount(): number {
  return registry.size;
}
