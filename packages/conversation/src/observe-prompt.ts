import type { EventSourceMessage } from 'eventsource-parser';
import type { BackendContext } from './backend-context.js';
import { sleep } from './clock.js';
import { ConversationError } from './conversation-error.js';
import type { Deadline } from './deadline.js';
import { mapOpenCodeEvent } from './map-opencode-event.js';
import { findAnswer, mapAssistantMessage } from './map-prompt-response.js';
import type { NativeMessage } from './opencode-client.js';
import type { PromptChannel, PromptTerminal } from './prompt-channel.js';

type Observation = {
  readonly channel: PromptChannel;
  readonly deadline: Deadline;
  readonly message: NativeMessage;
};

/**
 * Sends the prompt and observes it: subscribes to the event stream first (so no event
 * of this prompt can be missed), then posts the message; assistant parts and deltas go
 * to the channel; the answer's body decides the outcome. Every request is cancelled and
 * awaited before this returns, whatever happened.
 */
export async function observePrompt(
  context: BackendContext,
  observation: Observation,
): Promise<PromptTerminal> {
  const { deadline, channel, message } = observation;
  const http = new AbortController();
  const stop = () => http.abort(deadline.signal.reason);
  deadline.signal.addEventListener('abort', stop, { once: true });
  if (deadline.signal.aborted) stop();
  const idle = deferred();
  const assistants = new Set<string>();
  let pumping: Promise<void> = Promise.resolve();
  let answering: Promise<unknown> = Promise.resolve();
  try {
    const events = context.client
      .events({ signal: http.signal, operation: 'prompt' })
      [Symbol.asyncIterator]();
    // The first event proves the subscription is live before the prompt exists.
    const first = await events.next();
    if (first.done) throw streamEnded();
    pumping = pump(events, (event) => {
      const mapped = mapOpenCodeEvent(event.data, 'prompt');
      if (!('sessionId' in mapped) || mapped.sessionId !== context.sessionId) return;
      switch (mapped.type) {
        case 'message.updated':
          if (mapped.role === 'assistant' && mapped.parentId === message.messageId)
            assistants.add(mapped.messageId);
          return;
        case 'message.part.updated':
          if (assistants.has(mapped.messageId)) {
            const { messageId, partId, partType, text } = mapped;
            channel.push({ kind: 'part', messageId, partId, partType, text });
          }
          return;
        case 'message.part.delta':
          if (assistants.has(mapped.messageId)) {
            const { messageId, partId, field, delta } = mapped;
            channel.push({ kind: 'delta', messageId, partId, field, delta });
          }
          return;
        case 'session.status':
          channel.push({ kind: 'status', status: mapped.status });
          return;
        case 'session.idle':
          idle.resolve();
          return;
      }
    });
    answering = context.client.sendMessage(context.sessionId, message, {
      signal: http.signal,
      operation: 'prompt',
    });
    const body = await Promise.race([
      answering,
      pumping.then(() => {
        throw streamEnded();
      }),
    ]);
    const outcome = await ourOutcome(context, message.messageId, body, http.signal);
    // Trailing deltas travel on the other connection; the idle event closes them.
    await Promise.race([
      idle.promise,
      pumping,
      sleep(context.clock, context.timeouts.settleMs, { signal: http.signal }).catch(() => undefined),
    ]).catch(() => undefined);
    return { ok: true, outcome };
  } catch (error) {
    return { ok: false, error: classify(error, deadline) };
  } finally {
    deadline.signal.removeEventListener('abort', stop);
    http.abort();
    await Promise.allSettled([pumping, answering]);
    idle.resolve();
  }
}

/**
 * The outcome of our prompt. The server answers every POST that waited on a session
 * with the session's last assistant message: when another client's prompt was queued
 * behind ours, that is the other prompt's answer. Ours is then looked up by `parentID`
 * among the session's messages; if it is not there, the conflict is an error, never
 * another prompt's text.
 */
async function ourOutcome(context: BackendContext, messageId: string, body: unknown, signal: AbortSignal) {
  const answer = mapAssistantMessage(body, 'prompt');
  if (answer.parentId === messageId) return answer.outcome;
  const messages = await context.client.messages(context.sessionId, {
    signal,
    operation: 'prompt',
    phase: 'response',
  });
  const ours = findAnswer(messages, messageId, 'prompt');
  if (ours) return ours;
  throw new ConversationError(
    `the server answered prompt ${answer.parentId ?? '(none)'} instead of ${messageId}, and no finished answer to ${messageId} is in the session`,
    {
      kind: 'conflict',
      context: { operation: 'prompt', phase: 'response' },
      detail: { kind: 'foreign_answer', messageId, answeredParentId: answer.parentId },
    },
  );
}

async function pump(events: AsyncIterator<EventSourceMessage>, handle: (event: EventSourceMessage) => void) {
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return;
      handle(next.value);
    }
  } finally {
    await events.return?.();
  }
}

function classify(error: unknown, deadline: Deadline): ConversationError {
  if (ConversationError.isInstance(error)) return error;
  if (deadline.cancelledByParent()) {
    return new ConversationError('the conversation was closed while the prompt was running', {
      kind: 'cancelled',
      context: { operation: 'prompt', phase: 'response' },
      cause: error,
    });
  }
  if (deadline.signal.aborted) {
    return new ConversationError('the prompt deadline elapsed before the server answered', {
      kind: 'timeout',
      context: { operation: 'prompt', phase: 'response' },
      detail: { kind: 'deadline_elapsed', deadline: 'operation', timeoutMs: null },
      cause: error,
    });
  }
  return new ConversationError(`the prompt failed: ${String(error)}`, {
    kind: 'integration',
    context: { operation: 'prompt', phase: 'response' },
    cause: error,
  });
}

function streamEnded(): ConversationError {
  return new ConversationError('the server closed the event stream before the prompt ended', {
    kind: 'integration',
    context: { operation: 'prompt', phase: 'stream' },
    detail: { kind: 'service_unavailable' },
  });
}

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
