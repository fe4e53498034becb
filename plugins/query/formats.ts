/**
 * The three result formats of the query interface (decisions §5) and the
 * pieces that write them in a stream, a batch of rows at a time, never the
 * whole result at once.
 *
 * - CSV: PostgreSQL's COPY … (FORMAT csv, HEADER) wherever COPY streams;
 *   `csvLine` writes exactly the same bytes (csv-stringify) where rows are fetched instead
 *   (embedded database): a field is quoted when it holds a comma, a quote, a
 *   line break, or is the empty string (so that it differs from null, which is
 *   written as nothing). Records end with CRLF, as RFC 4180 has them; COPY
 *   ends them with LF, which copy-out.ts turns into CRLF on the way. A line
 *   break inside a quoted value is the value's own and stays as it is.
 * - JSON: an array of row objects, one per line. PostgreSQL renders each row
 *   (row_to_json), so numbers of every kind keep every digit PostgreSQL has
 *   (bigint and numeric included: JSON numbers have no precision limit; a
 *   reader that needs more than 2^53 must read them as big numbers), booleans
 *   are true/false, json columns stay nested, null is null. A repeated column
 *   name gets a suffix (`a`, `a_2`), since readers keep only one of equal keys.
 * - XML: `<result><row><column>value</column>…</row>…</result>`; a null
 *   value leaves its element out (an empty element is the empty string).
 *   Column names are mapped to XML names as SQL/XML does (`?column?` becomes
 *   `_x003F_column_x003F_`); characters XML 1.0 cannot carry become U+FFFD.
 *   A repeated column name is repeated (XML allows it).
 *
 * In every format, timestamps are written `YYYY-MM-DDTHH:mm:ss.SSS` in UTC
 * without a zone and booleans as true/false; both are formatted in SQL
 * (see compose.ts), as are the JSON objects and the XML rows: PostgreSQL
 * does the per-value work in C, the service only frames and forwards it.
 */
import { fragment } from 'xmlbuilder2';
import { stringify, type Options } from 'csv-stringify/sync';

export type Format = 'CSV' | 'JSON' | 'XML';
export const FORMATS: Format[] = ['CSV', 'JSON', 'XML'];

export const MEDIA_TYPES: Record<Format, string> = {
  CSV: 'text/csv; charset=utf-8',
  JSON: 'application/json; charset=utf-8',
  XML: 'application/xml; charset=utf-8',
};

/** The quote and delimiter of the one-text-per-row COPY of JSON and XML (compose.ts, copy-out.ts): bytes those texts never hold unescaped. */
export const TEXT_ROW_QUOTE = 0x01;
export const TEXT_ROW_DELIMITER = 0x02;

/** The headers of a result of this format (a CSV result is the file Query.csv, as the specification shows). */
export function resultHeaders(format: Format): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': MEDIA_TYPES[format] };
  if (format === 'CSV') headers['Content-Disposition'] = 'attachment; filename="Query.csv"';
  return headers;
}

/**
 * CSV as PostgreSQL's COPY CSV writes it, by csv-stringify: a field is quoted
 * when it holds a comma, a quote or a line break (the library's own rule),
 * when it is the empty string (so that it differs from null, written as
 * nothing), and when it is `\.` (COPY's end-of-data marker).
 */
const CSV_OPTIONS: Options = { record_delimiter: '\r\n', quote_record_delimiter: true, quoted_match: [/^$/, /^\\\.$/] };

export function csvLine(values: (string | null)[]): string {
  return stringify([values], CSV_OPTIONS);
}

/** Names a JSON row object can hold: a repeated column name gets `_2`, `_3` …, since a reader keeps only one of equal keys. */
export function uniqueNames(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    let candidate = name;
    for (let i = 2; taken.has(candidate); i++) candidate = `${name}_${i}`;
    taken.add(candidate);
    return candidate;
  });
}

const NAME_START = /[A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\u{10000}-\u{EFFFF}]/u;
const NAME_CHAR = /[-.0-9\u00B7\u0300-\u036F\u203F-\u2040A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\u{10000}-\u{EFFFF}]/u;

const hexEscape = (ch: string) => {
  const code = ch.codePointAt(0)!;
  return `_x${code.toString(16).toUpperCase().padStart(code > 0xffff ? 8 : 4, '0')}_`;
};

/**
 * An SQL identifier as an XML element name, following SQL/XML (ISO 9075-14)
 * as PostgreSQL's query_to_xml applies it: a character that may not stand
 * there becomes `_xHHHH_`, `_x` is protected as `_x005F_x`, a leading `xml`
 * (any case) and every colon are escaped too.
 */
export function xmlName(sql: string): string {
  if (!sql) return '_';
  const chars = [...sql];
  let out = '';
  chars.forEach((ch, i) => {
    if (ch === '_' && chars[i + 1] === 'x') out += '_x005F_';
    else if (ch === ':') out += '_x003A_';
    else if (i === 0 && /^xml/i.test(sql)) out += hexEscape(ch);
    else if (i === 0 ? !NAME_START.test(ch) : !NAME_CHAR.test(ch)) out += hexEscape(ch);
    else out += ch;
  });
  return out;
}

// Characters XML 1.0 cannot carry, not even as references (PostgreSQL text holds no NUL and no lone surrogate).
const INVALID_XML = /[\u0001-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Replaces what XML 1.0 cannot carry with U+FFFD, as xmlbuilder2's invalidCharReplacement does. */
export function validXml(text: string): string {
  INVALID_XML.lastIndex = 0;
  return INVALID_XML.test(text) ? text.replace(INVALID_XML, '\uFFFD') : text;
}

/** SQL that escapes a text expression as XML text: &, < and >, and a carriage return as a reference (a parser would read it as a line feed). */
export function xmlTextSql(expression: string): string {
  return `replace(replace(replace(replace(${expression}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), chr(13), '&#xD;')`;
}

/**
 * The frame of an XML result: xmlbuilder2 writes the declaration, the result
 * element and every column's tags, which also proves each mapped name a
 * valid XML name. Rows themselves are written by PostgreSQL from these tags
 * (compose.ts), with text escaped as xmlbuilder2 escapes it: building each
 * row through xmlbuilder2's node API costs about 150 µs a row, minutes for a
 * million rows.
 */
export class XmlFrame {
  readonly open: string[] = [];
  readonly close: string[] = [];
  readonly head: string;
  readonly tail = '</result>';

  constructor(names: string[]) {
    const marker = 'V';
    for (const name of names) {
      const tag = fragment().ele(xmlName(name)).txt(marker).up().end({ prettyPrint: false, wellFormed: true });
      const at = tag.indexOf(`>${marker}<`);
      this.open.push(tag.slice(0, at + 1));
      this.close.push(tag.slice(at + 1 + marker.length));
    }
    const frame = fragment().ele('result').txt(marker).up().end({ prettyPrint: false });
    this.head = `<?xml version="1.0" encoding="UTF-8"?>${frame.slice(0, frame.indexOf(marker))}`;
  }
}

// The same characters as INVALID_XML, as bytes of UTF-8 read one byte to a character.
const INVALID_XML_BYTES = /[\x01-\x08\x0b\x0c\x0e-\x1f]|\xef\xbf[\xbe\xbf]/;

/** validXml on UTF-8 bytes: untouched (not even decoded) unless they hold a character XML cannot carry. */
export function validXmlBytes(bytes: Buffer): Buffer {
  return INVALID_XML_BYTES.test(bytes.toString('latin1')) ? Buffer.from(validXml(bytes.toString('utf8'))) : bytes;
}

/**
 * Writes the result around the rows PostgreSQL formatted: CSV rows (fetched
 * only; COPY writes CSV itself), JSON objects joined into an array, XML row
 * elements inside the document's frame.
 */
export class RowWriter {
  private first = true;
  private readonly xml?: XmlFrame;

  constructor(private readonly format: Format, private readonly columns: { name: string }[]) {
    if (format === 'XML') this.xml = new XmlFrame(columns.map((c) => c.name));
  }

  start(): string {
    if (this.format === 'CSV') return csvLine(this.columns.map((c) => c.name));
    if (this.format === 'JSON') return '[';
    return this.xml!.head;
  }

  csvRows(rows: (string | null)[][], width: number): string {
    // A row of no columns is an empty record, which csv-stringify would leave out.
    return width ? stringify(rows, CSV_OPTIONS) : '\r\n'.repeat(rows.length);
  }

  /** Rows fetched from a cursor: one text each. */
  fetchedRows(texts: string[]): string {
    if (this.format === 'XML') return validXml(texts.join(''));
    const out = (this.first ? '\n' : ',\n') + texts.join(',\n');
    this.first = false;
    return out;
  }

  /** The end of a result of `rows` rows. */
  end(rows: number): string {
    if (this.format === 'CSV') return '';
    if (this.format === 'JSON') return rows ? '\n]\n' : ']\n';
    return this.xml!.tail;
  }
}
