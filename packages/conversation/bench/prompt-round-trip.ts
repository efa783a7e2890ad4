// prompt_round_trip: one prompt through OpenCodeBackend against a real `opencode serve`
// (record admitted, answer, delivered; SQLite store with synchronous=FULL) over the same
// prompt sent to the same server with plain fetch and no store, same run, same scripted model.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { report } from '../../../tooling/bench/harness.ts';
import { ascendingIds, OpenCodeBackend, openSqlitePromptStore } from '../src/index.ts';
import { RealOpenCode } from '../test/support/real-opencode.ts';

const ROUNDS = 5;
const PER_ROUND = 10;
const WARMUP = 3;
const text = 'reply with one word';

export async function promptRoundTrip(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-conversation-rtt-'));
  const provider = await startScriptedProvider();
  const server = await RealOpenCode.start({ scripted: provider });
  const store = await openSqlitePromptStore(join(root, 'prompts.sqlite'));
  try {
    const backend = await OpenCodeBackend.open({ baseUrl: server.url, store });
    const plainSession = (await (
      await fetch(`${server.url}/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'plain' }),
      })
    ).json()) as { id: string };
    const newId = ascendingIds();

    const durable = async (prompts: number) => {
      const started = performance.now();
      for (let n = 0; n < prompts; n += 1) {
        provider.script({ text: 'word' });
        const outcome = await backend.send({ text });
        if (outcome.outcome !== 'success') throw new Error(`a bench prompt ended ${outcome.outcome}`);
      }
      return (performance.now() - started) / prompts;
    };
    const plain = async (prompts: number) => {
      const started = performance.now();
      for (let n = 0; n < prompts; n += 1) {
        provider.script({ text: 'word' });
        const response = await fetch(`${server.url}/session/${plainSession.id}/message`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ messageID: newId('msg'), parts: [{ type: 'text', text }] }),
        });
        const body = (await response.json()) as { info?: { finish?: string } };
        if (body.info?.finish !== 'stop') throw new Error('a plain bench prompt did not finish');
      }
      return (performance.now() - started) / prompts;
    };

    // The exchange the backend makes, without its store: subscribe to the events (until
    // `server.connected`), post, read the answer, close the subscription.
    const subscribed = async (prompts: number) => {
      const started = performance.now();
      for (let n = 0; n < prompts; n += 1) {
        provider.script({ text: 'word' });
        const events = new AbortController();
        const stream = await fetch(`${server.url}/event`, { signal: events.signal });
        const reader = stream.body?.getReader();
        await reader?.read();
        const response = await fetch(`${server.url}/session/${plainSession.id}/message`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ messageID: newId('msg'), parts: [{ type: 'text', text }] }),
        });
        await response.json();
        events.abort();
        await reader?.cancel().catch(() => undefined);
      }
      return (performance.now() - started) / prompts;
    };

    await durable(WARMUP);
    await plain(WARMUP);
    const totals = { durable: 0, plain: 0, subscribed: 0 };
    // Alternating rounds: both sessions grow alike, and load on the machine hits both.
    for (let round = 0; round < ROUNDS; round += 1) {
      totals.durable += (await durable(PER_ROUND)) / ROUNDS;
      totals.plain += (await plain(PER_ROUND)) / ROUNDS;
      totals.subscribed += (await subscribed(PER_ROUND)) / ROUNDS;
    }
    await backend.close();
    report({
      measure: 'prompt_round_trip',
      unit: 'ms per prompt against a real opencode serve (send to delivered outcome), records in a SQLite file',
      value: totals.durable,
      baseline: 'the same prompt POSTed to the same server with plain fetch, no store',
      baselineValue: totals.plain,
      goal: '<= 1.3',
      note: `${ROUNDS} alternating rounds of ${PER_ROUND} after ${WARMUP} to warm up; scripted model answering at once; plain fetch with an event subscription per prompt (what the backend sends, no store): ${totals.subscribed.toFixed(1)} ms (ratio ${(totals.subscribed / totals.plain).toFixed(3)})`,
    });
  } finally {
    await store.close();
    await server.close();
    await provider.close();
    rmSync(root, { recursive: true, force: true });
  }
}
