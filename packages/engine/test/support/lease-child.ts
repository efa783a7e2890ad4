// One engine process holding a host lease on a shared log (a SQLite file or a
// PostgreSQL database), with its own scripted provider. Commands:
// - `turns SESSION N`: runs N turns (one echo effect each), sweeping between them;
// - `effect SESSION MODE`: runs a turn whose effect prints `effect` and then hangs
//   (MODE `hang`, for SIGKILL) or returns after a pause (MODE `pause`, for SIGSTOP);
//   then tries one more write and prints what became of it;
// - `survivor SESSION GATE`: runs one turn of its own, prints `live`, waits for the file
//   GATE, then admits a turn in SESSION as soon as the log lets it (a dead host's
//   session, once recovered).
import { closeSync, existsSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { EventWrite, RuntimeEvent, type ToolExecutor } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, type LogTarget } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { Engine, RunError, type RunInput } from '../../src/index.ts';
import { configuration, done, echoCatalog, oneCall } from './agent-loop.ts';

const [command, targetText, ledger, name, ttlText, session, extra] = process.argv.slice(2) as string[];
const target = JSON.parse(targetText!) as LogTarget;
const ttlMs = Number(ttlText);
const say = (line: string) => writeSync(1, `${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const effect: ToolExecutor = {
  names: () => ['echo'],
  async invoke(_name, value) {
    const fd = openSync(ledger!, 'a');
    writeSync(fd, `${name} ${JSON.stringify(value)}\n`);
    fsyncSync(fd);
    closeSync(fd);
    if (command === 'effect') {
      say('effect');
      if (extra === 'hang') await new Promise(() => undefined);
      await sleep(1500);
    }
    return value;
  },
};

const provider = await startScriptedProvider();
const log = await EventLog.open(target);
const engine = new Engine({
  log,
  models: new ModelExecutor({ timeoutMs: 20_000, retry: { maxAttempts: 1 } }),
  code: new CodeExecutor(),
  // Renewal (ttl/3) and the sweeper (ttl/4) at their default pace.
  options: { lease: { hostId: name!, ttlMs } },
});

function input(sessionId: string, suffix: string, allowPriorUnknown = false): RunInput {
  return {
    invocation: {
      sessionId,
      turnId: `turn-${suffix}`,
      runId: `run-${suffix}`,
      invocationId: `invocation-${suffix}`,
    },
    provider: provider.config({ model: 'test', auth: { apiKey: 'k' } }),
    configuration: configuration(),
    work: { kind: 'message', message: `question ${suffix}`, tools: echoCatalog(effect), allowPriorUnknown },
  };
}

/** The codes along an error's cause chain: where a refusal like `fenced` shows. */
function codes(error: unknown): string[] {
  const found: string[] = [];
  for (let at = error; at instanceof Error; at = at.cause) {
    const code = (at as { code?: unknown }).code;
    found.push(typeof code === 'string' ? code : at.name);
  }
  return found;
}

if (command === 'turns') {
  for (let index = 0; index < Number(extra); index += 1) {
    provider.script(oneCall('echo'), done);
    const outcome = await engine.run(input(session!, `${name}-${index}`));
    say(`turn ${index} ${outcome.outcome.kind}`);
    const swept = await engine.sweep();
    say(`swept ended=${swept.ended.length} live=${swept.live.length}`);
  }
} else if (command === 'effect') {
  provider.script(oneCall('echo'), done);
  const at = input(session!, name!).invocation;
  try {
    const outcome = await engine.run(input(session!, name!));
    say(`outcome ${JSON.stringify(outcome.outcome)}`);
  } catch (error) {
    say(`run ${codes(error).join(' ')}`);
  }
  const fact = { kind: 'tool_notified' as const, operationId: 'later', message: 'late' };
  await log.append(EventWrite.plain(RuntimeEvent.create(at, fact))).then(
    () => say('later accepted'),
    (error: unknown) => say(`later ${codes(error).join(' ')}`),
  );
} else if (command === 'survivor') {
  provider.script(oneCall('echo'), done);
  say(`own ${(await engine.run(input(`own-${name}`, `${name}-own`))).outcome.kind}`);
  say('live');
  while (!existsSync(extra!)) await sleep(20);
  // A refused admission asks the model nothing. But the other survivor may get in while
  // this one's first step is at the model: this one's first commit is then refused as
  // built on a moved session, and the run starts over, asking again. Replies to spare.
  provider.script(done, done, done, done, done, done);
  for (;;) {
    try {
      const outcome = await engine.run(input(session!, `${name}-after`, true));
      say(`admitted ${outcome.outcome.kind}`);
      break;
    } catch (error) {
      if (!(RunError.isInstance(error) && error.code === 'busy')) throw error;
      await sleep(50);
    }
  }
}
await engine.close();
await log.close();
await provider.close();
say('done');
