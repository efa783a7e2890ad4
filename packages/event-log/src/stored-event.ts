import { RuntimeEvent } from '@factum/agent-facts';
import { EventLogError } from './event-log-error.js';

/** An event as the log holds it: its place in the global order and the event itself. */
export type StoredEvent = { readonly sequence: number; readonly event: RuntimeEvent };

/** Decodes a stored row; a row that no longer parses is an error naming its sequence. */
export function decodeRow(row: { sequence: number | string | bigint; body: string }): StoredEvent {
  const sequence = Number(row.sequence);
  try {
    return { sequence, event: RuntimeEvent.parse(JSON.parse(row.body)) };
  } catch (error) {
    throw new EventLogError('corrupt_row', `stored event ${sequence} does not parse: ${describe(error)}`, {
      cause: error,
      sequence,
    });
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
