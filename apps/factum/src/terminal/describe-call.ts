import { shownText } from './terminal-text.js';

/** At most this many characters of a value in one line. */
const WIDTH = 72;

/** One line of text, cut to `width` with an ellipsis, safe to print (see `shownText`). */
export function oneLine(text: string, width = WIDTH): string {
  const flat = shownText(text.replace(/\s+/g, ' ').trim());
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

function field(input: unknown, name: string): unknown {
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[name] : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `1 entry`, `2 entries`: a count with its noun. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** How a call reads in a timeline: the tool and the gist of its input, safe to print. */
export function describeCall(name: string, input: unknown): string {
  return shownText(callGist(name, input));
}

function callGist(name: string, input: unknown): string {
  switch (name) {
    case 'read_file':
    case 'list_files':
      return `${name} ${text(field(input, 'path')) ?? '.'}`;
    case 'write_file': {
      const content = text(field(input, 'content')) ?? '';
      return `${name} ${text(field(input, 'path')) ?? '?'} (${Buffer.byteLength(content)} bytes)`;
    }
    case 'search':
      return `${name} ${JSON.stringify(text(field(input, 'query')) ?? '')}`;
    case 'shell':
      return `${name} $ ${oneLine(text(field(input, 'command')) ?? '', 56)}`;
    case 'exec':
      return 'exec (code cell)';
    default:
      return `${name} ${oneLine(JSON.stringify(input ?? null), 56)}`;
  }
}

/** How a successful result reads in a timeline: a short summary, never the whole value, safe to print. */
export function describeResult(name: string, value: unknown): string {
  return shownText(resultGist(name, value));
}

function resultGist(name: string, value: unknown): string {
  const count = (key: string) => {
    const list = field(value, key);
    return Array.isArray(list) ? list.length : 0;
  };
  switch (name) {
    case 'read_file':
      return `${field(value, 'bytes') ?? '?'} bytes${field(value, 'truncated') === true ? ' (truncated)' : ''}`;
    case 'write_file':
      return `wrote ${field(value, 'bytes') ?? '?'} bytes`;
    case 'list_files':
      return plural(count('entries'), 'entry', 'entries');
    case 'search':
      return `${plural(count('matches'), 'match', 'matches')} in ${plural(Number(field(value, 'filesSearched') ?? 0), 'file')}`;
    case 'shell': {
      const exit = field(value, 'exitCode');
      const cancelled = field(value, 'cancelled') === true ? ', stopped by cancellation' : '';
      return `exit ${exit === null ? `by ${String(field(value, 'signal'))}` : String(exit)}${cancelled}`;
    }
    case 'exec':
      return `output ${JSON.stringify(oneLine(text(field(value, 'output')) ?? '', 48))}`;
    default:
      return oneLine(JSON.stringify(value ?? null), 48);
  }
}

/** The source of a code cell as a few lines for a timeline (the rest is counted, not shown). */
export function cellSource(input: unknown, maxLines = 8): string[] {
  const lines = (text(field(input, 'code')) ?? '').split('\n');
  const shown = lines
    .slice(0, maxLines)
    .map((line) => shownText(line.length > 96 ? `${line.slice(0, 95)}…` : line));
  return lines.length > maxLines ? [...shown, `… ${lines.length - maxLines} more lines`] : shown;
}
