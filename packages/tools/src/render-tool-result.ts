/** How much of a result the model sees by default: 16 KiB of its JSON text. */
export const DEFAULT_RESULT_LIMIT = 16 * 1024;

/**
 * The text a model sees for a tool result: its JSON, cut at `limitBytes` (on a
 * character boundary) with a marker saying how much was left out. The whole result
 * stays in the log; only the model's view is bounded.
 */
export function renderToolResult(value: unknown, limitBytes = DEFAULT_RESULT_LIMIT): string {
  const text = JSON.stringify(value ?? null);
  const size = Buffer.byteLength(text);
  if (size <= limitBytes) return text;
  let cut = Buffer.from(text).subarray(0, limitBytes).toString('utf8');
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return `${cut}\n[truncated: showing ${Buffer.byteLength(cut)} of ${size} bytes; the full result is in the log]`;
}
