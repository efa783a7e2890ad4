import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Invocation } from '@factum/agent-facts';
import type { RunInput } from '@factum/engine';
import { startScriptedProvider } from '@factum/model/testing';
import { builtinCatalog } from '../builtin-tools/builtin-catalog.js';
import { Workspace } from '../builtin-tools/workspace.js';
import type { CliContext } from '../commands/cli-context.js';
import { CliError } from '../commands/cli-error.js';
import { describeOutcome, runLive } from '../commands/live-run.js';
import { FactumRuntime } from '../factum-runtime.js';
import { newInvocation } from '../new-invocation.js';
import { demoHostId } from './crash-child.js';
import { demoInput, demoWorkspacePath } from './demo-input.js';
import { recoverCrash, showCrashAftermath } from './demo-recovery.js';
import { afterTurn, codeTurn, directTurn, MESSAGES } from './demo-script.js';
import { Narrator } from './narrator.js';

/** How long the crash child may take before the demo gives up on it. */
const CHILD_TIMEOUT_MS = 30_000;

type Turn = { readonly message: string; readonly codeMode: boolean };

/**
 * `factum demo`: the whole promise of Factum in a few seconds, offline. A Direct mode
 * turn, a Code mode turn, a child process killed in the middle of a tool, and the
 * recovery that follows — each step read back from the log, on a fresh session in
 * the data directory (an existing one is fine).
 */
export async function runDemo(options: {
  readonly context: CliContext;
  readonly dataDir: string;
}): Promise<number> {
  const { context, dataDir } = options;
  const { terminal } = context;
  const c = terminal.colors;
  const narrator = new Narrator(terminal);
  const started = performance.now();
  const sessionId = newInvocation().sessionId;
  const workspaceDir = demoWorkspacePath(dataDir, sessionId);
  await mkdir(workspaceDir, { recursive: true });
  const workspace = await Workspace.open(workspaceDir);
  await using provider = await startScriptedProvider({
    replies: [...directTurn(), ...codeTurn(), ...afterTurn()],
  });
  const shown = (path: string) => {
    const rel = relative(context.cwd, path);
    return rel.startsWith('..') ? path : rel || '.';
  };

  terminal.line(`${c.bold('Factum demo')} ${c.dim('— a durable agent run, told from its log')}`);
  narrator.field('log', shown(join(dataDir, 'events.sqlite')));
  narrator.field('session', sessionId);
  narrator.field('workspace', shown(workspace.root));
  narrator.field('model', `a scripted model at ${provider.baseUrl} ${c.dim('(loopback, offline)')}`);

  const turn = async (runtime: FactumRuntime, { message, codeMode }: Turn): Promise<void> => {
    narrator.user(message);
    const tools = builtinCatalog({ workspace });
    const toolMode = codeMode ? 'code_mode' : 'direct';
    const input: RunInput = demoInput({ provider, sessionId, workspace, toolMode, message, tools });
    const result = await runLive({
      context,
      runtime,
      input,
      indent: 4,
      textLabel: c.bold(c.cyan('agent ›')),
    });
    if (result.outcome.kind !== 'completed') {
      throw new CliError('demo_failed', `a demo turn ended ${describeOutcome(result.outcome)}`);
    }
    await summarise(runtime, input.invocation, result.steps, narrator);
  };

  {
    await using runtime = await FactumRuntime.open({ target: { dataDir } });
    narrator.chapter('A turn in Direct mode');
    narrator.say('The model calls each tool itself. Every call is recorded twice: tool_dispatched (T1)');
    narrator.say('and tool_settled (T2). A write waits for its T1 to be durable before it starts; a read,');
    narrator.say('which changes nothing, commits both in one transaction once it is done.');
    await turn(runtime, { message: MESSAGES.direct, codeMode: false });

    narrator.chapter('A turn in Code mode');
    narrator.say('The model gets one tool, exec, that runs a JavaScript cell in a sandbox. Each');
    narrator.say('tools.* call inside the cell is a recorded call of its own, with its own T1 and T2.');
    await turn(runtime, { message: MESSAGES.code, codeMode: true });
  }

  narrator.chapter('A crash in the middle of a tool');
  narrator.say('A child process takes the next turn. Its write_file effect writes plan.md, then the');
  narrator.say('process is killed with SIGKILL: T1 is in the log, T2 never will be.');
  narrator.user(MESSAGES.crash);
  const death = await runCrashChild(context, dataDir, sessionId);
  narrator.point(`${c.red('✖')} the child process died: ${death}`);

  // The same host, restarted: its dead epoch's run is recoverable at once.
  const lease = { hostId: demoHostId(sessionId) };
  await using runtime = await FactumRuntime.open({ target: { dataDir }, engine: { lease } });
  narrator.chapter('The log, reopened');
  narrator.say('A new process opens the same log and asks what was left open.');
  const crashed = await showCrashAftermath({ runtime, sessionId, narrator, terminal });

  narrator.chapter('Recovery');
  await recoverCrash({ runtime, crashed, workspace, narrator, terminal });

  narrator.chapter('The session goes on');
  narrator.say(
    'With nothing uncertain left, the session admits new turns; the model sees the reconciled result.',
  );
  await turn(runtime, { message: MESSAGES.after, codeMode: false });

  narrator.chapter('The log vouches for itself');
  narrator.say('Every fact is chained into a SHA-256 digest, per log and per session. Recomputed from');
  narrator.say('the stored bytes, the chains match; the head, kept elsewhere, later shows the log was');
  narrator.say('neither cut short nor rewritten (factum verify --anchor).');
  const chain = await runtime.log.verifyChain();
  if (!chain.ok)
    throw new CliError('demo_failed', `the log does not verify at ${chain.brokenAt}: ${chain.reason}`);
  narrator.point(`${c.green('✔')} ${chain.events} events check out: every row parses, both chains match`);
  narrator.field('head', `${chain.head!.sequence}:${chain.head!.digest}`);

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const dirFlag = dataDir === join(context.cwd, '.factum') ? '' : ` --dir ${shown(dataDir)}`;
  terminal.line();
  terminal.line(
    `${c.green(c.bold('Done'))} in ${seconds} s. Everything above is in the log; look again with:`,
  );
  narrator.point(`factum log${dirFlag}                ${c.dim('sessions and invocations')}`);
  narrator.point(`factum show ${crashed.invocationId}${dirFlag}  ${c.dim('the crashed turn, fact by fact')}`);
  narrator.point(`factum recover${dirFlag}            ${c.dim('nothing is left open')}`);
  narrator.point(`factum verify${dirFlag}             ${c.dim('every digest, recomputed')}`);
  return 0;
}

async function summarise(runtime: FactumRuntime, invocation: Invocation, steps: number, narrator: Narrator) {
  const events = await runtime.log.invocationEvents(invocation, { maxEvents: 10_000, maxBytes: 64 << 20 });
  const count = (kind: string) => events.filter(({ event }) => event.fact.kind === kind).length;
  narrator.field(
    'recorded',
    `${events.length} facts: ${steps} model steps, ${count('tool_dispatched')} tool_dispatched, ${count('tool_settled')} tool_settled, invocation_ended completed`,
  );
}

/** Runs this CLI again as `demo --crash-child` and says how it died. */
async function runCrashChild(context: CliContext, dataDir: string, sessionId: string): Promise<string> {
  const child = spawn(
    context.self.execPath,
    [...context.self.args, 'demo', '--crash-child', sessionId, '--dir', dataDir],
    { cwd: context.cwd, env: context.env, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, CHILD_TIMEOUT_MS);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    });
    if (timedOut)
      throw new CliError('demo_failed', `the crash child did not crash within ${CHILD_TIMEOUT_MS} ms`);
    if (signal !== 'SIGKILL') {
      throw new CliError(
        'demo_failed',
        `the crash child exited with ${signal ?? `code ${code}`} instead of SIGKILL`,
      );
    }
    return `pid ${child.pid} killed by ${signal}`;
  } finally {
    clearTimeout(timer);
  }
}
