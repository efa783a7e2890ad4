import type { StoredEvent } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { type Harness, startHarness, TOKEN } from './server-harness.ts';

type Message = { event: string; id?: string; data: string };

/** Reads server-sent events from a fetch response, one message at a time. */
class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';

  constructor(response: Response) {
    this.#reader = response.body!.getReader();
  }

  async next(): Promise<Message | undefined> {
    for (;;) {
      const end = this.#buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const message: Message = { event: 'message', data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const [field, ...rest] = line.split(':');
          const value = rest.join(':').replace(/^ /, '');
          if (field === 'event') message.event = value;
          if (field === 'id') message.id = value;
          if (field === 'data') message.data += value;
        }
        if (block.split('\n').every((line) => line.startsWith(':'))) continue;
        return message;
      }
      const { done, value } = await this.#reader.read();
      if (done) return undefined;
      this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }

  /** Facts until one matches `until` (inclusive). */
  async factsUntil(until: (stored: StoredEvent) => boolean): Promise<StoredEvent[]> {
    const facts: StoredEvent[] = [];
    for (;;) {
      const message = await this.next();
      if (message === undefined) throw new Error('the stream ended early');
      if (message.event !== 'fact') continue;
      const stored = JSON.parse(message.data) as StoredEvent;
      expect(message.id, 'each SSE id is the sequence').toBe(String(stored.sequence));
      facts.push(stored);
      if (until(stored)) return facts;
    }
  }

  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

function stream(
  h: Harness,
  session: string,
  init: { query?: string; headers?: Record<string, string>; token?: string | null } = {},
) {
  return h.api(`/api/sessions/${session}/events/stream${init.query ?? ''}`, {
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.token === undefined ? {} : { token: init.token }),
  });
}

describe('the live SSE tail of a session', () => {
  it('delivers facts live as they are written, then resumes after Last-Event-ID without repeats', async () => {
    await using h = await startHarness();
    h.provider.script({ text: ['stream', 'ed text'], finishReason: 'stop', hold: true });
    await h.api('/api/sessions/s-live/turns', { method: 'POST', json: { message: 'hi' } });
    await h.provider.requestArrived(0);
    const response = await stream(h, 's-live');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = new SseReader(response);
    expect((await reader.next())?.event).toBe('ready');
    const early = await reader.factsUntil((stored) => stored.event.fact.kind === 'model_requested');
    expect(early.map((stored) => stored.event.fact.kind)).toEqual(['invocation_opened', 'model_requested']);

    // Only now does the model answer: what follows can only have come from the live tail.
    h.provider.release(0);
    const live = await reader.factsUntil((stored) => stored.event.fact.kind === 'invocation_ended');
    const text = live
      .map((stored) => stored.event.fact)
      .flatMap((fact) =>
        fact.kind === 'model_observed' && fact.observation.kind === 'text_delta'
          ? [fact.observation.text]
          : [],
      )
      .join('');
    expect(text).toBe('streamed text');
    const all = [...early, ...live];
    expect(all, 'the stream is the session’s log, in order').toEqual(
      JSON.parse(JSON.stringify(await h.events())),
    );
    await reader.cancel();

    const middle = all[2]!.sequence;
    const resumed = new SseReader(
      await stream(h, 's-live', { headers: { 'last-event-id': String(middle) }, query: '?after=0' }),
    );
    const rest = await resumed.factsUntil((stored) => stored.event.fact.kind === 'invocation_ended');
    expect(
      rest.map((stored) => stored.sequence),
      'Last-Event-ID wins over ?after',
    ).toEqual(all.filter((stored) => stored.sequence > middle).map((stored) => stored.sequence));
    await resumed.cancel();
  });

  it('accepts the token as ?token= on the stream only, and ends open streams when the server closes', async () => {
    await using h = await startHarness();
    const refused = await stream(h, 's-empty', { token: null });
    expect(refused.status).toBe(401);
    const wrong = await stream(h, 's-empty', { token: null, query: '?token=nope' });
    expect(wrong.status).toBe(401);
    const response = await stream(h, 's-empty', { token: null, query: `?token=${TOKEN}` });
    expect(response.status).toBe(200);
    const reader = new SseReader(response);
    expect((await reader.next())?.event).toBe('ready');
    const closed = h.server.close();
    expect(await reader.next(), 'the stream ends when the server closes').toBeUndefined();
    await closed;
  });
});
