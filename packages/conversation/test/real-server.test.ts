import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConversationError,
  type ConversationEvent,
  type OpenCodeBackend,
  type PromptRecord,
  type PromptStream,
  promptKey,
} from '../src/index.js';
import { RealCase } from './support/real-case.js';

// One real `opencode serve` for the file; every test has its own session and store.
let c: RealCase;
beforeAll(async () => {
  c = await RealCase.start();
}, 90_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

type Collected = { readonly events: ConversationEvent[]; readonly error?: unknown };

/** Reads the stream to its end in the background. */
function collect(stream: PromptStream): Promise<Collected> {
  return (async () => {
    const events: ConversationEvent[] = [];
    try {
      for await (const event of stream) events.push(event);
      return { events };
    } catch (error) {
      return { events, error };
    }
  })();
}

function terminals(events: readonly ConversationEvent[]) {
  return events.filter((event) => event.kind === 'terminal');
}

async function statusOf(sessionId: string): Promise<string> {
  const response = await fetch(`${c.server.url}/session/status`);
  const map = (await response.json()) as Record<string, { type: string }>;
  return map[sessionId]?.type ?? 'idle';
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function opened(): Promise<{
  backend: OpenCodeBackend;
  store: Awaited<ReturnType<RealCase['store']>>;
}> {
  const store = await c.store();
  return { backend: await c.backend(store.store), store };
}

describe('against the real OpenCode server', () => {
  it('admits the record before sending, streams the deltas, records the success and clears it before delivery', async () => {
    const { backend, store } = await opened();
    const [model] = c.provider.script({ text: ['Hel', 'lo'], hold: true });
    const stream = backend.prompt({ text: 'say hello' });
    const done = collect(stream);
    await model?.arrived();
    // The server has our message and is asking the model: the record was there before.
    expect(await RealCase.record(store.store, backend.id())).toEqual({
      message_id: stream.messageId,
      request_part_id: expect.stringMatching(/^prt_/),
      phase: { phase: 'admitted' },
      cancellation: { state: 'not_requested' },
      waiter: 'waiting',
    });
    model?.release();
    const { events, error } = await done;
    expect(error).toBeUndefined();
    const deltas = events.filter((event) => event.kind === 'delta');
    expect(deltas.map((event) => (event.kind === 'delta' ? event.delta : '')).join('')).toBe('Hello');
    expect(terminals(events)).toEqual([
      {
        kind: 'terminal',
        outcome: { outcome: 'success', assistantMessageId: expect.stringMatching(/^msg_/), text: 'Hello' },
      },
    ]);
    expect(events.at(-1)?.kind).toBe('terminal');
    expect(await RealCase.record(store.store, backend.id())).toBeUndefined();
    const messages = await c.messages(backend.id());
    expect(messages.map((m) => m.info.role)).toEqual(['user', 'assistant']);
    expect(messages[0]?.info.id).toBe(stream.messageId);
    expect(messages[1]?.info.parentID).toBe(stream.messageId);
  }, 60_000);

  it('our message ids sort among the ids the server makes, by creation', async () => {
    const { backend } = await opened();
    c.provider.script({ text: 'one' });
    const first = backend.prompt({ text: 'first' });
    await first.result();
    // Another client's message, its id made by the server.
    c.provider.script({ text: 'two' });
    const foreign = await fetch(`${c.server.url}/session/${backend.id()}/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts: [{ type: 'text', text: 'second' }] }),
    });
    await foreign.json();
    c.provider.script({ text: 'three' });
    const third = backend.prompt({ text: 'third' });
    await third.result();
    const ids = (await c.messages(backend.id())).map((m) => m.info.id);
    expect(ids).toHaveLength(6);
    expect(ids).toContain(first.messageId);
    expect(ids).toContain(third.messageId);
    // The list is in creation order; so must the ids be, ours and the server's alike.
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
  }, 60_000);

  it('aborting while the server retries the model ends cancelled, never an empty success', async () => {
    const { backend, store } = await opened();
    for (let n = 0; n < 3; n += 1) {
      c.failing.script({
        status: 503,
        headers: { 'retry-after': '60' },
        body: { error: { message: 'overloaded' } },
      });
    }
    const stream = backend.prompt({ text: 'retry me', model: { providerID: 'failing', modelID: 'test' } });
    const done = collect(stream);
    await until('the server to retry the model', async () => (await statusOf(backend.id())) === 'retry');
    const result = await backend.abort();
    expect(result).toEqual({ kind: 'aborted', messageId: stream.messageId });
    const { events, error } = await done;
    expect(error).toBeUndefined();
    expect(terminals(events)).toEqual([
      {
        kind: 'terminal',
        outcome: { outcome: 'cancelled', assistantMessageId: expect.stringMatching(/^msg_/) },
      },
    ]);
    expect(await RealCase.record(store.store, backend.id())).toBeUndefined();
  }, 60_000);

  it("another client's prompt queued behind ours never becomes our outcome", async () => {
    const { backend } = await opened();
    const [ours] = c.provider.script({ text: 'ours', hold: true }, { text: 'theirs' });
    const stream = backend.prompt({ text: 'our question' });
    const done = collect(stream);
    await ours?.arrived();
    const foreign = fetch(`${c.server.url}/session/${backend.id()}/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts: [{ type: 'text', text: 'their question' }] }),
    }).then((response) => response.json() as Promise<{ info: { parentID: string }; parts: unknown[] }>);
    await until('the foreign message to be queued', async () => {
      const users = (await c.messages(backend.id())).filter((m) => m.info.role === 'user');
      return users.length === 2;
    });
    ours?.release();
    const { events, error } = await done;
    expect(error).toBeUndefined();
    expect(terminals(events)).toEqual([
      { kind: 'terminal', outcome: expect.objectContaining({ outcome: 'success', text: 'ours' }) },
    ]);
    // The server answered the other POST (and so ours) with the other prompt's answer.
    const theirs = await foreign;
    expect(theirs.info.parentID).not.toBe(stream.messageId);
    expect(JSON.stringify(theirs.parts)).toContain('theirs');
  }, 60_000);

  it('aborts a prompt mid-stream natively and ends its stream cancelled', async () => {
    const { backend, store } = await opened();
    c.provider.script({ text: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], chunkDelayMs: 400 });
    const stream = backend.prompt({ text: 'stream slowly' });
    const events: ConversationEvent[] = [];
    const iterator = stream[Symbol.asyncIterator]();
    for (;;) {
      const next = await iterator.next();
      if (next.done) throw new Error('the stream ended before a delta');
      events.push(next.value);
      if (next.value.kind === 'delta') break;
    }
    const aborting = backend.abort();
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      events.push(next.value);
    }
    expect(await aborting).toEqual({ kind: 'aborted', messageId: stream.messageId });
    expect(terminals(events)).toEqual([
      { kind: 'terminal', outcome: expect.objectContaining({ outcome: 'cancelled' }) },
    ]);
    expect(await RealCase.record(store.store, backend.id())).toBeUndefined();
    expect(await statusOf(backend.id())).toBe('idle');
  }, 60_000);

  it('concurrent aborts of one running prompt share one reconciliation and one result', async () => {
    const { backend, store } = await opened();
    const [model] = c.provider.script({ text: 'never', hold: true });
    const stream = backend.prompt({ text: 'hold on' });
    const done = collect(stream);
    await model?.arrived();
    const [first, second] = await Promise.all([backend.abort(), backend.abort()]);
    expect(first).toEqual({ kind: 'aborted', messageId: stream.messageId });
    expect(second).toEqual(first);
    model?.release();
    expect(terminals((await done).events)).toHaveLength(1);
    expect(await RealCase.record(store.store, backend.id())).toBeUndefined();
  }, 60_000);

  it('a dropped observer leaves the prompt running; its record says nobody waits, then clears', async () => {
    const { backend, store } = await opened();
    const [model] = c.provider.script({ text: 'unobserved', hold: true });
    const observer = new AbortController();
    const sent = backend.send({ text: 'nobody reads this' }, { signal: observer.signal });
    await model?.arrived();
    observer.abort();
    await expect(sent).rejects.toMatchObject({ kind: 'cancelled' });
    await until('the waiter to be released', async () => {
      return (await RealCase.record(store.store, backend.id()))?.waiter === 'lost';
    });
    model?.release();
    await until('the prompt to be recorded and cleared', async () => {
      return (await RealCase.record(store.store, backend.id())) === undefined;
    });
    expect(await backend.abort()).toEqual({ kind: 'idle' });
  }, 60_000);

  it('an answer whose sender was SIGKILLed is recovered by abort from another process', async () => {
    const { backend: opener, store } = await opened();
    const sessionId = opener.id();
    await opener.close();
    const [model] = c.provider.script({ text: 'kept by the server', hold: true });
    const child = await c.promptChild(sessionId, store.file);
    await model?.arrived();
    await RealCase.kill(child.process);
    model?.release();
    await until('the server to finish the prompt', async () => (await statusOf(sessionId)) === 'idle');
    const record = await RealCase.record(store.store, sessionId);
    expect(record).toMatchObject({ message_id: child.messageId, phase: { phase: 'admitted' } });
    const backend = await c.backend(store.store, sessionId);
    expect(await backend.abort()).toEqual({
      kind: 'settled',
      messageId: child.messageId,
      outcome: {
        outcome: 'success',
        assistantMessageId: expect.stringMatching(/^msg_/),
        text: 'kept by the server',
      },
    });
    expect(await RealCase.record(store.store, sessionId)).toBeUndefined();
    expect(await backend.abort()).toEqual({ kind: 'idle' });
  }, 60_000);

  it('a prompt still running when its sender was SIGKILLed is aborted from another process', async () => {
    const { backend: opener, store } = await opened();
    const sessionId = opener.id();
    await opener.close();
    const [model] = c.provider.script({ text: 'never delivered', hold: true });
    const child = await c.promptChild(sessionId, store.file);
    await model?.arrived();
    await RealCase.kill(child.process);
    const backend = await c.backend(store.store, sessionId);
    expect(await backend.abort()).toEqual({ kind: 'aborted', messageId: child.messageId });
    model?.release();
    expect(await RealCase.record(store.store, sessionId)).toBeUndefined();
    expect(await statusOf(sessionId)).toBe('idle');
  }, 60_000);

  it('a record whose message never reached the server is cleared and reported invalid_state', async () => {
    const { backend, store } = await opened();
    // What a process that crashed between admission and sending leaves behind.
    const tx = await store.store.begin({ purpose: 'admission' });
    const record: PromptRecord = {
      message_id: 'msg_000000000001neverSentXXXX',
      request_part_id: 'prt_000000000002neverSentXXXX',
      phase: { phase: 'admitted' },
      cancellation: { state: 'not_requested' },
      waiter: 'lost',
    };
    await tx.put(promptKey(backend.id()), record);
    await tx.commit();
    const error = await backend.abort().catch((caught: unknown) => caught);
    expect(ConversationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      kind: 'invalid_state',
      context: { operation: 'abort', phase: 'cancellation' },
    });
    expect(await RealCase.record(store.store, backend.id())).toBeUndefined();
  }, 60_000);
});
