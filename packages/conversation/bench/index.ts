// `pnpm bench` in @factum/conversation: what driving a prompt durably costs over the
// same HTTP exchange made by hand, against one loopback fake server in the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { request } from 'undici';
import { report } from '../../../tooling/bench/harness.ts';
import { OpenCodeBackend, openSqlitePromptStore, type PromptStore } from '../src/index.ts';
import { FakeOpenCodeServer } from '../src/testing.ts';
import { promptRoundTrip } from './prompt-round-trip.ts';

const ROUNDS = 5;
const PER_ROUND = 100;
const text = 'reply with one word';

/** Prompts through the backend, its record admitted and cleared in `store`: ms each. */
async function durable(conversation: OpenCodeBackend, prompts: number): Promise<number> {
  const started = performance.now();
  for (let n = 0; n < prompts; n += 1) {
    const outcome = await conversation.send({ text });
    if (outcome.outcome !== 'success') throw new Error(`a bench prompt ended ${outcome.outcome}`);
  }
  return (performance.now() - started) / prompts;
}

let sent = 0;

/**
 * The exchange the backend makes, by hand with undici and no store: subscribe to the
 * events, post the message, read its answer, wait for the session to go idle. ms each.
 */
async function byHand(url: string, session: string, prompts: number): Promise<number> {
  const started = performance.now();
  for (let n = 0; n < prompts; n += 1) {
    sent += 1;
    const http = new AbortController();
    const events = await request(`${url}/event`, { signal: http.signal });
    let seen: (type: string) => void = () => {};
    const parser = createParser({
      onEvent: (event) => seen((JSON.parse(event.data) as { type: string }).type),
    });
    const decoder = new TextDecoder();
    events.body.on('data', (chunk: Buffer) => parser.feed(decoder.decode(chunk, { stream: true })));
    events.body.on('error', () => undefined);
    await new Promise<void>((resolve) => (seen = () => resolve()));
    const idle = new Promise<void>((resolve) => (seen = (type) => type === 'session.idle' && resolve()));
    const answer = await request(`${url}/session/${session}/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        messageID: `msg_hand_${sent}`,
        parts: [{ id: `prt_hand_${sent}`, type: 'text', text }],
      }),
    });
    const body = (await answer.body.json()) as { info?: { error?: unknown } };
    if (body.info === undefined || body.info.error !== undefined) throw new Error('a bench prompt failed');
    await idle;
    http.abort();
  }
  return (performance.now() - started) / prompts;
}

const root = mkdtempSync(join(tmpdir(), 'factum-conversation-bench-'));
const server = await FakeOpenCodeServer.start({ promptMode: 'auto' });
const stores: PromptStore[] = [];
try {
  const open = async (path: string) => {
    const store = await openSqlitePromptStore(path);
    stores.push(store);
    return OpenCodeBackend.open({ baseUrl: server.url, store });
  };
  const onFile = await open(join(root, 'prompts.sqlite'));
  const inMemory = await open(':memory:');
  const session = onFile.id();
  await durable(onFile, 30);
  await durable(inMemory, 30);
  await byHand(server.url, session, 30);
  const totals = { file: 0, memory: 0, hand: 0 };
  for (let round = 0; round < ROUNDS; round += 1) {
    totals.file += (await durable(onFile, PER_ROUND)) / ROUNDS;
    totals.memory += (await durable(inMemory, PER_ROUND)) / ROUNDS;
    totals.hand += (await byHand(server.url, session, PER_ROUND)) / ROUNDS;
  }
  await onFile.close();
  await inMemory.close();
  report({
    measure: 'conversation_prompt_ms',
    unit: 'ms per prompt (send to its outcome), prompt records in a SQLite file',
    value: totals.file,
    baseline: 'the same requests made by hand with undici, no store',
    baselineValue: totals.hand,
    note: `with the records in a :memory: store ${totals.memory.toFixed(3)} ms (ratio ${(totals.memory / totals.hand).toFixed(3)}); the file's extra is a prompt's three durable commits (admission, response, delivery)`,
  });
} finally {
  for (const store of stores) await store.close();
  await server.close();
  rmSync(root, { recursive: true, force: true });
}

await promptRoundTrip();
