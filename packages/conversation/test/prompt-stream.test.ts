import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConversationError,
  type ConversationEvent,
  OpenCodeBackend,
  openSqlitePromptStore,
} from '../src/index.js';
import { FakeOpenCodeServer } from '../src/testing.js';
import { eventually } from './support/deferred.js';
import { OpenCodeStreamCase } from './support/stream-case.js';

async function collect(events: AsyncIterator<ConversationEvent>): Promise<ConversationEvent[]> {
  const seen: ConversationEvent[] = [];
  for (;;) {
    const next = await events.next();
    if (next.done) return seen;
    seen.push(next.value);
  }
}

describe('prompt', () => {
  it('streams the assistant deltas and ends in exactly one terminal', async () => {
    const t = await OpenCodeStreamCase.start({ promptMode: 'auto' });
    try {
      const { events } = await t.stream();
      const seen = await collect(events);
      const deltas = seen.filter((event) => event.kind === 'delta').map((event) => event.delta);
      expect(deltas).toEqual(['Hel', 'lo']);
      expect(seen.filter((event) => event.kind === 'terminal')).toHaveLength(1);
      expect(seen.at(-1)).toEqual({
        kind: 'terminal',
        outcome: { outcome: 'success', assistantMessageId: t.server.assistantId, text: 'Hello' },
      });
      expect(await events.next()).toEqual({ done: true, value: undefined });
      expect(await t.snapshot()).toBeUndefined();
      expect(t.server.stats.messages).toBe(1);
    } finally {
      await t.revoke();
    }
  });

  it('sends the client-chosen message id and request part id it recorded before sending', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const stream = t.conversation.prompt(OpenCodeStreamCase.request());
      await t.server.waitForMessages(1);
      const record = await t.waitForAdmission();
      expect(record.value.message_id).toBe(stream.messageId);
      expect(record.value).toMatchObject({
        phase: { phase: 'admitted' },
        cancellation: { state: 'not_requested' },
        waiter: 'waiting',
      });
      t.server.release();
      await expect(stream.result()).resolves.toMatchObject({ outcome: 'success' });
      expect(await t.snapshot()).toBeUndefined();
    } finally {
      await t.revoke();
    }
  });

  it('the unary form resolves to the terminal outcome', async () => {
    const t = await OpenCodeStreamCase.start({ promptMode: 'auto' });
    try {
      const outcome = await t.conversation.send(OpenCodeStreamCase.request());
      expect(outcome).toEqual({
        outcome: 'success',
        assistantMessageId: t.server.assistantId,
        text: 'Hello',
      });
    } finally {
      await t.revoke();
    }
  });

  it('refuses a second prompt while one is in flight', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const stream = t.conversation.prompt(OpenCodeStreamCase.request());
      await t.server.waitForMessages(1);
      const second = t.conversation.prompt(OpenCodeStreamCase.request());
      const error = await second.result().catch((caught: unknown) => caught);
      expect(ConversationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        kind: 'invalid_state',
        context: { operation: 'prompt', phase: 'admission' },
      });
      t.server.release();
      await stream.result();
      expect(t.server.stats.messages).toBe(1);
    } finally {
      await t.revoke();
    }
  });

  it('dropping the unary observer leaves the prompt running and durably ends its waiter', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const caller = new AbortController();
      const unary = t.conversation.send(OpenCodeStreamCase.request(), { signal: caller.signal });
      await t.server.waitForMessages(1);
      await t.waitForAdmission();
      caller.abort();
      await expect(unary).rejects.toMatchObject({ kind: 'cancelled' });
      await eventually('waiter lost', async () =>
        (await t.snapshot())?.value.waiter === 'lost' ? true : undefined,
      );
      t.server.release();
      // Nobody waits: the recorded terminal is cleared without a hand-over.
      await eventually('record cleared', async () => ((await t.snapshot()) === undefined ? true : undefined));
      expect(t.server.stats.aborts).toBe(0);
      expect(t.server.stats.promptResponses).toBe(1);
    } finally {
      await t.revoke();
    }
  });
});

describe('abort', () => {
  it('aborts a live prompt natively, delivers its cancelled terminal and clears its record', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const { stream, events } = await t.stream();
      t.server.beginText();
      t.server.delta('evt_live', t.server.assistantId ?? '', 'prt_live', 'text', 'partial');
      expect(await OpenCodeStreamCase.nextDelta(events)).toMatchObject({ delta: 'partial' });
      const result = await t.conversation.abort();
      expect(result).toEqual({ kind: 'aborted', messageId: stream.messageId });
      const rest = await collect(events);
      expect(rest.filter((event) => event.kind === 'terminal')).toEqual([
        { kind: 'terminal', outcome: { outcome: 'cancelled', assistantMessageId: t.server.assistantId } },
      ]);
      expect(t.server.stats.aborts).toBe(1);
      expect(await t.snapshot()).toBeUndefined();
      await expect(t.conversation.abort()).resolves.toEqual({ kind: 'idle' });
      expect(t.server.stats.aborts).toBe(1);
    } finally {
      await t.revoke();
    }
  });

  it('an abort with nothing in flight is idle and touches nothing', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      await expect(t.conversation.abort()).resolves.toEqual({ kind: 'idle' });
      expect(t.server.stats.aborts).toBe(0);
    } finally {
      await t.revoke();
    }
  });
});

describe('server faults', () => {
  it('malformed SSE from the server ends the prompt with a protocol error and keeps its record', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const { events } = await t.stream();
      await t.waitForAdmission();
      t.server.emitMalformedEvent();
      const error = await OpenCodeStreamCase.terminalError(events);
      expect(ConversationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ kind: 'protocol', context: { operation: 'prompt', phase: 'stream' } });
      expect(await events.next()).toEqual({ done: true, value: undefined });
      const record = await t.snapshot();
      expect(record?.value).toMatchObject({ phase: { phase: 'admitted' }, waiter: 'lost' });
      // The native prompt still runs: abort reconciles it.
      await expect(t.conversation.abort()).resolves.toMatchObject({ kind: 'aborted' });
      expect(t.server.stats.aborts).toBe(1);
      expect(await t.snapshot()).toBeUndefined();
    } finally {
      await t.revoke();
    }
  });

  it('a prompt answer that is not JSON is a protocol error in phase response', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      t.server.malformedStreamResponse = true;
      const { events } = await t.stream();
      t.server.release();
      const error = await OpenCodeStreamCase.terminalError(events);
      expect(error).toMatchObject({ kind: 'protocol', context: { operation: 'prompt', phase: 'response' } });
    } finally {
      await t.revoke();
    }
  });

  it('an HTTP 500 answer to a prompt is an integration error with service_unavailable', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      t.server.failMessageStatus = 500;
      const { events } = await t.stream();
      const error = await OpenCodeStreamCase.terminalError(events);
      expect(error).toMatchObject({
        kind: 'integration',
        context: { operation: 'prompt', phase: 'response' },
        detail: { kind: 'service_unavailable' },
      });
    } finally {
      await t.revoke();
    }
  });

  it('a session body that is not JSON makes open fail with a typed protocol error', async () => {
    const server = await FakeOpenCodeServer.start();
    const dir = mkdtempSync(join(tmpdir(), 'factum-conversation-'));
    const store = await openSqlitePromptStore(join(dir, 'prompts.sqlite'));
    try {
      server.malformedSessionBody = true;
      const error = await OpenCodeBackend.open({ baseUrl: server.url, store }).catch(
        (caught: unknown) => caught,
      );
      expect(ConversationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ kind: 'protocol', context: { operation: 'open', phase: 'session' } });
      await eventually('connections closed', async () => (server.stats.connections === 0 ? true : undefined));
    } finally {
      await store.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('close', () => {
  it('closing the backend ends a live observation and releases every connection and timer', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const { events } = await t.stream();
      await t.waitForAdmission();
      await t.conversation.close();
      const error = await OpenCodeStreamCase.terminalError(events);
      expect(error).toMatchObject({ kind: 'cancelled', context: { operation: 'prompt' } });
      expect(t.clock.pending).toBe(0);
      await eventually('connections closed', async () =>
        t.server.stats.connections === 0 ? true : undefined,
      );
      // The native prompt was not aborted: its record stays for a later abort to reconcile.
      expect((await t.snapshot())?.value.phase).toEqual({ phase: 'admitted' });
      expect(t.server.stats.aborts).toBe(0);
    } finally {
      await t.revoke();
    }
  });
});
