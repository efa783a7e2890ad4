import { shownStream } from './terminal-text.js';

/** How much of a long value `show` prints unless `--full` is given. */
export const EXCERPT_LINES = 12;
const EXCERPT_CHARS = 1_500;

/**
 * A value as text: strings as they are; an object's multi-line string fields (a file's
 * content, a command's output) as their own lines under `name:`, after the other fields
 * as one line of JSON; anything else as indented JSON.
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const blocks: string[] = [];
    const rest: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(value)) {
      if (typeof field === 'string' && field.includes('\n')) blocks.push(`${name}:\n${field}`);
      else rest[name] = field;
    }
    if (blocks.length > 0) return [JSON.stringify(rest), ...blocks].join('\n');
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}

/**
 * The lines of `text` to print under a timeline entry, each prefixed with `indent`:
 * all of them with `full`, else the first few with a count of the rest.
 */
export function excerpt(
  text: string,
  options: { readonly full: boolean; readonly indent: string },
): string[] {
  // A tool result or model text is untrusted: it must not move the cursor, recolour or
  // retitle the terminal that prints it. Newlines stay; they are split into lines here.
  const clean = shownStream(text).replaceAll('\t', '  ').replace(/\s+$/, '');
  if (clean === '') return [];
  let lines = clean.split('\n');
  let more = 0;
  if (!options.full) {
    let chars = 0;
    let kept = 0;
    while (kept < lines.length && kept < EXCERPT_LINES && chars + lines[kept]!.length <= EXCERPT_CHARS) {
      chars += lines[kept]!.length + 1;
      kept += 1;
    }
    if (kept === 0) {
      lines = [`${lines[0]!.slice(0, EXCERPT_CHARS)}…`, ...lines.slice(1)];
      kept = 1;
    }
    more = lines.length - kept;
    lines = lines.slice(0, kept);
  }
  const shown = lines.map((line) => `${options.indent}${line}`);
  if (more > 0) shown.push(`${options.indent}… ${more} more line${more === 1 ? '' : 's'} (--full shows all)`);
  return shown;
}
