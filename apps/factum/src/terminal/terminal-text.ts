import stripAnsi from 'strip-ansi';

/**
 * Characters a terminal may act on rather than show: C0 controls and DEL (a lone ESC,
 * a carriage return that rewrites a line, a backspace), C1 controls (U+0080–U+009F,
 * CSI and OSC in one character on some terminals), bidirectional overrides and
 * isolates that reorder what is shown, and the Unicode line separators.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;
const CONTROL_BUT_LINES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;
/** Factum's own colours: Select Graphic Rendition, and nothing else. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const SGR = /\u001b\[[0-9;]*m/g;

function escapeControl(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  if (character === '\n') return '\\n';
  if (character === '\r') return '\\r';
  if (character === '\t') return '\\t';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * A string from the model, a tool, a client or the user — text, a path, an id, an
 * error message — as it may be printed inside one line: escape sequences removed
 * (strip-ansi), every remaining control character shown as an escape (`\n`, `\x1b`,
 * `\u{202e}`), so it can neither move the cursor, set a title, write the clipboard
 * (OSC 52), nor forge a line.
 *
 * @example
 * terminal.line(`${c.bold('session')} ${shownText(sessionId)}`);
 */
export function shownText(value: string): string {
  return stripAnsi(value).replace(CONTROL, escapeControl);
}

/** Streamed text (a model's answer): like `shownText`, but newlines and tabs stay as they are. */
export function shownStream(value: string): string {
  return stripAnsi(value).replace(CONTROL_BUT_LINES, escapeControl);
}

/**
 * The terminal's last line of defence, applied to everything it writes: Factum's own
 * colours (SGR sequences) pass, every other escape sequence is removed and control
 * characters other than newline and tab are escaped. A string that reached a print
 * point without `shownText` still cannot act on the terminal.
 */
export function terminalSafe(output: string): string {
  let safe = '';
  let last = 0;
  for (const match of output.matchAll(SGR)) {
    safe += shownStream(output.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  return safe + shownStream(output.slice(last));
}
