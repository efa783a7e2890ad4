import {
  FactSchema,
  InvocationInputSchema,
  InvocationOutcomeSchema,
  InvocationSchema,
  JsonValueSchema,
  RunBoundarySchema,
} from '@factum/agent-facts';
import { z } from 'zod';

/**
 * The shapes `--json` prints, one JSON document on stdout per command. They are the
 * contract for scripts: fields are added, never renamed or removed, within a major
 * version. Every document is checked against its schema before it is printed.
 */

/** How an invocation stands in `factum log --json`: `unfinished` until it has an end. */
export const InvocationStatusSchema = z.enum([
  'unfinished',
  'completed',
  'failed',
  'cancelled',
  'paused',
  'awaiting_approval',
]);

/** One invocation in `factum log --json`. */
export const LogEntrySchema = z.object({
  invocation: InvocationSchema,
  openedSequence: z.number().int(),
  openedAt: z.string(),
  status: InvocationStatusSchema,
  input: InvocationInputSchema,
  /** How it ended, or null while unfinished. */
  outcome: InvocationOutcomeSchema.nullable(),
  steps: z.number().int(),
  toolCalls: z.number().int(),
  /** Operations dispatched and never settled nor closed by reconciliation. */
  uncertainOperations: z.array(z.string()),
  /**
   * The id of the invocation that continued this one after it parked on approvals (its
   * status stays `awaiting_approval`: that is how it ended), or null.
   */
  continuedBy: z.string().nullable(),
});

/** `factum log --json`: one page of invocations, oldest first, and where it sits. */
export const LogOutputSchema = z.object({
  invocations: z.array(LogEntrySchema),
  /** The listed sessions that are forks, and where each forked from. */
  forks: z.array(z.lazy(() => ForkOutputSchema)).optional(),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
});

/** One fact in `factum show --json`, with the stored tool result it points at, if any. */
export const ShowEventSchema = z.object({
  sequence: z.number().int(),
  eventId: z.string(),
  timestamp: z.string(),
  fact: FactSchema,
  /** The full result of a successful `tool_settled` or `tool_reconciled`. */
  result: JsonValueSchema.optional(),
});

/** `factum show --json`: one invocation and every fact of it, in sequence order. */
export const ShowOutputSchema = z.object({
  invocation: InvocationSchema,
  status: InvocationStatusSchema,
  /** Where the invocation's session forked from, when it is a fork. */
  forkedFrom: z.lazy(() => ForkOutputSchema).optional(),
  events: z.array(ShowEventSchema),
});

/** An operation dispatched (T1) and never settled (T2). */
export const UncertainOperationSchema = z.object({
  invocation: InvocationSchema,
  operationId: z.string(),
  tool: z.string(),
  input: JsonValueSchema,
  /** How to resolve it, as a sentence (the tool's recovery policy). */
  resolution: z.string(),
});

/** What `factum recover --apply` did to one uncertain operation. */
export const ReconciledOperationSchema = z.object({
  operationId: z.string(),
  tool: z.string(),
  /** `succeeded`, `failed`, `unknown`, `left_uncertain`, or `lost_race` (another reconciler decided). */
  decision: z.string(),
  reason: z.string(),
  /** 1, or n for the nth recorded re-run of an idempotent tool. */
  attempt: z.number().int().positive(),
});

/**
 * `factum recover --json`: what is open (before `--apply` acted), what `--apply` did,
 * and whether anything is still open afterwards — the same fact the exit code says
 * (0 nothing open, 3 something left open).
 */
export const RecoverOutputSchema = z.object({
  unfinished: z.array(InvocationSchema),
  uncertain: z.array(UncertainOperationSchema),
  applied: z
    .object({ endedInvocations: z.number().int(), reconciled: z.array(ReconciledOperationSchema) })
    .nullable(),
  leftOpen: z.boolean(),
});

/** A person's decision on a call that waited for one. */
export const ApprovalDecisionSchema = z.object({
  decision: z.enum(['approved', 'denied', 'expired']),
  by: z.string(),
  note: z.string().optional(),
  at: z.string(),
});

/** One call that waits for a person (or was decided and its run not yet continued). */
export const ApprovalEntrySchema = z.object({
  invocation: InvocationSchema,
  operationId: z.string(),
  tool: z.string(),
  input: JsonValueSchema,
  /** `sha256:…` of the input's canonical JSON: what an approval approves, exactly. */
  inputDigest: z.string(),
  reason: z.string(),
  requestedAt: z.string(),
  expiresAt: z.string().nullable(),
  /** Null while undecided. */
  decision: ApprovalDecisionSchema.nullable(),
});

/** `factum approvals --json`: every call waiting for a person, across sessions, oldest first. */
export const ApprovalsOutputSchema = z.object({ approvals: z.array(ApprovalEntrySchema) });

/**
 * Where a forked session's history comes from: `factum fork --json` prints it (with the
 * new session's id) before the fork's first turn runs; `log --json` lists one per fork.
 */
export const ForkOutputSchema = z.object({
  session: z.string(),
  /** The boundary in the session that holds it: its invocation, high water and digest. */
  source: RunBoundarySchema,
  /** The step the fork starts before, for a fork inside an invocation. */
  step: z.string().optional(),
});

export type LogOutput = z.infer<typeof LogOutputSchema>;
export type ShowOutput = z.infer<typeof ShowOutputSchema>;
export type RecoverOutput = z.infer<typeof RecoverOutputSchema>;
export type ApprovalsOutput = z.infer<typeof ApprovalsOutputSchema>;

const ReplayCallSchema = z.object({ operationId: z.string(), name: z.string(), inputDigest: z.string() });
const ReplayUsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
});
const ReplayAnswerSchema = z.object({ text: z.string(), end: z.string() });

/** Where a replay and its recording part: the kind, the fact's index, both sides. */
export const ReplayDivergenceSchema = z.object({
  kind: z.enum(['request', 'answer', 'call', 'result', 'rejection', 'approval', 'end', 'fact']),
  index: z.number().int(),
  recordedSequence: z.number().int().optional(),
  recorded: FactSchema.optional(),
  replayed: FactSchema.optional(),
});

/** `factum replay --json`: the engine's `ReplayReport`, one entry per replayed invocation, in log order. */
export const ReplayOutputSchema = z.object({
  mode: z.enum(['verify', 'model']),
  invocations: z
    .array(
      z.object({
        sessionId: z.string(),
        invocationId: z.string(),
        status: z.enum(['same', 'diverged']),
        compared: z.number().int(),
        divergences: z.array(ReplayDivergenceSchema).readonly(),
        model: z
          .object({
            sameCalls: z.array(ReplayCallSchema).readonly(),
            newCalls: z.array(ReplayCallSchema).readonly(),
            missingCalls: z.array(ReplayCallSchema).readonly(),
            answers: z.object({ recorded: ReplayAnswerSchema, replayed: ReplayAnswerSchema }),
            usage: z.object({ recorded: ReplayUsageSchema, replayed: ReplayUsageSchema }),
            latencyMs: z.object({ recorded: z.number(), replayed: z.number().optional() }),
          })
          .optional(),
      }),
    )
    .readonly(),
  summary: z.object({ invocations: z.number().int(), same: z.number().int(), diverged: z.number().int() }),
});
export type ReplayOutput = z.infer<typeof ReplayOutputSchema>;

/** A point of the log's chain: `sequence:digest`, what `--anchor` takes back. */
const ChainAnchorSchema = z.object({ sequence: z.number().int(), digest: z.string() });

/** A head as `factum verify` prints it and `--anchor` and `GET /api/verify?anchor=` take it back. */
export const AnchorTextSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}:sha256:[0-9a-f]{64}$/, 'expected <sequence>:sha256:<64 hex digits>')
  .transform((text) => {
    const colon = text.indexOf(':');
    return { sequence: Number(text.slice(0, colon)), digest: text.slice(colon + 1) };
  });

/**
 * `factum verify --json`: whether every row parses, no sequence is missing and both
 * chains (the log's and each session's) match the stored digests, and the chain passes
 * through every `--anchor`. `head` is the last event that checked out; `broken` the first
 * break (exit 3), null when the log verifies (exit 0).
 */
export const VerifyOutputSchema = z.object({
  ok: z.boolean(),
  events: z.number().int(),
  head: ChainAnchorSchema.nullable(),
  anchors: z.array(ChainAnchorSchema),
  broken: z.object({ sequence: z.number().int(), reason: z.string() }).nullable(),
});
export type VerifyOutput = z.infer<typeof VerifyOutputSchema>;

/**
 * `factum copy --json`: the rows the copy wrote to each table, and the copy's own check
 * (as `verify --json` gives it, `anchors` holding the source's head as the copy read it).
 */
export const CopyOutputSchema = z.object({
  rows: z.object({
    events: z.number().int(),
    tool_results: z.number().int(),
    invocations: z.number().int(),
    operations: z.number().int(),
    sessions: z.number().int(),
    hosts: z.number().int(),
  }),
  verified: VerifyOutputSchema,
});
export type CopyOutput = z.infer<typeof CopyOutputSchema>;
