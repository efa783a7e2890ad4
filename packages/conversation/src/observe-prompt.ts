import type { EventSourceMessage } from 'eventsource-parser';
import type { BackendContext } from './backend-context.js';
import { sleep } from './clock.js';
import { ConversationError } from './conversation-error.js';
import type { Deadline } from './deadline.js';
import { mapOpenCodeEvent } from './map-opencode-event.js';
import { answerParts, findAnswer, mapAssistantMessage } from './map-prompt-response.js';
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
  const completed = new Set<string>();
  let answered: string | undefined;
  let pumping: Promise<void> = Promise.resolve();
  let answering: Promise<unknown> = Promise.resolve();
  const handle = (event: EventSourceMessage) => {
    const mapped = mapOpenCodeEvent(event.data, 'prompt');
    if (!('sessionId' in mapped) || mapped.sessionId !== context.sessionId) return;
    switch (mapped.type) {
      case 'message.updated':
        if (mapped.role === 'assistant' && mapped.parentId === message.messageId)
          assistants.add(mapped.messageId);
        if (mapped.completed) {
          completed.add(mapped.messageId);
          if (mapped.messageId === answered) idle.resolve();
        }
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
  };
  try {
    ({ pumping } = await subscribe(context, http.signal, handle));
    answering = context.client.sendMessage(context.sessionId, message, {
      signal: http.signal,
      operation: 'prompt',
    });
    let reconnects = 0;
    let body: unknown;
    for (;;) {
      const first = await Promise.race([
        answering.then((answer) => ({ kind: 'answer' as const, answer })),
        pumping.then(
          () => ({ kind: 'ended' as const, error: streamEnded() }),
          (error: unknown) => ({ kind: 'ended' as const, error }),
        ),
      ]);
      if (first.kind === 'answer') {
        body = first.answer;
        break;
      }
      // A broken or closed event stream is resumed (the prompt's answer comes on its own
      // connection); a malformed one, our own cancellation or too many breaks end it.
      const resumable =
        !http.signal.aborted &&
        reconnects < MAX_RECONNECTS &&
        ConversationError.isInstance(first.error) &&
        first.error.kind === 'integration';
      if (!resumable) throw first.error;
      reconnects += 1;
      ({ pumping } = await subscribe(context, http.signal, handle));
      await catchUp(context, { channel, parentId: message.messageId, assistants, signal: http.signal });
    }
    const outcome = await ourOutcome(context, message.messageId, body, http.signal);
    // Trailing deltas travel on the other connection: the answer's completed update (sent
    // after its last delta) or the idle event closes them, whichever comes first.
    answered = outcome.assistantMessageId ?? undefined;
    if (answered !== undefined && completed.has(answered)) idle.resolve();
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

/** How often one prompt resumes a broken event stream before it gives up. */
const MAX_RECONNECTS = 3;

/**
 * Subscribes to the event stream and starts pumping it into `handle`. The first event
 * (`server.connected`) proves the subscription is live, so nothing sent after this
 * resolves can be missed.
 */
async function subscribe(
  context: BackendContext,
  signal: AbortSignal,
  handle: (event: EventSourceMessage) => void,
): Promise<{ readonly pumping: Promise<void> }> {
  const events = context.client.events({ signal, operation: 'prompt' })[Symbol.asyncIterator]();
  const first = await events.next();
  if (first.done) throw streamEnded();
  return { pumping: pump(events, handle) };
}

/**
 * After a reconnect: the real server's stream has no `id:` lines (the event id is inside
 * the JSON) and replays nothing, so what was missed is read from the session's messages.
 * Every part of our assistant messages is sent as a `part` event with its full text so
 * far (a snapshot that replaces, not appends); deltas continue from the new stream.
 */
async function catchUp(
  context: BackendContext,
  catching: {
    readonly channel: PromptChannel;
    readonly parentId: string;
    readonly assistants: Set<string>;
    readonly signal: AbortSignal;
  },
): Promise<void> {
  const messages = await context.client.messages(context.sessionId, {
    signal: catching.signal,
    operation: 'prompt',
    phase: 'stream',
  });
  for (const part of answerParts(messages, catching.parentId)) {
    catching.assistants.add(part.messageId);
    catching.channel.push({ kind: 'part', ...part });
  }
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
