import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EventLog, type LogTarget } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { bounds, done } from './support/agent-loop.ts';
import { bundleChildren, nodeArgs } from './support/child-node.ts';

const child = fileURLToPath(new URL('./support/submit-child.ts', import.meta.url));
beforeAll(() => bundleChildren(child));

type Lines = { lines: Record<string, unknown>[]; signal: string | null };
type Submitter = { output: Promise<Lines>; started: Promise<void>; kill(): void };

function submitter(target: LogTarget, baseUrl: string, suffix: string, ttlMs = 10_000): Submitter {
  const process = spawn(
    'node',
    nodeArgs(child, [
      JSON.stringify(target),
      baseUrl,
      suffix,
      'submission-1',
      'send the invoice to Bob',
      String(ttlMs),
    ]),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let text = '';
  let onStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  process.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    if (text.includes('"started"')) onStarted();
  });
  const output = new Promise<Lines>((resolve, reject) => {
    process.on('error', reject);
    process.on('close', (_code, signal) =>
      resolve({
        lines: text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>),
        signal,
      }),
    );
  });
  return { output, started, kill: () => process.kill('SIGKILL') };
}

async function openings(target: LogTarget): Promise<number> {
  const log = await EventLog.open(target);
  try {
    const events = await log.read({ limit: 10_000 });
    return events.filter((stored) => stored.event.fact.kind === 'invocation_opened').length;
  } finally {
    await log.close();
  }
}

describe.each(testStores())('one submission key, several processes, on $name', (stores) => {
  it('three processes submitting the same key at once start one run, and all three get its outcome', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    // Held until all three have asked: whoever lost the key must not reach the model.
    const [reply] = provider.script({ ...done, text: 'invoice sent', hold: true });
    const processes = ['a', 'b', 'c'].map((suffix) => submitter(store.target, provider.baseUrl, suffix));
    await Promise.all(processes.map((one) => one.started));
    reply!.release();
    const results = await Promise.all(processes.map((one) => one.output));
    const outcomes = results.map((result) => result.lines.find((line) => 'outcome' in line)?.outcome);
    const started = results.map((result) => result.lines.find((line) => 'started' in line));
    expect(new Set(started.map((line) => line?.started)).size, 'one invocation for all three').toBe(1);
    expect(started.filter((line) => line?.resubmitted === false)).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ outcome: { kind: 'completed' }, answer: { text: 'invoice sent' } });
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toEqual(outcomes[0]);
    expect(provider.requests, 'one model request in all').toHaveLength(1);
    expect(await openings(store.target)).toBe(1);
  }, 90_000);

  it('the first holder SIGKILLed mid-run: a retry after its lease expired gets the recovered outcome, never a second run', async () => {
    await using store = await stores.create();
    await using provider = await startScriptedProvider();
    const [reply] = provider.script({ ...done, hold: true });
    const first = submitter(store.target, provider.baseUrl, 'first', 600);
    await reply!.arrived();
    first.kill();
    expect((await first.output).signal).toBe('SIGKILL');

    const retry = await submitter(store.target, provider.baseUrl, 'retry').output;
    expect(retry.lines[0]).toEqual({ started: 'invocation-first', resubmitted: true });
    expect(retry.lines[1]).toMatchObject({
      outcome: {
        invocation: { invocationId: 'invocation-first' },
        outcome: { kind: 'failed', error: { code: 'interrupted' } },
        answer: { parts: [] },
      },
    });
    expect(provider.requests, 'the retry asked no model').toHaveLength(1);
    expect(await openings(store.target)).toBe(1);
    const log = await EventLog.open(store.target);
    expect((await log.submission('shared', 'submission-1', bounds))?.ended).toBe(true);
    await log.close();
  }, 90_000);
});
