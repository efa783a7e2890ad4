import type { RuntimeEvent } from '@factum/agent-facts';
import type { WriterStamp } from './invocation-owner.js';
import type { SessionHead } from './session-head.js';
import type { BatchInfo, BatchResult } from './staged-write.js';

/**
 * What the rules read of an event: its id, invocation and fact; of a fact judged by its
 * kind alone, only the kind (`JUDGED_BY_KIND`).
 */
export type JudgedEvent = Pick<RuntimeEvent, 'id' | 'invocation'> & {
  readonly fact: RuntimeEvent['fact'] | { readonly kind: RuntimeEvent['fact']['kind'] };
};

/**
 * A staged write as it crosses to the writer thread: the event's bytes, to store, and
 * what the rules read of it, so that the thread parses nothing.
 */
export type WireWrite = {
  readonly event: JudgedEvent;
  readonly body: string;
  readonly bytes: number;
  readonly digest: string;
  readonly result?: { readonly digest: string; readonly text: string };
  readonly writer?: WriterStamp;
  readonly takeover?: boolean;
  /** Shared by a group's writes, and still shared after the crossing (one message). */
  readonly onHead?: SessionHead;
};

/** A batch failure's cause, reduced to what survives the crossing. */
export type WireCause = { readonly name: string; readonly message: string; readonly code?: string };

/** Messages to the writer thread. `id` names the request its reply answers. */
export type ToWriterThread =
  | { readonly type: 'open'; readonly id: number; readonly path: string; readonly pauses: boolean }
  | {
      readonly type: 'write';
      readonly id: number;
      readonly log: number;
      readonly writes: readonly WireWrite[];
    }
  | { readonly type: 'close'; readonly id: number; readonly log: number };

/** A batch result as it crosses back. */
export type WireBatchResult =
  | Extract<BatchResult, { kind: 'committed' }>
  | (Omit<Extract<BatchResult, { kind: 'failed' }>, 'cause'> & { readonly cause: WireCause });

/** Messages from the writer thread. */
export type FromWriterThread =
  | {
      readonly type: 'done';
      readonly id: number;
      readonly result?: WireBatchResult;
      readonly error?: WireCause;
    }
  | { readonly type: 'before_commit'; readonly log: number; readonly batch: BatchInfo };

/**
 * Slots of the shared word array a paused commit waits on: the main thread sets
 * `THREW` (1 when the hook threw), then `RELEASED`, and wakes the thread.
 */
export const RELEASED = 0;
export const THREW = 1;

/** Reduces any thrown value to a `WireCause`. */
export function toWireCause(error: unknown): WireCause {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { name: 'Error', message: String(error) };
}
