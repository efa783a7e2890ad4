import { request } from 'node:http';
import { startScriptedProvider } from '@factum/model/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ascendingIds } from '../src/index.js';
import { FakeOpenCodeServer } from '../src/testing.js';
import { postOnce } from './support/post-once.js';
import { RealOpenCode } from './support/real-opencode.js';

/** One server under test: the fake or the real one, with a model it can hold. */
type Target = {
  readonly url: string;
  /** Holds the model's next answer (`Hello`): resolves when it was asked; `release` answers. */
  hold(): { readonly asked: Promise<void>; release(): void };
  /** Times the model was asked. */
  modelCalls(): number;
};

/** What a server sends for the same scenario, reduced to what a client relies on. */
type Profile = {
  readonly sseIdLines: boolean;
  readonly eventIdsInJson: boolean;
  readonly headersBeforeDone: boolean;
  readonly statuses: readonly string[];
  readonly busyMoreThanOnce: boolean;
  readonly ourEventTypes: readonly string[];
  readonly answerParentIsOurs: boolean;
  readonly answerFinish: unknown;
  readonly answerText: string;
  readonly answerIdInServerScheme: boolean;
  readonly answerSortsAfterOurs: boolean;
  readonly rePostSameAnswer: boolean;
  readonly rePostAskedModel: boolean;
  readonly listedByParent: boolean;
  readonly disconnectedPromptFinished: boolean;
};

type Answer = {
  info: { id: string; parentID?: string; finish?: string };
  parts: Array<{ type: string; text?: string }>;
};

const ID = /^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/;
const known = [
  'message.updated',
  'message.part.updated',
  'message.part.delta',
  'session.status',
  'session.idle',
];

async function json<T>(url: string, body?: unknown): Promise<T> {
  if (body !== undefined) return (await postOnce(url, body)) as T;
  const response = await fetch(url);
  return (await response.json()) as T;
}

/** A POST whose headers are seen as they arrive; `cancel` drops the connection. */
function watchedPost(url: string, body: unknown) {
  let headers = false;
  const outgoing = request(url, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json' },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    outgoing.on('response', (response) => {
      headers = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
  });
  answer.catch(() => undefined);
  outgoing.end(JSON.stringify(body));
  return { answer, headersSeen: () => headers, cancel: () => outgoing.destroy() };
}

/** Reads the raw event stream until `stop`. */
function rawEvents(url: string) {
  let text = '';
  const outgoing = request(`${url}/event`, { agent: false });
  const connected = new Promise<void>((resolve, reject) => {
    outgoing.on('response', (response) => {
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('server.connected')) resolve();
      });
      response.on('error', () => undefined);
    });
    outgoing.on('error', reject);
  });
  outgoing.end();
  return { connected, text: () => text, stop: () => outgoing.destroy() };
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function profile(target: Target): Promise<Profile> {
  const newId = ascendingIds();
  const session = await json<{ id: string }>(`${target.url}/session`, { title: 'fidelity' });
  const messages = `${target.url}/session/${session.id}/message`;
  const events = rawEvents(target.url);
  await events.connected;
  try {
    const ours = newId('msg');
    const held = target.hold();
    const post = watchedPost(messages, { messageID: ours, parts: [{ type: 'text', text: 'say hello' }] });
    await held.asked;
    // A full round trip to the server after the model was asked: headers would be here by now.
    await json(`${target.url}/session/status`);
    const headersBeforeDone = post.headersSeen();
    held.release();
    const answer = await post.answer;
    await until('the session to go idle', async () =>
      events.text().includes(`"type":"session.idle","properties":{"sessionID":"${session.id}"`),
    );
    const frames = events
      .text()
      .split('\n\n')
      .filter((frame) => frame.trim() !== '');
    const parsed = frames.map(
      (frame) => JSON.parse(frame.replace(/^data: /m, '')) as Record<string, unknown>,
    );
    const ourEvents = parsed.filter((event) => {
      const properties = event.properties as { sessionID?: string } | undefined;
      return properties?.sessionID === session.id && known.includes(String(event.type));
    });
    const statuses = ourEvents
      .filter((event) => event.type === 'session.status')
      .map((event) => (event.properties as { status: { type: string } }).status.type);
    const calls = target.modelCalls();
    const again = await json<Answer>(messages, {
      messageID: ours,
      parts: [{ type: 'text', text: 'say hello' }],
    });
    const rePostAskedModel = target.modelCalls() !== calls;
    const listed = await json<Answer[]>(messages);
    // A second prompt whose client goes away while the model runs.
    const gone = newId('msg');
    const second = target.hold();
    const dropped = watchedPost(messages, {
      messageID: gone,
      parts: [{ type: 'text', text: 'go on without me' }],
    });
    await second.asked;
    dropped.cancel();
    second.release();
    let disconnectedPromptFinished = false;
    await until('the dropped prompt to finish', async () => {
      const list = await json<Answer[]>(messages);
      disconnectedPromptFinished = list.some((m) => m.info.parentID === gone && m.info.finish === 'stop');
      return disconnectedPromptFinished;
    });
    return {
      sseIdLines: frames.some((frame) => /^id:/m.test(frame)),
      eventIdsInJson: parsed.every((event) => typeof event.id === 'string' && event.id.startsWith('evt_')),
      headersBeforeDone,
      statuses: statuses.filter((status, index) => status !== statuses[index - 1]),
      busyMoreThanOnce: statuses.filter((status) => status === 'busy').length > 1,
      ourEventTypes: [...new Set(ourEvents.map((event) => String(event.type)))].sort(),
      answerParentIsOurs: answer.info.parentID === ours,
      answerFinish: answer.info.finish,
      answerText: answer.parts.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join(''),
      answerIdInServerScheme: ID.test(answer.info.id),
      answerSortsAfterOurs: answer.info.id > ours,
      rePostSameAnswer: again.info.id === answer.info.id,
      rePostAskedModel,
      listedByParent: listed.some((m) => m.info.id === answer.info.id && m.info.parentID === ours),
      disconnectedPromptFinished,
    };
  } finally {
    events.stop();
  }
}

let real: RealOpenCode;
let provider: Awaited<ReturnType<typeof startScriptedProvider>>;
beforeAll(async () => {
  provider = await startScriptedProvider();
  real = await RealOpenCode.start({ scripted: provider });
}, 90_000);
afterAll(async () => {
  await real?.close();
  await provider?.close();
}, 30_000);

describe('the fake server sends what the real one sends', () => {
  it('for a prompt, its answer, a re-post, the message list and a client that goes away', async () => {
    const realProfile = await profile({
      url: real.url,
      hold: () => {
        const [reply] = provider.script({ text: 'Hello', hold: true });
        if (!reply) throw new Error('no reply');
        return { asked: reply.arrived().then(() => undefined), release: () => reply.release() };
      },
      modelCalls: () => provider.recorded.length,
    });
    await using fake = await FakeOpenCodeServer.start({ promptMode: 'held' });
    const fakeProfile = await profile({
      url: fake.url,
      hold: () => {
        const asked = fake.waitForMessages(fake.stats.messages + 1);
        return {
          asked,
          release: () => {
            fake.beginText();
            fake.delta('evt_000000000001helloXXXXXXXX', fake.assistantId ?? '', 'prt_hello', 'text', 'Hello');
            fake.release();
          },
        };
      },
      modelCalls: () => fake.stats.modelCalls,
    });
    // What the real server does, stated, so that a change of the server fails here first.
    expect(realProfile).toEqual({
      sseIdLines: false,
      eventIdsInJson: true,
      headersBeforeDone: false,
      statuses: ['busy', 'idle'],
      busyMoreThanOnce: true,
      ourEventTypes: known.slice().sort(),
      answerParentIsOurs: true,
      answerFinish: 'stop',
      answerText: 'Hello',
      answerIdInServerScheme: true,
      answerSortsAfterOurs: true,
      rePostSameAnswer: true,
      rePostAskedModel: false,
      listedByParent: true,
      disconnectedPromptFinished: true,
    });
    expect(fakeProfile).toEqual(realProfile);
  }, 90_000);
});
