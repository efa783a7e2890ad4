import type { Clock } from './clock.js';
import type { OpenCodeClient } from './opencode-client.js';
import type { PromptStore } from './prompt-store.js';
import type { TaskSet } from './task-set.js';

/** Time budgets of a backend, in milliseconds. */
export type ConversationTimeouts = {
  /** Whole life of one prompt observation, from `prompt()` to its terminal. */
  readonly promptMs: number;
  /** Whole life of one abort, from `abort()` to its result, retries included. */
  readonly abortMs: number;
  /** One short HTTP exchange (session, status, abort). */
  readonly requestMs: number;
  /** After the answer, how long to wait for the server's idle event (trailing deltas). */
  readonly settleMs: number;
  /** One bookkeeping transaction after the observation ended (releasing a waiter). */
  readonly cleanupMs: number;
};

/** What the driver and the reconciliation share with the backend that owns them. */
export type BackendContext = {
  readonly sessionId: string;
  readonly key: string;
  readonly store: PromptStore;
  readonly client: OpenCodeClient;
  readonly clock: Clock;
  readonly tasks: TaskSet;
  readonly timeouts: ConversationTimeouts;
  readonly retryDelayMs: number;
  /** Aborts when the backend closes. */
  readonly closing: AbortSignal;
};
