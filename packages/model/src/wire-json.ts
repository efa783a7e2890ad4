import { ModelError } from './model-error.js';

/** A JSON object as it came off the wire: every field still to be checked. */
export type WireObject = Readonly<Record<string, unknown>>;

/** Parses one event's data as a JSON object, or throws a protocol error quoting it. */
export function parseWireObject(data: string, what: string): WireObject {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    // The parser's own message quotes the input again; the quote below is enough.
    throw new ModelError('protocol', `the provider sent ${what} that is not JSON: ${quote(data)}`, {
      issue: 'malformed_json',
    });
  }
  const object = asObject(value);
  if (object === undefined) {
    throw new ModelError('protocol', `the provider sent ${what} that is not a JSON object: ${quote(data)}`, {
      issue: 'malformed_json',
    });
  }
  return object;
}

export function asObject(value: unknown): WireObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as WireObject)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A non-negative integer count, or 0. */
export function asCount(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;
}

/** At most 200 characters of provider text, for an error message. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
