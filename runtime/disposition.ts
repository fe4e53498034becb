/**
 * Content-Disposition: reading the one of an uploaded part, and writing the
 * one of a download (RFC 6266): `filename*` carries the name in UTF-8 and
 * `filename` an ASCII stand-in for clients that do not read `filename*`.
 */

/** `form-data; name="file"; filename="a.yaml"; filename*=UTF-8''%C3%A4.yaml` → type and parameters (ext-values decoded). */
export function parseDisposition(value: string): { type: string; params: Record<string, string> } | null {
  const m = /^\s*([^;\s]+)\s*/.exec(value);
  if (!m) return null;
  const params: Record<string, string> = {};
  const param = /;\s*([^=;\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g;
  let p: RegExpExecArray | null;
  param.lastIndex = m[0].length;
  while ((p = param.exec(value))) {
    const name = p[1].toLowerCase();
    let v = p[2].trim();
    if (v.startsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name.endsWith('*')) {
      const ext = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(v);
      const decoded = ext ? extDecoded(ext[1], ext[2]) : null;
      if (decoded === null) continue;
      v = decoded;
    }
    params[name] = v;
  }
  return { type: m[1].toLowerCase(), params };
}

/** An RFC 5987 ext-value in UTF-8 or ISO-8859-1; null for other charsets and broken encodings. */
function extDecoded(charset: string, text: string): string | null {
  const encoding = charset.toLowerCase() === 'utf-8' ? 'utf-8' : charset.toLowerCase() === 'iso-8859-1' ? 'latin1' : null;
  if (!encoding) return null;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '%' && /^[0-9a-f]{2}$/i.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const code = text.charCodeAt(i);
      if (code > 0x7e) return null;
      bytes.push(code);
    }
  }
  if (encoding === 'latin1') return Buffer.from(bytes).toString('latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

/** The file name without a client's folders or control characters, at most 255 characters. */
export function cleanFilename(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const base = name.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return base ? [...base].slice(0, 255).join('') : undefined;
}

/** German letters have customary ASCII spellings; other letters lose their accents; anything else becomes `_`. */
function asciiFallback(name: string): string {
  const spelled = name.replace(/[ÄÖÜäöüß]/g, (c) => ({ Ä: 'Ae', Ö: 'Oe', Ü: 'Ue', ä: 'ae', ö: 'oe', ü: 'ue', ß: 'ss' })[c]!);
  return spelled.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
}

/** RFC 5987 attr-chars stay; everything else is percent-encoded UTF-8. */
function extValue(name: string): string {
  return `UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export function attachment(filename: string): string {
  const fallback = asciiFallback(filename);
  return fallback === filename ? `attachment; filename="${filename}"` : `attachment; filename="${fallback}"; filename*=${extValue(filename)}`;
}
