import { describe, expect, it } from 'vitest';
import {
  ConversationError,
  type ConversationEvent,
  OpenCodeBackend,
  openSqlitePromptStore,
} from '../src/index.js';
import { FakeOpenCodeServer } from '../src/testing.js';
import { eventually } from './support/deferred.js';
import { postOnce } from './support/post-once.js';
import { OpenCodeStreamCase } from './support/stream-case.js';

/** Reads `events` to its end: what it yielded, and the error it ended with, if any. */
async function drain(events: AsyncIterator<ConversationEvent>, seen: ConversationEvent[] = []) {
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return { seen, error: undefined };
      seen.push(next.value);
    }
  } catch (error) {
    return { seen, error };
  }
}

/** Reads `events` until `match` holds for one of them. */
async function until(
  events: AsyncIterator<ConversationEvent>,
  seen: ConversationEvent[],
  match: (e: ConversationEvent) => boolean,
) {
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error('the stream ended early');
    seen.push(next.value);
    if (match(next.value)) return next.value;
  }
}

const terminals = (seen: readonly ConversationEvent[]) => seen.filter((event) => event.kind === 'terminal');

describe('the answer to our prompt', () => {
  it('a prompt aborted while the server retries (completed with neither finish nor error) is cancelled', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      t.server.abortWithoutError = true;
      const { stream, events } = await t.stream();
      expect(await t.conversation.abort()).toEqual({ kind: 'aborted', messageId: stream.messageId });
      const { seen, error } = await drain(events);
      expect(error).toBeUndefined();
      expect(terminals(seen)).toEqual([
        {
          kind: 'terminal',
          outcome: { outcome: 'cancelled', assistantMessageId: expect.stringMatching(/^msg_/) },
        },
      ]);
    } finally {
      await t.revoke();
    }
  });

  it("another client's prompt queued behind ours: the server answers both POSTs with theirs, we deliver ours", async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const { stream, events } = await t.stream();
      t.server.beginText();
      t.server.delta('evt_ours', t.server.assistantId ?? '', 'prt_x', 'text', 'ours');
      const foreign = postOnce(`${t.server.url}/session/${t.conversation.id()}/message`, {
        messageID: 'msg_ffffffffffffforeignXXXXXX',
        parts: [{ type: 'text', text: 'theirs?' }],
      }) as Promise<{ info: { parentID: string } }>;
      await t.server.waitForMessages(2);
      t.server.release();
      // Ours is answered; theirs runs now.
      t.server.beginText();
      t.server.delta('evt_theirs', t.server.assistantId ?? '', 'prt_y', 'text', 'theirs');
      t.server.release();
      const { seen, error } = await drain(events);
      expect(error).toBeUndefined();
      expect(terminals(seen)).toEqual([
        { kind: 'terminal', outcome: expect.objectContaining({ outcome: 'success', text: 'ours' }) },
      ]);
      expect((await foreign).info.parentID).toBe('msg_ffffffffffffforeignXXXXXX');
      expect(stream.messageId).not.toBe('msg_ffffffffffffforeignXXXXXX');
    } finally {
      await t.revoke();
    }
  });

  it('an answer naming a parent that is nobody is a typed conflict; the record stays and abort delivers ours once', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      t.server.answerParentId = 'msg_000000000000nobodyXXXXXXX';
      t.server.listAnswers = false;
      const { stream, events } = await t.stream();
      t.server.beginText();
      t.server.delta('evt_1', t.server.assistantId ?? '', 'prt_x', 'text', 'kept');
      t.server.release();
      const { seen, error } = await drain(events);
      expect(terminals(seen)).toEqual([]);
      expect(ConversationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        kind: 'conflict',
        context: { operation: 'prompt', phase: 'response' },
        detail: {
          kind: 'foreign_answer',
          messageId: stream.messageId,
          answeredParentId: 'msg_000000000000nobodyXXXXXXX',
        },
      });
      const kept = await t.snapshot();
      expect(kept?.value).toMatchObject({ message_id: stream.messageId, phase: { phase: 'admitted' } });
      // The server still has our answer: abort recovers it by parentID, once.
      t.server.listAnswers = true;
      expect(await t.conversation.abort()).toEqual({
        kind: 'settled',
        messageId: stream.messageId,
        outcome: { outcome: 'success', assistantMessageId: expect.stringMatching(/^msg_/), text: 'kept' },
      });
      expect(await t.snapshot()).toBeUndefined();
      expect(await t.conversation.abort()).toEqual({ kind: 'idle' });
      expect(t.server.stats.messages).toBe(1);
    } finally {
      await t.revoke();
    }
  });

  it('an answer lost in transit is recovered by abort instead of being declared lost', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      t.server.malformedStreamResponse = true;
      const { stream, events } = await t.stream();
      t.server.beginText();
      t.server.delta('evt_1', t.server.assistantId ?? '', 'prt_x', 'text', 'recoverable');
      t.server.release();
      const { error } = await drain(events);
      expect(error).toMatchObject({ kind: 'protocol' });
      expect((await t.snapshot())?.value.phase).toEqual({ phase: 'admitted' });
      expect(await t.conversation.abort()).toEqual({
        kind: 'settled',
        messageId: stream.messageId,
        outcome: expect.objectContaining({ outcome: 'success', text: 'recoverable' }),
      });
      expect(t.server.stats.aborts).toBe(0);
    } finally {
      await t.revoke();
    }
  });
});

describe('the event stream', () => {
  it('an observer whose stream breaks mid-prompt reconnects, catches up from the messages, and ends in one terminal', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const { events } = await t.stream();
      const seen: ConversationEvent[] = [];
      t.server.beginText();
      t.server.delta('evt_1', t.server.assistantId ?? '', 'prt_x', 'text', 'par');
      await until(events, seen, (event) => event.kind === 'delta');
      t.server.dropEventStreams();
      // Missed while disconnected: the catch-up snapshot must carry it.
      t.server.delta('evt_2', t.server.assistantId ?? '', 'prt_x', 'text', 'ti');
      const snapshot = await until(events, seen, (event) => event.kind === 'part' && event.text === 'parti');
      expect(snapshot).toMatchObject({ kind: 'part', partType: 'text', messageId: t.server.assistantId });
      await eventually('the observer to subscribe again', async () =>
        t.server.subscribers === 1 ? true : undefined,
      );
      t.server.delta('evt_3', t.server.assistantId ?? '', 'prt_x', 'text', 'al');
      t.server.release();
      const { error } = await drain(events, seen);
      expect(error).toBeUndefined();
      expect(
        seen.filter((event) => event.kind === 'delta').map((event) => event.kind === 'delta' && event.delta),
      ).toEqual(['par', 'al']);
      expect(terminals(seen)).toEqual([
        { kind: 'terminal', outcome: expect.objectContaining({ outcome: 'success', text: 'partial' }) },
      ]);
    } finally {
      await t.revoke();
    }
  });
});

describe('a server of another protocol version', () => {
  it('is refused at open with a typed protocol error', async () => {
    await using server = await FakeOpenCodeServer.start();
    server.version = '2.0.0';
    const store = await openSqlitePromptStore(':memory:');
    try {
      const error = await OpenCodeBackend.open({ baseUrl: server.url, store }).catch(
        (caught: unknown) => caught,
      );
      expect(ConversationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        kind: 'protocol',
        context: { operation: 'open', phase: 'session' },
        detail: { kind: 'unsupported_version', version: '2.0.0' },
      });
    } finally {
      await store.close();
    }
  });
});
