import { FactumError } from './factum-error.js';

const marker = Symbol.for('@factum/fact-parse-error');

/** One field that failed to parse: where it is and what was wrong. */
export type FactIssue = { readonly path: string; readonly message: string };

/**
 * A fact, event or other wire value did not match its schema. The message names the
 * path of the first bad field (`fact.call.origin.kind`), `issues` lists them all.
 */
export class FactParseError extends FactumError {
  readonly issues: readonly FactIssue[];
  readonly [marker] = true;

  constructor(what: string, issues: readonly FactIssue[], options: { cause?: unknown } = {}) {
    const first = issues[0];
    const where = first ? `${first.path || '(root)'}: ${first.message}` : 'no detail';
    super('fact_parse', `malformed ${what} at ${where}`, options);
    this.issues = issues;
  }

  static override isInstance(value: unknown): value is FactParseError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
