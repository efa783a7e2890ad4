import type { ProviderKind } from './provider-config.js';
import { renderAnthropic } from './render-anthropic.js';
import { renderChatCompletions } from './render-chat-completions.js';
import { renderResponses } from './render-responses.js';
import type { RenderedAnswer, RenderRequest } from './scripted-render-support.js';
import type { ScriptedAnswer } from './scripted-reply.js';

/** A scripted answer in the wire of `kind`: the SSE events of a stream, and the JSON of a whole body. */
export function renderScriptedAnswer(
  kind: ProviderKind,
  answer: ScriptedAnswer,
  request: RenderRequest,
): RenderedAnswer {
  switch (kind) {
    case 'openai_chat_completions':
      return renderChatCompletions(answer, request);
    case 'openai_responses':
      return renderResponses(answer, request);
    case 'anthropic_messages':
      return renderAnthropic(answer, request);
    default:
      return kind satisfies never;
  }
}

/** The SSE events of a scripted answer to a streaming request (Chat usage included). */
export function renderScriptedStream(kind: ProviderKind, answer: ScriptedAnswer, model: string): string[] {
  return renderScriptedAnswer(kind, answer, { model, includeUsage: true }).events;
}
