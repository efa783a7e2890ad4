import { z } from 'zod';
import type { InvocationOutcome } from './fact-schema.js';

/** How an invocation stands once it has ended, as projections report it. */
export const TerminalStatusSchema = z.enum([
  'completed',
  'failed',
  'cancelled',
  'paused',
  'awaiting_approval',
]);
export type TerminalStatus = z.infer<typeof TerminalStatusSchema>;

/** The terminal status an outcome projects to. */
export function terminalStatusOf(outcome: InvocationOutcome): TerminalStatus {
  switch (outcome.kind) {
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    case 'handoff_paused':
      return 'paused';
    case 'approval_pending':
      return 'awaiting_approval';
    default:
      return outcome satisfies never;
  }
}
