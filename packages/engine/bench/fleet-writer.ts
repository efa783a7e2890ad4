// One writer process of the PostgreSQL fleet benchmark: 16 sessions appending facts
// concurrently for a fixed time after the gate file appears; prints how many were durable.
import { existsSync, writeSync } from 'node:fs';
import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { EventLog, type LogTarget } from '@factum/event-log';

const [targetText, name, sessionsText, durationText, gate] = process.argv.slice(2) as string[];
// Where each batch's time went: waiting for the chain's writer position, then holding it.
const lock = { batches: 0, facts: 0, waitMs: 0, holdMs: 0 };
let timed = false;
const log = await EventLog.open(JSON.parse(targetText!) as LogTarget, {
  hooks: {
    afterCommit: ({ size, timing }) => {
      if (!timed || timing === undefined) return;
      lock.batches += 1;
      lock.facts += size;
      lock.waitMs += timing.waitedMs;
      lock.holdMs += timing.heldMs;
    },
  },
});
await log.holdLease({ hostId: name! });
const invocations = Array.from({ length: Number(sessionsText) }, (_, n) => ({
  sessionId: `${name}-${n}`,
  turnId: 't',
  runId: 'r',
  invocationId: 'i',
}));
const opened: Fact = {
  kind: 'invocation_opened',
  input: { kind: 'message', content: 'go', sourceMessages: [] },
};
await Promise.all(invocations.map((at) => log.append(EventWrite.plain(RuntimeEvent.create(at, opened)))));
writeSync(1, 'ready\n');
while (!existsSync(gate!)) await new Promise((resolve) => setTimeout(resolve, 5));
const until = performance.now() + Number(durationText);
const cpuBefore = process.cpuUsage();
timed = true;
let durable = 0;
await Promise.all(
  invocations.map(async (at) => {
    for (let n = 0; performance.now() < until; n += 1) {
      const fact: Fact = {
        kind: 'model_observed',
        stepId: 's1',
        observation: { kind: 'text_delta', text: `${n}` },
      };
      await log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
      durable += 1;
    }
  }),
);
const cpu = process.cpuUsage(cpuBefore);
writeSync(
  1,
  `count ${durable}\nstats ${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, ...lock })}\n`,
);
await log.close();
