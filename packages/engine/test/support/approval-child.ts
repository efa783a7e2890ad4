// A separate process working on a shared log (a SQLite file or PostgreSQL), as a person's
// command or another host would. Commands:
// - `decide <target> <operation> <approve|deny> [note] [digest]`: prints the decision as JSON, or
//   `refused <code>`;
// - `continue <target> <baseUrl> <ledger>`: continues the session's parked run, prints its outcome;
// - `continue-alone <target> <ledger>`: the same with a model of its own that answers `done`
//   (for a parent that waits for this process synchronously and so cannot answer it);
// - `crash <target> <baseUrl> <ledger>`: runs a turn whose effect SIGKILLs the process mid-effect.
// Effects append `<pid> <input>` to the ledger and fsync it before returning.
import { writeSync } from 'node:fs';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, type LogTarget } from '@factum/event-log';
import { ModelExecutor, type ProviderConfig } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { Engine, RunError } from '../../src/index.ts';
import { done } from './agent-loop.ts';
import { approvalCatalog, approvalInput, effectInto } from './approvals.ts';

const [command, targetText, ...rest] = process.argv.slice(2) as [string, string, ...string[]];
const say = (line: string) => writeSync(1, `${line}\n`);
const target = JSON.parse(targetText) as LogTarget;

const log = await EventLog.open(target);
const engine = new Engine({
  log,
  models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
  code: new CodeExecutor(),
  options: { recoverOnStart: false, lease: { hostId: `child-${command}` } },
});
try {
  if (command === 'decide') {
    const [operationId, decision, note, digest] = rest as [string, 'approve' | 'deny', string?, string?];
    const decided = await engine.decide(operationId, {
      decision,
      by: `process-${process.pid}`,
      ...(note ? { note } : {}),
      ...(digest ? { inputDigest: digest } : {}),
    });
    say(JSON.stringify(decided));
  } else if (command === 'continue-alone') {
    const [ledger] = rest as [string];
    await using model = await startScriptedProvider();
    model.script(done);
    const tools = approvalCatalog(effectInto(ledger));
    const parked = await engine.parkedRun('session');
    if (parked === undefined) throw new Error('no parked run');
    const provider = model.config({ model: 'test', auth: { apiKey: 'k' } });
    const outcome = await engine.run(
      approvalInput(provider, 'alone', tools, { kind: 'continuation', source: parked.source, tools }),
    );
    say(JSON.stringify(outcome.outcome));
  } else {
    const [baseUrl, ledger] = rest as [string, string];
    const provider: ProviderConfig = {
      kind: 'openai_chat_completions',
      baseUrl,
      model: 'test',
      auth: { apiKey: 'k' },
    };
    const tools = approvalCatalog(effectInto(ledger, command === 'crash'));
    if (command === 'continue') {
      const parked = await engine.parkedRun('session');
      if (parked === undefined) throw new Error('no parked run');
      const outcome = await engine.run(
        approvalInput(provider, 'continued', tools, { kind: 'continuation', source: parked.source, tools }),
      );
      say(JSON.stringify(outcome.outcome));
    } else if (command === 'crash') {
      await engine.run(approvalInput(provider, 'crash', tools));
      say('survived');
    }
  }
} catch (error) {
  say(RunError.isInstance(error) ? `refused ${error.code}` : `error ${String(error)}`);
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause !== undefined) process.stderr.write(`cause: ${String(cause.code)} ${String(cause.message)}\n`);
}
await engine.close();
await log.close();
