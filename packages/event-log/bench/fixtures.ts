import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import { EventLog } from '../src/index.ts';

export const observed: Fact = {
  kind: 'model_observed',
  stepId: 's',
  observation: { kind: 'text_delta', text: 'some streamed text' },
};
export const opened: Fact = {
  kind: 'invocation_opened',
  input: { kind: 'message', content: 'hi', sourceMessages: [] },
};
export const ended: Fact = { kind: 'invocation_ended', outcome: { kind: 'completed' } };

export const at = (session: string, id = 'i'): Invocation => ({
  sessionId: session,
  turnId: 't',
  runId: 'r',
  invocationId: id,
});

export const write = (where: Invocation, fact: Fact) => EventWrite.plain(RuntimeEvent.create(where, fact));

/**
 * Fills a log with `events` events in sessions of 100 facts (every tenth left
 * unfinished, so recovery has work to list). Many sessions write at once so that group
 * commit packs thousands of rows per transaction; returns the fill time in ms.
 */
export async function fill(path: string, events: number): Promise<number> {
  const started = performance.now();
  const log = await EventLog.open(path, { maxBatch: 4096 });
  const sessions = Math.max(1, Math.floor(events / 100));
  const chunk = 400;
  for (let start = 0; start < sessions; start += chunk) {
    await Promise.all(
      Array.from({ length: Math.min(chunk, sessions - start) }, (_, offset) => {
        const where = at(`s${start + offset}`);
        const writes = [write(where, opened)];
        for (let index = 0; index < 98; index += 1) writes.push(write(where, observed));
        if ((start + offset) % 10 !== 0) writes.push(write(where, ended));
        return Promise.all(writes.map((item) => log.append(item)));
      }),
    );
  }
  await log.close();
  return performance.now() - started;
}
