// A child process running a real engine turn that kills itself (SIGKILL) at a named
// point: inside a tool effect (of a writing or a read-only tool, or a Code mode cell's
// child), in the middle of a model stream, around the commit of a handoff, before the
// first dispatch of a step whose calls repeat a call id, or around the commit that
// carries a model step along with its first dispatch. Every effect appends to a ledger file and fsyncs it before returning,
// so the parent can compare what happened in the world with what the log says.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import type { ToolExecutor } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { Engine } from '../../src/index.ts';
import { configuration, echoCatalog, input, oneCall, repeatedCallId } from './agent-loop.ts';

const [file, named, ledger] = process.argv.slice(2) as [string, string, string];
// `<scenario>-durable`: the run's start waits for its opening to be durable (`durableStart`).
const durableStart = named.endsWith('-durable');
const scenario = named.replace(/-durable$/, '');
const die = () => process.kill(process.pid, 'SIGKILL');
let dieAtNextCommit: 'before' | 'after' | undefined;

const effect: ToolExecutor = {
  names: () => ['echo'],
  async invoke(_name, value) {
    const fd = openSync(ledger, 'a');
    writeSync(fd, `${JSON.stringify(value)}\n`);
    fsyncSync(fd);
    closeSync(fd);
    if (scenario === 'effect' || scenario === 'read-effect' || scenario === 'cell-effect') die();
    return value;
  },
};

const opened = await EventLog.open(file, {
  hooks: {
    beforeCommit: () => dieAtNextCommit === 'before' && die(),
    afterCommit: () => dieAtNextCommit === 'after' && die(),
  },
});
// `repeated-call-id`: the step's calls share an id; die as the first dispatch is about to
// be written, with `model_completed` durable (an engine with live model facts).
// `ride-before` / `ride-after`: die inside the transaction that carries the model step
// along with its first T1, or just after it is durable, before anyone is told.
// `cell-pair-before`: die inside the transaction that carries a Code mode cell's T1.
type Writes = Parameters<EventLog['commitTogether']>[0];
const dispatching: Record<string, (writes: Writes) => void> = {
  'repeated-call-id': die,
  'ride-before': () => {
    dieAtNextCommit = 'before';
  },
  'ride-after': () => {
    dieAtNextCommit = 'after';
  },
  'cell-pair-before': (writes) => {
    const cell = writes.some(
      ({ event: { fact } }) => fact.kind === 'tool_dispatched' && fact.call.origin.kind === 'code_cell',
    );
    if (cell) dieAtNextCommit = 'before';
  },
};
const atDispatch = dispatching[scenario];
const log =
  atDispatch === undefined
    ? opened
    : new Proxy(opened, {
        get(target, property) {
          const value = Reflect.get(target, property, target);
          if (property !== 'commitTogether') return typeof value === 'function' ? value.bind(target) : value;
          return (writes: Writes) => {
            if (writes.some((write) => write.event.fact.kind === 'tool_dispatched')) atDispatch(writes);
            return target.commitTogether(writes);
          };
        },
      });
const provider = await startScriptedProvider();
provider.script(
  scenario === 'stream'
    ? { text: ['one ', 'two ', 'three ', 'four'], chunkDelayMs: 5 }
    : scenario === 'repeated-call-id'
      ? repeatedCallId
      : scenario === 'cell-effect' || scenario === 'cell-pair-before'
        ? {
            toolCalls: [
              {
                id: 'call-1',
                name: 'exec',
                arguments: { code: "await tools.echo({ value: 42 }); text('x');" },
              },
            ],
            finishReason: 'tool_calls',
          }
        : oneCall('echo'),
  { text: 'done' },
);
// The test's engine registers the same host id after the crash, as a restarted host
// does: the crashed epoch's invocations are then recoverable at once.
const engine = new Engine({
  log,
  models: new ModelExecutor({ timeoutMs: 5_000 }),
  code: new CodeExecutor(),
  options: { lease: { hostId: 'crash-host' }, liveModelFacts: scenario === 'repeated-call-id' },
});
const base = input(provider, 'crash', effect);
// `read-effect`: the tool declares itself read-only, so its T1 rides with its T2.
// `cell-…`: Code mode; `cell-effect` dies in the cell's child call's effect.
const run =
  scenario === 'read-effect' && base.work.kind === 'message'
    ? { ...base, work: { ...base.work, tools: echoCatalog(effect, { readOnly: true }) } }
    : scenario.startsWith('cell-')
      ? { ...base, configuration: configuration('code_mode') }
      : base;
let observations = 0;
const running = await engine.start(run, {
  durableStart,
  observer: {
    onObservation: () => {
      observations += 1;
      if (scenario === 'stream' && observations === 2) die();
    },
  },
});
if (scenario.startsWith('handoff')) {
  const reservation = running.handoff.reserve({
    handoffId: 'h',
    hostEpoch: 'host',
    rootRunId: 'run-crash',
    successorRunId: 'run-successor',
    successorInvocationId: 'invocation-successor',
    claimId: 'claim',
  });
  const held = await reservation.ready();
  dieAtNextCommit = scenario === 'handoff-before' ? 'before' : 'after';
  await held.commit().wait();
}
await running.wait();
// Reaching here means the scenario did not kill the process: the parent reports it.
process.exit(3);
