import type { Fact, ToolRejection } from '@factum/agent-facts';
import { type SectionStatus, terminalStatus } from './timeline-model.js';

/** How a plain fact row reads: a badge title, a meta line, a body. */
export type FactDescription = {
  readonly title: string;
  readonly meta?: string;
  body?: string;
  readonly quiet?: boolean;
  readonly ended?: SectionStatus;
};

/** The sentence for a rejection, always starting "did not run:" (as the CLI says it). */
export function rejectionSentence(reason: ToolRejection): string {
  switch (reason.kind) {
    case 'cancelled':
      return 'did not run: the run was cancelled before this call started';
    case 'invalid_input':
      return `did not run: the input does not match the tool\u2019s schema (${reason.message})`;
    case 'unavailable':
      return 'did not run: no tool of this name is available in this run';
    case 'not_nestable':
      return 'did not run: this tool cannot be called from inside code';
    case 'interrupted':
      return 'did not run: the process stopped before this call was dispatched';
    case 'limit_exceeded':
      return `did not run: ${reason.message}`;
    case 'repeated_call_id':
      return 'did not run: an earlier call in the same step has the same call id; give every call its own id';
    case 'denied':
      return reason.note === undefined || reason.note === ''
        ? 'did not run: a person denied this call'
        : `did not run: a person denied this call: ${reason.note}`;
    case 'expired':
      return 'did not run: no one approved this call before its deadline';
    case 'approval_required':
      return 'did not run: this call needs a person\u2019s approval, which a code cell cannot wait for; call the tool directly';
    default:
      return reason satisfies never;
  }
}

/** A plain fact as a row's title, meta and body. */
export function describeFact(fact: Fact): FactDescription {
  switch (fact.kind) {
    case 'invocation_opened': {
      const input = fact.input;
      const head =
        input.kind === 'message'
          ? `user: ${input.content}`
          : input.kind === 'continuation'
            ? `continues run ${input.source.invocation.runId}`
            : `resumes handoff ${input.pause.intent.handoffId}`;
      const config = fact.configuration ? ` \u00b7 ${fact.configuration.toolMode} tools` : '';
      return { title: 'opened', body: head, meta: config };
    }
    case 'model_requested':
      return {
        title: 'model request',
        meta: `${fact.stepId} \u00b7 ${fact.modelId} \u00b7 prompt from #${fact.source.highWater}`,
        quiet: true,
      };
    case 'model_completed': {
      const calls = fact.output.parts.flatMap((part) => (part.kind === 'tool_call' ? [part.call.name] : []));
      const text = fact.output.parts.flatMap((part) => (part.kind === 'text' ? [part.text] : [])).join('');
      const usage = fact.output.usage;
      return {
        title: 'model answered',
        body: text,
        meta: `${fact.output.finishReason} \u00b7 ${usage.inputTokens} in / ${usage.outputTokens} out${calls.length ? ` \u00b7 calls ${calls.join(', ')}` : ''}`,
      };
    }
    case 'invocation_ended': {
      const outcome = fact.outcome;
      const body =
        outcome.kind === 'failed'
          ? `${outcome.error.code}: ${outcome.error.message}`
          : outcome.kind === 'cancelled'
            ? `by ${outcome.source}`
            : outcome.kind === 'handoff_paused'
              ? `successor run ${outcome.pause.intent.successorRunId} (handoff ${outcome.pause.intent.handoffId})`
              : outcome.kind === 'approval_pending'
                ? `waiting for a person to decide ${outcome.operations.length === 1 ? '1 call' : `${outcome.operations.length} calls`}: ${outcome.operations.join(', ')}`
                : '';
      return { title: 'ended', meta: 'invocation ended', body, ended: terminalStatus(outcome) };
    }
    case 'session_forked': {
      const { invocation, highWater } = fact.source;
      const where = fact.step === undefined ? `the end of ${invocation.invocationId}` : `step ${fact.step}`;
      return {
        title: 'forked',
        body: `from session ${invocation.sessionId} at ${where}`,
        meta: `its history up to #${highWater} is that session's`,
      };
    }
    default:
      return { title: fact.kind.replace('_', ' '), body: JSON.stringify(fact, null, 2).slice(0, 400) };
  }
}
