// One "host": a separate process running an engine over a shared PostgreSQL log.
// Commands: `handoff` runs a turn and commits a handoff (prints the pause); `resume`
// resumes it as the successor; `admit` tries to start a turn and reports whether the
// log admitted it, then waits to be killed; `crash` kills itself inside a tool effect.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import type { HandoffPause, ToolExecutor } from '@factum/agent-facts';
import { successorOf } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor, type ProviderConfig } from '@factum/model';
import { Engine, RunError, type RunInput } from '../../src/index.ts';
import { configuration, echoCatalog } from './agent-loop.ts';

const [command, url, baseUrl, ledger, extra] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
];
const say = (line: string) => writeSync(1, `${line}\n`);

const effect: ToolExecutor = {
  names: () => ['echo'],
  async invoke(_name, value) {
    const fd = openSync(ledger, 'a');
    writeSync(fd, `${process.pid} ${JSON.stringify(value)}\n`);
    fsyncSync(fd);
    closeSync(fd);
    if (command === 'crash') process.kill(process.pid, 'SIGKILL');
    return value;
  },
};

const provider: ProviderConfig = {
  kind: 'openai_chat_completions',
  baseUrl,
  model: 'test',
  auth: { apiKey: 'k' },
};
const log = await EventLog.open({ postgres: url });
// Several hosts share this log: none may end another's live invocations at start.
const engine = new Engine({
  log,
  models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
  code: new CodeExecutor(),
  options: { recoverOnStart: false },
});
const first = {
  sessionId: 'shared',
  turnId: 'turn-first',
  runId: 'run-first',
  invocationId: 'invocation-first',
};
const base = (invocation = first): RunInput => ({
  invocation,
  provider,
  configuration: configuration(),
  work: { kind: 'message', message: 'question first', tools: echoCatalog(effect) },
});

if (command === 'handoff' || command === 'crash') {
  const running = await engine.start(base());
  if (command === 'handoff') {
    const held = await running.handoff
      .reserve({
        handoffId: 'h',
        hostEpoch: `host-${process.pid}`,
        rootRunId: 'run-first',
        successorRunId: 'run-successor',
        successorInvocationId: 'invocation-successor',
        claimId: 'claim',
      })
      .ready();
    say(JSON.stringify(await held.commit().wait()));
  }
  await running.wait();
} else if (command === 'resume') {
  const pause = JSON.parse(extra!) as HandoffPause;
  const source = (await log.runSource('shared', 'run-first'))!.boundary;
  const input = base(successorOf(pause.intent, source.invocation));
  const outcome = await engine.run({
    ...input,
    work: { kind: 'handoff', source, pause, tools: input.work.tools },
  });
  say(JSON.stringify(outcome.outcome));
} else if (command === 'admit') {
  const invocation = {
    ...first,
    turnId: `turn-${extra}`,
    runId: `run-${extra}`,
    invocationId: `invocation-${extra}`,
  };
  try {
    // A durable start: the log's own constraint answers before start() resolves.
    await engine.start(base(invocation), { durableStart: true });
    say('admitted');
  } catch (error) {
    say(RunError.isInstance(error) ? error.code : `error ${String(error)}`);
    process.exit(0);
  }
  // Keep the invocation live (its model request is held) until the parent kills us.
  await new Promise(() => undefined);
}
await engine.drain();
await log.close();
