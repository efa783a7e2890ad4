import { z } from 'zod';
import { factObject } from './fact-object.js';
import { JsonValueSchema } from './json-value.js';

/**
 * One tool call the model asked for. `input` is the parsed JSON arguments; when the
 * provider sent arguments that are not JSON, `invalidArguments` keeps the raw text and
 * the tools layer rejects the call as invalid input instead of running it.
 */
export const ModelToolCallSchema = factObject({
  id: z.string().min(1),
  name: z.string().min(1),
  input: JsonValueSchema,
  invalidArguments: z.string().optional(),
  providerExecuted: z.boolean().optional(),
});
export type ModelToolCall = z.infer<typeof ModelToolCallSchema>;

/**
 * A piece of a model's answer. `refusal` is the model declining to answer, in its own
 * words, as the provider marked it (OpenAI's `refusal` deltas): kept apart from `text`
 * so that nothing mistakes it for an answer.
 */
export const ModelPartSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('text'), text: z.string() }),
  factObject({ kind: z.literal('reasoning'), text: z.string() }),
  factObject({ kind: z.literal('refusal'), text: z.string() }),
  factObject({ kind: z.literal('tool_call'), call: ModelToolCallSchema }),
]);
export type ModelPart = z.infer<typeof ModelPartSchema>;

/**
 * Why the model stopped, normalised across providers. `refusal`: the model declined
 * (a refusal part, or Anthropic's `refusal` stop reason); `content_filter`: the
 * provider's filter cut the answer.
 */
export const ModelFinishReasonSchema = z.enum([
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'refusal',
  'error',
  'other',
]);
export type ModelFinishReason = z.infer<typeof ModelFinishReasonSchema>;

/** Token counts as the provider reported them (zero when it reported none). */
export const ModelUsageSchema = factObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative().optional(),
  cachedInputTokens: z.number().int().nonnegative().optional(),
});
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

/** The normalised result of one model request. */
export const ModelStepSchema = factObject({
  parts: z.array(ModelPartSchema),
  finishReason: ModelFinishReasonSchema,
  usage: ModelUsageSchema,
  responseId: z.string().optional(),
  model: z.string().optional(),
});
export type ModelStep = z.infer<typeof ModelStepSchema>;

/** A streamed piece of a model's answer, as it arrived. */
export const ModelObservationSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('text_delta'), text: z.string() }),
  factObject({ kind: z.literal('reasoning_delta'), text: z.string() }),
  factObject({ kind: z.literal('refusal_delta'), text: z.string() }),
  factObject({
    kind: z.literal('tool_call_delta'),
    index: z.number().int().nonnegative(),
    id: z.string().optional(),
    name: z.string().optional(),
    argumentsDelta: z.string(),
  }),
]);
export type ModelObservation = z.infer<typeof ModelObservationSchema>;

/** What a model request was for. */
export const ModelPurposeSchema = z.enum(['main', 'summary', 'title']);
export type ModelPurpose = z.infer<typeof ModelPurposeSchema>;

/** Usage of a step that reported none. */
export function emptyUsage(): ModelUsage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
}
