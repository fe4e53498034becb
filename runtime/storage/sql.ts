/** Text as an SQL string literal (standard_conforming_strings, as PostgreSQL and PGlite have it). */
export const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;
