import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import type { EventLog } from './event-log.js';

const bounds = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

/**
 * Ends every unfinished invocation as `failed {interrupted}` — call it only when no
 * process is still running them (at start-up of the one host that owns the log).
 * Calls the model asked for that never reached dispatch are first recorded as
 * rejected (`interrupted`, or `repeated_call_id` for a call whose id an earlier call of
 * its step used): they did not run and now never will. Dispatched operations
 * stay uncertain; recovery never runs an effect. Returns how many invocations it ended.
 */
export async function recoverInvocations(log: EventLog): Promise<number> {
  let ended = 0;
  for (;;) {
    const unfinished = await log.unfinishedInvocations(100);
    if (unfinished.length === 0) return ended;
    for (const invocation of unfinished) {
      const recovery = await log.invocationRecovery(invocation, bounds);
      for (const { operationId, stepId, call, repeated } of recovery.undispatchedCalls) {
        const fact = {
          kind: 'tool_rejected' as const,
          operationId,
          call: { kind: 'provider' as const, stepId, callId: call.id },
          name: call.name,
          input: call.input,
          reason: repeated ? { kind: 'repeated_call_id' as const } : { kind: 'interrupted' as const },
        };
        await log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
      }
      const uncertain = recovery.uncertainOperations.length;
      const message =
        uncertain === 0
          ? 'the process running this invocation stopped before it ended'
          : `the process running this invocation stopped before it ended; ${uncertain} operation(s) have an unknown outcome: ${recovery.uncertainOperations.join(', ')}`;
      const outcome = { kind: 'failed' as const, error: { code: 'interrupted', message } };
      await log.append(
        EventWrite.plain(RuntimeEvent.create(invocation, { kind: 'invocation_ended', outcome })),
      );
      ended += 1;
    }
  }
}
