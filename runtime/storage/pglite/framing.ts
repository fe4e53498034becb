/**
 * The PostgreSQL wire protocol's framing, as far as the embedded database's
 * connections need it (socket.ts): the messages a connection answers on the
 * database's behalf (after an interrupt, for COPY FROM STDIN) and the
 * buffers it hands to the database's thread.
 */

export const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
export const COPY_FROM_STDIN = /^\s*copy\s[\s\S]*\sfrom\s+stdin\b/i;
/** Text format, no column formats: pg-copy-streams only waits for the message. */
export const COPY_IN_RESPONSE = Buffer.from([0x47, 0, 0, 0, 7, 0, 0, 0]);

/** One fresh ArrayBuffer holding the parts, so that it can be transferred (never Node's shared pool). */
export function toTransferable(parts: Buffer[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(new ArrayBuffer(total));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Whether the text at `start` begins with COPY (after blanks): only then is a query decoded to look for FROM STDIN. */
export function startsWithCopy(message: Buffer, start: number): boolean {
  let at = start;
  while (at < message.length && (message[at] === 0x20 || (message[at] >= 0x09 && message[at] <= 0x0d))) at++;
  return at + 4 <= message.length && message.toString('latin1', at, at + 4).toLowerCase() === 'copy';
}

export function cString(message: Buffer, start: number): string {
  const end = message.indexOf(0, start);
  return message.toString('utf8', start, end < 0 ? message.length : end);
}

export function backendMessage(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(5 + body.length);
  out.write(type, 0, 'latin1');
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

export function simple(type: string): Buffer {
  return backendMessage(type, Buffer.alloc(0));
}

export function readyForQuery(status: 'I' | 'T' | 'E'): Buffer {
  return backendMessage('Z', Buffer.from(status, 'latin1'));
}

export function commandComplete(tag: string): Buffer {
  return backendMessage('C', Buffer.from(`${tag}\0`, 'utf8'));
}

export function parameterDescriptionNone(): Buffer {
  return backendMessage('t', Buffer.alloc(2));
}

export function errorResponse(severity: 'ERROR' | 'FATAL', code: string, message: string): Buffer {
  const fields = `S${severity}\0V${severity}\0C${code}\0M${message}\0\0`;
  return backendMessage('E', Buffer.from(fields, 'utf8'));
}

export function abortedError(): Buffer {
  return errorResponse('ERROR', '25P02', 'current transaction is aborted, commands ignored until end of transaction block');
}
