// One submitter: a separate process that runs a turn with an idempotency key over a
// shared log (a SQLite file, or a PostgreSQL URL) and prints what it got back as one
// JSON line. `ttl` is its lease's time-to-live in milliseconds: a short one lets a
// retry recover this process's run soon after it is killed.
import { writeSync } from 'node:fs';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, type LogTarget } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { Engine, RunError, type RunInput } from '../../src/index.ts';
import { configuration, echoCatalog } from './agent-loop.ts';

const [target, baseUrl, suffix, key, message, ttl] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const say = (value: unknown) => writeSync(1, `${JSON.stringify(value)}\n`);

const log = await EventLog.open(JSON.parse(target) as LogTarget);
const engine = new Engine({
  log,
  models: new ModelExecutor({ timeoutMs: 30_000, retry: { maxAttempts: 1 } }),
  code: new CodeExecutor(),
  options: { lease: { ttlMs: Number(ttl) }, submissionPollMs: 20 },
});
const input: RunInput = {
  invocation: {
    sessionId: 'shared',
    turnId: `turn-${suffix}`,
    runId: `run-${suffix}`,
    invocationId: `invocation-${suffix}`,
  },
  provider: { kind: 'openai_chat_completions', baseUrl, model: 'test', auth: { apiKey: 'k' } },
  configuration: configuration(),
  work: {
    kind: 'message',
    message,
    tools: echoCatalog({ names: () => ['echo'], invoke: async (_name, value) => value }),
  },
};
try {
  const running = await engine.start(input, { idempotencyKey: key });
  say({ started: running.invocation.invocationId, resubmitted: running.resubmitted });
  const outcome = await running.wait();
  say({ outcome });
} catch (error) {
  say({ error: RunError.isInstance(error) ? error.code : String(error) });
}
await engine.close();
await log.close();
