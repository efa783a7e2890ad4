import type { InvocationOutcome, ModelStep } from '@factum/agent-facts';

/**
 * How an invocation ends on a step that asks for no tool: a step cut by the output limit,
 * or a refusal — an answer nobody asked for — did not do the run's work. A live run and
 * its replay end by this one rule.
 */
export function outcomeOfFinalStep(step: ModelStep): InvocationOutcome {
  if (step.finishReason === 'length') {
    return { kind: 'failed', error: { code: 'output_limit', message: 'the model reached its output limit' } };
  }
  if (step.finishReason === 'refusal') {
    const said = step.parts.flatMap((part) => (part.kind === 'refusal' ? [part.text] : [])).join('');
    return {
      kind: 'failed',
      error: { code: 'model_refused', message: `the model refused${said === '' ? '' : `: ${said}`}` },
    };
  }
  return { kind: 'completed' };
}
