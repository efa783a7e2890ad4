import type { ModelObservation } from '@factum/agent-facts';

/**
 * The most characters one merged observation holds: well under any sensible
 * `maxEventBytes` (1 MiB by default) even if every character needs six to escape.
 */
export const MAX_MERGED_CHARS = 4096;

/**
 * `held` and `next` as one observation, if they are one piece of the stream: text of
 * one kind (answer, reasoning, refusal) following text of the same kind, or arguments
 * of the same tool call following its earlier arguments (`next` naming no other id or
 * name). Undefined when they are not, or when the merged text would pass
 * `MAX_MERGED_CHARS`. Reading the merged pieces in order gives what the pieces gave.
 */
export function mergeObservations(
  held: ModelObservation,
  next: ModelObservation,
): ModelObservation | undefined {
  if (next.kind === 'tool_call_delta') {
    if (held.kind !== 'tool_call_delta' || held.index !== next.index) return undefined;
    if (next.id !== undefined && next.id !== held.id) return undefined;
    if (next.name !== undefined && next.name !== held.name) return undefined;
    const argumentsDelta = joined(held.argumentsDelta, next.argumentsDelta);
    return argumentsDelta === undefined ? undefined : { ...held, argumentsDelta };
  }
  if (held.kind !== next.kind) return undefined;
  const text = joined((held as { text: string }).text, next.text);
  return text === undefined ? undefined : { kind: next.kind, text };
}

function joined(before: string, after: string): string | undefined {
  return before.length + after.length > MAX_MERGED_CHARS ? undefined : before + after;
}
