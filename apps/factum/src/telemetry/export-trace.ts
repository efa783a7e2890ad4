import type { Invocation } from '@factum/agent-facts';
import type { CliContext } from '../commands/cli-context.js';
import type { FactumRuntime } from '../factum-runtime.js';
import type { OtlpTracing } from './otlp-tracing.js';

/**
 * Exports finished invocations' traces and flushes it before the command exits. A
 * collector that is down costs a warning, never the run's exit code: the log, not the
 * trace, is the record.
 */
export async function exportTrace(
  tracing: OtlpTracing | undefined,
  runtime: FactumRuntime,
  invocation: Invocation | readonly Invocation[],
  context: CliContext,
): Promise<void> {
  if (tracing === undefined) return;
  try {
    // A run continued after approvals is several invocations, each its own trace.
    for (const each of Array.isArray(invocation) ? invocation : [invocation])
      await tracing.exportInvocation(runtime.log, each);
    await tracing.shutdown();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.terminal.error(context.terminal.colors.yellow(`the trace was not exported: ${message}`));
  }
}
