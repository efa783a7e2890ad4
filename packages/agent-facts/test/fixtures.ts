import type { Fact, Invocation } from '../src/index.ts';

export const invocation: Invocation = {
  sessionId: 'session',
  turnId: 'turn',
  runId: 'run',
  invocationId: 'invocation',
};

/** One fact of every kind, as the engine writes them. */
export function everyKind(): Fact[] {
  const digest = `sha256:${'0'.repeat(64)}`;
  const boundary = { invocation, highWater: 3, digest };
  const pause = {
    intent: {
      handoffId: 'h',
      hostEpoch: 'host',
      rootRunId: 'run',
      successorRunId: 'run-2',
      successorInvocationId: 'invocation-2',
      claimId: 'claim',
    },
    execution: { fingerprint: digest, mainOutputLimit: 120, replayBase: boundary, steps: 2 },
  };
  return [
    {
      kind: 'invocation_opened',
      configuration: { cwd: '/w', toolMode: 'direct' },
      input: { kind: 'message', content: 'hi', sourceMessages: [] },
    },
    {
      kind: 'model_requested',
      stepId: 's1',
      modelId: 'm',
      purpose: 'main',
      source: { scope: { kind: 'session', id: 'session' }, highWater: 1, digest },
      inputDigest: digest,
      routeIdentity: 'openai_chat_completions:m',
    },
    { kind: 'model_observed', stepId: 's1', observation: { kind: 'text_delta', text: 'he' } },
    {
      kind: 'model_completed',
      stepId: 's1',
      output: {
        parts: [
          { kind: 'text', text: 'hello' },
          { kind: 'tool_call', call: { id: 'c1', name: 'echo', input: { value: 42 } } },
        ],
        finishReason: 'tool_calls',
        usage: { inputTokens: 4, outputTokens: 3, totalTokens: 7 },
      },
    },
    {
      kind: 'tool_dispatched',
      operationId: 's1:c1',
      call: { id: 'c1', name: 'echo', input: { value: 42 }, origin: { kind: 'provider', stepId: 's1' } },
    },
    { kind: 'tool_notified', operationId: 's1:c1', message: 'half way' },
    {
      kind: 'tool_settled',
      operationId: 's1:c1',
      outcome: { kind: 'failed', error: { code: 'x', message: 'y' } },
    },
    {
      kind: 'tool_rejected',
      operationId: 's1:c2',
      call: { kind: 'provider', stepId: 's1', callId: 'c2' },
      name: 'echo',
      input: {},
      reason: { kind: 'cancelled' },
    },
    {
      kind: 'tool_redispatched',
      operationId: 's1:c1',
      attempt: 2,
      reason: 'idempotent: re-run after a crash',
    },
    {
      kind: 'tool_reconciled',
      operationId: 's1:c1',
      policy: 'reconcile',
      decision: { kind: 'unknown', note: 'n' },
    },
    {
      kind: 'approval_requested',
      operationId: 's1:c3',
      call: { id: 'c3', name: 'shell', input: { command: 'ls' }, origin: { kind: 'provider', stepId: 's1' } },
      inputDigest: digest,
      reason: 'shell commands need approval',
      expiresAt: '2026-01-01T00:00:00.000Z',
    },
    { kind: 'approval_decided', operationId: 's1:c3', decision: 'approved', inputDigest: digest, by: 'ada' },
    {
      kind: 'tool_reconciled',
      operationId: 's1:c1',
      policy: 'operator',
      decision: { kind: 'not_run' },
      by: 'ada',
      note: 'the machine never got the command',
    },
    { kind: 'invocation_ended', outcome: { kind: 'approval_pending', operations: ['s1:c3'] } },
    { kind: 'invocation_ended', outcome: { kind: 'handoff_paused', pause } },
  ];
}
