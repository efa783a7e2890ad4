import { z } from 'zod';
import type { InvocationOutcome } from './fact-schema.js';

/** How an invocation stands once it has ended, as projections report it. */
export const TerminalStatusSchema = z.enum(['completed', 'failed', 'cancelled', 'paused']);
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
    default:
      return outcome satisfies never;
  }
}
