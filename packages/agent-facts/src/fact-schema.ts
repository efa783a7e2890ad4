import { z } from 'zod';
import { InvocationConfigurationSchema } from './configuration-schema.js';
import { factObject } from './fact-object.js';
import { HandoffPauseSchema } from './handoff-schema.js';
import { LogScopeSchema, RunBoundarySchema } from './invocation-schema.js';
import { JsonValueSchema } from './json-value.js';
import { ModelObservationSchema, ModelPurposeSchema, ModelStepSchema } from './model-step-schema.js';
import {
  FactErrorSchema,
  ResultReferenceSchema,
  ToolCallIdentitySchema,
  ToolCallSchema,
  ToolOutcomeSchema,
  ToolSourceSchema,
} from './tool-call-schema.js';
import { ToolRejectionSchema } from './tool-rejection.js';

const operationId = z.string().min(1).max(512);
const stepId = z.string().min(1).max(256);
const fingerprint = z.string().startsWith('sha256:');

/**
 * A caller's key for one submission of a turn (an HTTP `Idempotency-Key`, a CLI
 * `--idempotency-key`): 1 to 255 visible ASCII characters. The log accepts at most one
 * opening per key in a session, kept as long as the session's facts are.
 */
export const IdempotencyKeySchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'an idempotency key is visible ASCII, without spaces');

/** What started an invocation: a user message, a manual continuation, or a handoff. */
export const InvocationInputSchema = z.discriminatedUnion('kind', [
  factObject({
    kind: z.literal('message'),
    content: z.string(),
    sourceMessages: z.array(z.string()),
    requestFingerprint: fingerprint.optional(),
  }),
  factObject({
    kind: z.literal('continuation'),
    source: RunBoundarySchema,
    requestFingerprint: fingerprint.optional(),
  }),
  factObject({ kind: z.literal('handoff'), source: RunBoundarySchema, pause: HandoffPauseSchema }),
]);
export type InvocationInput = z.infer<typeof InvocationInputSchema>;

/** How an invocation ended. */
export const InvocationOutcomeSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('completed') }),
  factObject({ kind: z.literal('failed'), error: FactErrorSchema }),
  factObject({ kind: z.literal('cancelled'), source: z.string().min(1) }),
  factObject({ kind: z.literal('handoff_paused'), pause: HandoffPauseSchema }),
  /**
   * The invocation parked because calls of its last step wait for a person's decision:
   * the operations named here each have an `approval_requested`. Nothing is held in
   * memory, so any host can continue the run once they are decided.
   */
  factObject({ kind: z.literal('approval_pending'), operations: z.array(operationId).min(1) }),
]);
export type InvocationOutcome = z.infer<typeof InvocationOutcomeSchema>;

/** The prefix of the log a model request was built from. */
export const RequestSourceSchema = factObject({
  scope: LogScopeSchema,
  highWater: z.number().int().nonnegative(),
  digest: z.string(),
});
export type RequestSource = z.infer<typeof RequestSourceSchema>;

/** How a recovery policy decided an operation left uncertain. */
export const ReconciliationDecisionSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('succeeded'), result: ResultReferenceSchema }),
  factObject({ kind: z.literal('failed'), error: FactErrorSchema }),
  factObject({ kind: z.literal('unknown'), note: z.string() }),
  /** The effect did not happen (an operator says so): the model is told the call did not run. */
  factObject({ kind: z.literal('not_run') }),
]);
export type ReconciliationDecision = z.infer<typeof ReconciliationDecisionSchema>;

/**
 * The number of a recorded re-run: the dispatch is attempt 1, so a re-dispatch is 2 or
 * more. The log accepts each attempt of an operation at most once, in order.
 */
export const RedispatchAttemptSchema = z.number().int().min(2).max(1000);

/** Who decided, and why: a person's name or a token label, and an optional note. */
const decidedBy = z.string().min(1).max(256);
const decisionNote = z.string().max(2048);

/** How a person decided a requested approval, or that its deadline passed first. */
export const ApprovalDecisionKindSchema = z.enum(['approved', 'denied', 'expired']);
export type ApprovalDecisionKind = z.infer<typeof ApprovalDecisionKindSchema>;

/** Every fact an agent run can record, discriminated on `kind`. */
export const FactSchema = z.discriminatedUnion('kind', [
  factObject({
    kind: z.literal('invocation_opened'),
    configuration: InvocationConfigurationSchema.optional(),
    input: InvocationInputSchema,
    /** The submitter's key: a second opening with it in the same session is refused. */
    idempotencyKey: IdempotencyKeySchema.optional(),
  }),
  factObject({
    kind: z.literal('model_requested'),
    stepId,
    modelId: z.string().min(1),
    purpose: ModelPurposeSchema,
    source: RequestSourceSchema,
    inputDigest: z.string(),
    routeIdentity: z.string(),
  }),
  factObject({ kind: z.literal('model_observed'), stepId, observation: ModelObservationSchema }),
  factObject({ kind: z.literal('model_completed'), stepId, output: ModelStepSchema }),
  factObject({
    kind: z.literal('tool_dispatched'),
    operationId,
    call: ToolCallSchema,
    /** Where the tool came from (an MCP server), when it is not built in. */
    source: ToolSourceSchema.optional(),
  }),
  factObject({ kind: z.literal('tool_notified'), operationId, message: z.string() }),
  factObject({ kind: z.literal('tool_settled'), operationId, outcome: ToolOutcomeSchema }),
  factObject({
    kind: z.literal('tool_rejected'),
    operationId,
    call: ToolCallIdentitySchema,
    name: z.string(),
    input: JsonValueSchema,
    reason: ToolRejectionSchema,
  }),
  factObject({
    kind: z.literal('tool_redispatched'),
    operationId,
    attempt: RedispatchAttemptSchema,
    reason: z.string().min(1).max(1024),
  }),
  factObject({
    kind: z.literal('tool_reconciled'),
    operationId,
    /** `operator`: a person resolved it by hand; the log then requires `by` and `note`. */
    policy: z.enum(['idempotent', 'reconcile', 'operator']),
    decision: ReconciliationDecisionSchema,
    /** The attempt whose outcome this is, when the policy re-ran the effect. */
    attempt: RedispatchAttemptSchema.optional(),
    /** Who resolved it (operator policy). */
    by: decidedBy.optional(),
    /** Why (operator policy). */
    note: decisionNote.optional(),
  }),
  /**
   * A call that needs a person's approval, written instead of `tool_dispatched`: the
   * exact call and the digest of its input (`contentDigest(canonicalJson(call.input))`),
   * so only this input can be dispatched once approved.
   */
  factObject({
    kind: z.literal('approval_requested'),
    operationId,
    call: ToolCallSchema,
    inputDigest: fingerprint,
    reason: z.string().min(1).max(1024),
    /** When an undecided approval expires (the database clock decides). */
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  }),
  /** A person's decision on a requested approval, or its expiry (`by: 'factum'`). */
  factObject({
    kind: z.literal('approval_decided'),
    operationId,
    decision: ApprovalDecisionKindSchema,
    /** The digest of the input decided on: it must equal the requested one. */
    inputDigest: fingerprint,
    by: decidedBy,
    note: decisionNote.optional(),
  }),
  factObject({ kind: z.literal('invocation_ended'), outcome: InvocationOutcomeSchema }),
  /**
   * The first fact of a forked session: its history is the source session's prefix up
   * to `source` (referenced, never copied), then its own facts. `source.invocation` names
   * the session and invocation the boundary lies in; without `step` the boundary is that
   * invocation's end, with it the prefix stops right before that step's `model_requested`.
   * `source.highWater` and `source.digest` are the source session's chain there.
   */
  factObject({ kind: z.literal('session_forked'), source: RunBoundarySchema, step: stepId.optional() }),
]);
export type Fact = z.infer<typeof FactSchema>;
export type FactKind = Fact['kind'];
/** The fact of one kind: `FactOf<'tool_dispatched'>`. */
export type FactOf<K extends FactKind> = Extract<Fact, { kind: K }>;

/** The kind of a fact, as written on the wire. */
export function factKind(fact: Fact): FactKind {
  return fact.kind;
}

/** Whether a fact's write must carry a tool result stored out of line. */
export function factNeedsResult(fact: Fact): boolean {
  return (
    (fact.kind === 'tool_settled' && fact.outcome.kind === 'succeeded') ||
    (fact.kind === 'tool_reconciled' && fact.decision.kind === 'succeeded')
  );
}
