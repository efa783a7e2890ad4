// Hand-written fast-check arbitraries for every fact kind, shaped after the zod schemas
// in src/: every optional field is sometimes present and sometimes absent, strings
// reach the edges of their bounds and of Unicode (lone surrogates included).
import fc from 'fast-check';
import type {
  Fact,
  FactError,
  HandoffPause,
  Invocation,
  ModelPart,
  ModelStep,
  ModelToolCall,
  RunBoundary,
  RuntimeEvent,
  ToolRejection,
} from '../src/index.ts';

/** Any text, including characters that need escaping and lone surrogates. */
export const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 8 }));
const nonEmpty = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: Math.min(maxLength, 40) }),
    fc.string({ minLength: maxLength, maxLength }),
  );
const id = nonEmpty(256);
const operationId = nonEmpty(512);
const stepId = nonEmpty(256);
const count = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 });
export const digest = hex.map((h) => `sha256:${h}`);
const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<ModelToolCall['input']>;

export const invocation: fc.Arbitrary<Invocation> = fc.record({
  sessionId: id,
  turnId: id,
  runId: id,
  invocationId: id,
});

const boundary: fc.Arbitrary<RunBoundary> = fc.record({ invocation, highWater: count, digest: text });
const factError: fc.Arbitrary<FactError> = fc.record({ code: nonEmpty(32), message: text });
const reference = fc.record({ digest, bytes: count });

const pause: fc.Arbitrary<HandoffPause> = fc.record({
  intent: fc.record({
    handoffId: id,
    hostEpoch: id,
    rootRunId: id,
    successorRunId: id,
    successorInvocationId: id,
    claimId: id,
  }),
  execution: fc.record(
    {
      fingerprint: digest,
      mainOutputLimit: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      replayBase: boundary,
      steps: count,
    },
    { requiredKeys: ['fingerprint', 'steps'] },
  ),
});

const toolCall = fc.record(
  { id, name: id, input: json, invalidArguments: text, providerExecuted: fc.boolean() },
  { requiredKeys: ['id', 'name', 'input'] },
);

const part: fc.Arbitrary<ModelPart> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), text }),
  fc.record({ kind: fc.constant('reasoning' as const), text }),
  fc.record({ kind: fc.constant('refusal' as const), text }),
  fc.record({ kind: fc.constant('tool_call' as const), call: toolCall }),
) as fc.Arbitrary<ModelPart>;

const step: fc.Arbitrary<ModelStep> = fc.record(
  {
    parts: fc.array(part, { maxLength: 4 }),
    finishReason: fc.constantFrom(
      'stop',
      'length',
      'tool_calls',
      'content_filter',
      'refusal',
      'error',
      'other',
    ),
    usage: fc.record(
      {
        inputTokens: count,
        outputTokens: count,
        totalTokens: count,
        reasoningTokens: count,
        cachedInputTokens: count,
      },
      { requiredKeys: ['inputTokens', 'outputTokens', 'totalTokens'] },
    ),
    responseId: text,
    model: text,
  },
  { requiredKeys: ['parts', 'finishReason', 'usage'] },
);

const rejection: fc.Arbitrary<ToolRejection> = fc.oneof(
  fc
    .constantFrom('cancelled', 'unavailable', 'not_nestable', 'interrupted', 'repeated_call_id', 'expired')
    .map((kind) => ({ kind })),
  fc.record({ kind: fc.constantFrom('invalid_input', 'limit_exceeded'), message: text }),
  fc.record({ kind: fc.constant('denied'), note: text }, { requiredKeys: ['kind'] }),
  fc.record({ kind: fc.constant('approval_required'), reason: text }),
) as fc.Arbitrary<ToolRejection>;

const origin = fc.oneof(
  fc.record({ kind: fc.constant('provider' as const), stepId }),
  fc.record({
    kind: fc.constantFrom('code_cell' as const, 'code_mode' as const),
    parentOperationId: operationId,
  }),
);

const configuration = fc.record(
  {
    cwd: text,
    toolMode: fc.constantFrom('direct' as const, 'code_mode' as const),
    workspaceIdentity: fc.uuid().map((uuid) => `workspace:${uuid}`),
  },
  { requiredKeys: ['cwd', 'toolMode'] },
);

const fingerprintOption = { requestFingerprint: digest };

/** One arbitrary per fact kind, keyed by kind: a test can check that none is missing. */
export const factArbitraries: { readonly [K in Fact['kind']]: fc.Arbitrary<Extract<Fact, { kind: K }>> } = {
  invocation_opened: fc.record(
    {
      kind: fc.constant('invocation_opened' as const),
      configuration,
      input: fc.oneof(
        fc.record(
          {
            kind: fc.constant('message' as const),
            content: text,
            sourceMessages: fc.array(text, { maxLength: 3 }),
            ...fingerprintOption,
          },
          { requiredKeys: ['kind', 'content', 'sourceMessages'] },
        ),
        fc.record(
          { kind: fc.constant('continuation' as const), source: boundary, ...fingerprintOption },
          { requiredKeys: ['kind', 'source'] },
        ),
        fc.record({ kind: fc.constant('handoff' as const), source: boundary, pause }),
      ),
    },
    { requiredKeys: ['kind', 'input'] },
  ),
  session_forked: fc.record(
    { kind: fc.constant('session_forked' as const), source: boundary, step: stepId },
    { requiredKeys: ['kind', 'source'] },
  ),
  model_requested: fc.record({
    kind: fc.constant('model_requested' as const),
    stepId,
    modelId: nonEmpty(64),
    purpose: fc.constantFrom('main' as const, 'summary' as const, 'title' as const),
    source: fc.record({
      scope: fc.oneof(
        fc.constant({ kind: 'global' as const }),
        fc.record({ kind: fc.constant('session' as const), id }),
      ),
      highWater: count,
      digest: text,
    }),
    inputDigest: text,
    routeIdentity: text,
  }),
  model_observed: fc.record({
    kind: fc.constant('model_observed' as const),
    stepId,
    observation: fc.oneof(
      fc.record({
        kind: fc.constantFrom('text_delta' as const, 'reasoning_delta' as const, 'refusal_delta' as const),
        text,
      }),
      fc.record(
        {
          kind: fc.constant('tool_call_delta' as const),
          index: count,
          id: text,
          name: text,
          argumentsDelta: text,
        },
        { requiredKeys: ['kind', 'index', 'argumentsDelta'] },
      ),
    ),
  }),
  model_completed: fc.record({ kind: fc.constant('model_completed' as const), stepId, output: step }),
  tool_dispatched: fc.record({
    kind: fc.constant('tool_dispatched' as const),
    operationId,
    call: fc.record({ id, name: id, input: json, origin }),
  }),
  tool_notified: fc.record({ kind: fc.constant('tool_notified' as const), operationId, message: text }),
  tool_settled: fc.record({
    kind: fc.constant('tool_settled' as const),
    operationId,
    outcome: fc.oneof(
      fc.record({ kind: fc.constant('succeeded' as const), result: reference }),
      fc.record({ kind: fc.constant('failed' as const), error: factError }),
    ),
  }),
  tool_rejected: fc.record({
    kind: fc.constant('tool_rejected' as const),
    operationId,
    call: fc.oneof(
      fc.record({ kind: fc.constant('provider' as const), stepId, callId: id }),
      fc.record({ kind: fc.constant('code_mode' as const), parentOperationId: operationId, callId: id }),
    ),
    name: text,
    input: json,
    reason: rejection,
  }),
  tool_redispatched: fc.record({
    kind: fc.constant('tool_redispatched' as const),
    operationId,
    attempt: fc.integer({ min: 2, max: 1000 }),
    reason: nonEmpty(64),
  }),
  tool_reconciled: fc.record(
    {
      kind: fc.constant('tool_reconciled' as const),
      operationId,
      policy: fc.constantFrom('idempotent' as const, 'reconcile' as const, 'operator' as const),
      decision: fc.oneof(
        fc.record({ kind: fc.constant('succeeded' as const), result: reference }),
        fc.record({ kind: fc.constant('failed' as const), error: factError }),
        fc.record({ kind: fc.constant('unknown' as const), note: text }),
        fc.constant({ kind: 'not_run' as const }),
      ),
      attempt: fc.integer({ min: 2, max: 1000 }),
      by: nonEmpty(256),
      note: text,
    },
    { requiredKeys: ['kind', 'operationId', 'policy', 'decision'] },
  ),
  approval_requested: fc.record(
    {
      kind: fc.constant('approval_requested' as const),
      operationId,
      call: fc.record({ id, name: id, input: json, origin }),
      inputDigest: digest,
      reason: nonEmpty(1024),
      expiresAt: timestampArbitrary(),
    },
    { requiredKeys: ['kind', 'operationId', 'call', 'inputDigest', 'reason'] },
  ),
  approval_decided: fc.record(
    {
      kind: fc.constant('approval_decided' as const),
      operationId,
      decision: fc.constantFrom('approved' as const, 'denied' as const, 'expired' as const),
      inputDigest: digest,
      by: nonEmpty(256),
      note: fc.oneof(text, fc.string({ minLength: 2048, maxLength: 2048 })),
    },
    { requiredKeys: ['kind', 'operationId', 'decision', 'inputDigest', 'by'] },
  ),
  invocation_ended: fc.record({
    kind: fc.constant('invocation_ended' as const),
    outcome: fc.oneof(
      fc.constant({ kind: 'completed' as const }),
      fc.record({ kind: fc.constant('failed' as const), error: factError }),
      fc.record({ kind: fc.constant('cancelled' as const), source: nonEmpty(64) }),
      fc.record({ kind: fc.constant('handoff_paused' as const), pause }),
      fc.record({
        kind: fc.constant('approval_pending' as const),
        operations: fc.array(operationId, { minLength: 1, maxLength: 3 }),
      }),
    ),
  }),
};

/** Any fact, every kind equally likely. */
export const anyFact: fc.Arbitrary<Fact> = fc.oneof(...Object.values(factArbitraries)) as fc.Arbitrary<Fact>;

/** A timestamp as `RuntimeEvent` writes them (UTC, milliseconds, years 1970–9999). */
export const timestamp = timestampArbitrary();

function timestampArbitrary(): fc.Arbitrary<string> {
  return fc
    .date({ min: new Date(0), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
    .map((date) => date.toISOString());
}

/** Any event: an id, an invocation, a time and a fact. */
export const anyEvent: fc.Arbitrary<RuntimeEvent> = fc.record({ id, invocation, timestamp, fact: anyFact });
