import type { z } from 'zod';
import { ConversationError, type ErrorOperation } from './conversation-error.js';
import { firstIssue } from './first-issue.js';
import {
  PromptAnswerSchema,
  SessionMessagePartsSchema,
  SessionMessageSchema,
} from './opencode-answer-schema.js';
import { type PromptOutcome, PromptOutcomeSchema } from './prompt-outcome.js';

/** An assistant message mapped to the outcome it stands for, with the prompt it answers. */
export type MappedAnswer = {
  /** The user message this assistant message answers (`info.parentID`), if it says. */
  readonly parentId: string | null;
  /** Whether the server is done with it: an error, a `finish` reason or a completion time. */
  readonly done: boolean;
  readonly outcome: PromptOutcome;
};

/**
 * The terminal outcome in a `POST /session/:id/message` answer
 * (`{ info: AssistantMessage, parts: Part[] }`); see `mapAssistantMessage`.
 */
export function mapPromptResponse(body: unknown): PromptOutcome {
  return mapAssistantMessage(body, 'prompt').outcome;
}

/**
 * Maps an assistant message: an aborted one is `cancelled`, any other recorded error
 * `failed`; a `success` needs the server's `finish` reason (the text parts joined); a
 * message completed with neither `finish` nor `error` (the server gave up, e.g. aborted
 * while retrying the model) is `cancelled`, never an empty success. A body of another
 * shape is a protocol error.
 */
export function mapAssistantMessage(body: unknown, operation: ErrorOperation): MappedAnswer {
  const parsed = PromptAnswerSchema.safeParse(body);
  if (!parsed.success) {
    const { path, message } = firstIssue(parsed.error);
    throw new ConversationError(
      `the prompt answer is not an assistant message (\`info\`) with \`parts\`: at ${path}: ${message}`,
      { kind: 'protocol', context: { operation, phase: 'response' }, cause: parsed.error },
    );
  }
  // The outcome is parsed by the schema it will be stored under, so an answer the store
  // could not read back (an empty id, say) is refused here rather than recorded.
  const outcome = PromptOutcomeSchema.safeParse(outcomeOf(parsed.data));
  if (!outcome.success) {
    const { path, message } = firstIssue(outcome.error);
    throw new ConversationError(`the prompt answer's outcome is malformed: at ${path}: ${message}`, {
      kind: 'protocol',
      context: { operation, phase: 'response' },
      cause: outcome.error,
    });
  }
  const { info } = parsed.data;
  return {
    parentId: info.parentID ?? null,
    done: Boolean(info.error || info.finish || info.time?.completed),
    outcome: outcome.data,
  };
}

/**
 * The answer to `parentId` among a session's messages (`GET /session/:id/message`, in
 * creation order): the last assistant message whose `parentID` names it (a prompt with
 * tool calls has one per step; the last one holds the answer). `undefined` when there is
 * none or the server is not done with it.
 */
export function findAnswer(
  messages: readonly unknown[],
  parentId: string,
  operation: ErrorOperation,
): PromptOutcome | undefined {
  let last: unknown;
  for (const message of messages) {
    const entry = SessionMessageSchema.safeParse(message);
    if (!entry.success) continue;
    const { info } = entry.data;
    if (info.role === 'assistant' && info.parentID === parentId) last = message;
  }
  if (last === undefined) return undefined;
  const answer = mapAssistantMessage(last, operation);
  return answer.done ? answer.outcome : undefined;
}

/** A part of an assistant message answering `parentId`, as a `part` event carries it. */
export type AnswerPart = {
  readonly messageId: string;
  readonly partId: string;
  readonly partType: string;
  readonly text: string | null;
};

/** Every part of every assistant message answering `parentId`, oldest first; odd entries skipped. */
export function answerParts(messages: readonly unknown[], parentId: string): AnswerPart[] {
  const parts: AnswerPart[] = [];
  for (const message of messages) {
    const entry = SessionMessagePartsSchema.safeParse(message);
    if (!entry.success) continue;
    const { info } = entry.data;
    if (info.role !== 'assistant' || info.parentID !== parentId) continue;
    for (const part of entry.data.parts) {
      parts.push({ messageId: info.id, partId: part.id, partType: part.type, text: part.text ?? null });
    }
  }
  return parts;
}

function outcomeOf({ info, parts }: z.infer<typeof PromptAnswerSchema>): unknown {
  if (info.error) {
    const { name, data } = info.error;
    if (name === 'MessageAbortedError') return { outcome: 'cancelled', assistantMessageId: info.id };
    return { outcome: 'failed', assistantMessageId: info.id, errorName: name, errorMessage: data.message };
  }
  if (!info.finish) return { outcome: 'cancelled', assistantMessageId: info.id };
  return { outcome: 'success', assistantMessageId: info.id, text: parts.join('') };
}
