/** A value written out as a PostgreSQL literal, for a statement sent without parameters. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot write ${value} as a PostgreSQL literal`);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return quote(value);
  throw new TypeError(`cannot write a ${typeof value} as a PostgreSQL literal`);
}

/**
 * A string literal, right whatever `standard_conforming_strings` says: quotes doubled,
 * and a string with a backslash written as an escape string with it doubled.
 */
export function quote(text: string): string {
  const quoted = text.replaceAll("'", "''");
  return text.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}
