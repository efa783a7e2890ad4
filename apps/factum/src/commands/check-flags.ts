import { CliError } from './cli-error.js';

/** Flags whose values are text, never numbers: `--session 007` is session "007". */
const TEXT_FLAGS = [
  'session',
  'idempotency-key',
  'model',
  'api-key',
  'token',
  'base-url',
  'dir',
  'host',
  'postgres',
  'otlp',
  'workspace',
  'script',
  'note',
  'result',
];

/** Flags whose value must be an http(s) URL. */
const URL_FLAGS = ['base-url', 'otlp'];

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * The command-line parser turns values that look like numbers into numbers (`""` into
 * 0, `007` into 7). Text flags are put back as they were typed, from the raw arguments.
 */
export function restoreTextFlags(argv: readonly string[], options: Record<string, unknown>): void {
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i]!;
    if (token === '--') break;
    if (!token.startsWith('--')) continue;
    const equals = token.indexOf('=');
    const name = token.slice(2, equals === -1 ? undefined : equals);
    if (!TEXT_FLAGS.includes(name)) continue;
    if (equals !== -1) options[camel(name)] = token.slice(equals + 1);
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) options[camel(name)] = argv[i + 1];
  }
}

/**
 * Refuses flag values that cannot be meant, with one line naming the flag: an empty
 * text value, a URL flag that is not an http(s) URL. Nothing has been opened or
 * written when this throws.
 */
export function checkFlags(options: Record<string, unknown>): void {
  for (const name of TEXT_FLAGS) {
    const value = options[camel(name)];
    if (value === undefined) continue;
    if (Array.isArray(value)) throw new CliError('usage', `--${name} was given more than once`);
    if (typeof value !== 'string' || value.trim() === '')
      throw new CliError(
        'usage',
        `--${name} needs a value (got ${JSON.stringify(value === true ? '' : value)})`,
      );
  }
  for (const name of URL_FLAGS) {
    const value = options[camel(name)];
    if (typeof value === 'string' && !isHttpUrl(value))
      // The value is not echoed: a mistyped URL may carry a key in its query.
      throw new CliError(
        'usage',
        `--${name} must be an http:// or https:// URL, like http://127.0.0.1:11434/v1`,
      );
  }
}

/** Whether `text` is an absolute http(s) URL. */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
