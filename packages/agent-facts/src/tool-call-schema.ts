import { z } from 'zod';
import { factObject } from './fact-object.js';
import { JsonValueSchema } from './json-value.js';

const operationId = z.string().min(1).max(512);

/**
 * Where a dispatched call came from: the model's step (`provider`), a Code mode cell
 * run for a parent call (`code_cell`), or a tool called from inside such a cell
 * (`code_mode`).
 */
export const ToolOriginSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('provider'), stepId: z.string().min(1) }),
  factObject({ kind: z.literal('code_cell'), parentOperationId: operationId }),
  factObject({ kind: z.literal('code_mode'), parentOperationId: operationId }),
]);
export type ToolOrigin = z.infer<typeof ToolOriginSchema>;

/** A call as it is dispatched: the T1 boundary records exactly this. */
export const ToolCallSchema = factObject({
  id: z.string().min(1),
  name: z.string().min(1),
  input: JsonValueSchema,
  origin: ToolOriginSchema,
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/**
 * Where a dispatched call's tool came from, when it is not one of the host's own: an
 * MCP server, by its label (never its command, URL or headers). Optional on
 * `tool_dispatched`: logs written before it was recorded still parse.
 */
export const ToolSourceSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('mcp'), server: z.string().min(1).max(256) }),
]);
export type ToolSource = z.infer<typeof ToolSourceSchema>;

/** How a call that never ran is identified: by its step and call id, or by its parent cell. */
export const ToolCallIdentitySchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('provider'), stepId: z.string().min(1), callId: z.string().min(1) }),
  factObject({ kind: z.literal('code_mode'), parentOperationId: operationId, callId: z.string().min(1) }),
]);
export type ToolCallIdentity = z.infer<typeof ToolCallIdentitySchema>;

/** Builders for call identities. */
export const ToolCallIdentity = {
  provider(stepId: string, callId: string): ToolCallIdentity {
    return { kind: 'provider', stepId, callId };
  },
  codeMode(parentOperationId: string, callId: string): ToolCallIdentity {
    return { kind: 'code_mode', parentOperationId, callId };
  },
} as const;

/** The operation id of a provider call: deterministic, so a retry names the same operation. */
export function providerOperationId(stepId: string, callId: string): string {
  return `${stepId}:${callId}`;
}

/** A failure as facts carry it: a stable code and a sentence, never a stack or a secret. */
export const FactErrorSchema = factObject({
  code: z.string().min(1),
  message: z.string(),
});
export type FactError = z.infer<typeof FactErrorSchema>;

/** A tool result stored out of line: its digest and size; the bytes live beside the log. */
export const ResultReferenceSchema = factObject({
  digest: z.string().startsWith('sha256:'),
  bytes: z.number().int().nonnegative(),
});
export type ResultReference = z.infer<typeof ResultReferenceSchema>;

/** How a dispatched call ended: the T2 boundary. */
export const ToolOutcomeSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('succeeded'), result: ResultReferenceSchema }),
  factObject({ kind: z.literal('failed'), error: FactErrorSchema }),
]);
export type ToolOutcome = z.infer<typeof ToolOutcomeSchema>;
