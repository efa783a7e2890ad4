import type { InvocationOutcome } from '@factum/agent-facts';
import type { RunInput, RunningInvocation, RunOutcome } from '@factum/engine';
import type { CommandProcesses } from '../builtin-tools/command-processes.js';
import type { FactumRuntime } from '../factum-runtime.js';
import { RunView } from '../terminal/run-view.js';
import { shownText } from '../terminal/terminal-text.js';
import type { CliContext } from './cli-context.js';

/** Exit code of a run that parked on approvals no one here could give (`factum approve` decides later). */
export const EXIT_AWAITING_APPROVAL = 4;
/** Exit code of a run cancelled by Ctrl-C, as shells expect (128 + SIGINT). */
export const EXIT_INTERRUPTED = 130;
/**
 * After a second Ctrl-C has killed the commands, how long the run may take to record that:
 * the exit comes as soon as it is recorded, so this bounds only a machine too loaded to do it.
 */
export const FORCED_EXIT_GRACE_MS = 10_000;

/**
 * A run shown live, and whether a person interrupted it (Ctrl-C): an interrupted run
 * exits 130 however it ended — a call it left uncertain makes it `failed
 * {outcome_unknown}`, and the exit code still says who stopped it.
 */
export type LiveRunOutcome = RunOutcome & { readonly interrupted?: true };

/** Options of a run shown live. */
export type LiveRunOptions = {
  readonly context: CliContext;
  readonly runtime: FactumRuntime;
  readonly input: RunInput;
  readonly indent?: number;
  readonly textLabel?: string;
  /** The server each MCP tool came from, shown on its lines. */
  readonly toolServers?: ReadonlyMap<string, string>;
  /** The shell's running commands: a second Ctrl-C kills their whole process trees. */
  readonly processes?: CommandProcesses;
  /** Start at most once under this key; a repeat shows the first run's answer. */
  readonly idempotencyKey?: string;
};

/**
 * Starts a run and shows it as it goes. The first Ctrl-C cancels the way the engine
 * promises — a dispatched effect finishes and is recorded, the rest is rejected, the
 * invocation ends cancelled — and this waits for that. A second Ctrl-C kills every
 * running command's process tree (SIGKILL) and exits as soon as the run has recorded
 * that, or after `FORCED_EXIT_GRACE_MS`; a third exits at once (what was dispatched
 * and not settled stays in the log as uncertain, for `factum recover`).
 */
export async function runLive(options: LiveRunOptions): Promise<LiveRunOutcome> {
  const { context, runtime, input } = options;
  const { terminal } = context;
  const c = terminal.colors;
  const view = new RunView({
    terminal,
    log: runtime.log,
    invocation: input.invocation,
    ...(options.indent === undefined ? {} : { indent: options.indent }),
    ...(options.textLabel === undefined ? {} : { textLabel: options.textLabel }),
    ...(options.toolServers === undefined ? {} : { toolServers: options.toolServers }),
  });
  const running = await runtime.engine.start(input, {
    observer: view.observer,
    ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
  });
  if (running.resubmitted) return replayedRun(context, running);
  view.start();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts > 2) process.exit(EXIT_INTERRUPTED);
    if (interrupts === 2) {
      const killed = options.processes?.killAll() ?? 0;
      view.lastWord(
        c.red(
          `second interrupt: ${killed > 0 ? 'commands killed; ' : ''}exiting now; run \`factum recover\` to see what was left open`,
        ),
      );
      if (killed === 0) process.exit(EXIT_INTERRUPTED);
      // The killed command settles as killed: let the log record it, but never wait long.
      setTimeout(() => process.exit(EXIT_INTERRUPTED), FORCED_EXIT_GRACE_MS).unref();
      return;
    }
    running.cancel();
    // Cancelling aborts the calls in flight: a tool that honours it stops (the shell gets
    // SIGTERM), one that cannot runs to its end; either way its outcome is recorded first.
    view.noteInFlight((inFlight) =>
      c.yellow(
        inFlight.length === 0
          ? 'cancelling: ending the run (press Ctrl-C again to exit at once)'
          : `cancelling: asking the call in flight to stop (${inFlight.join(', ')}) and waiting for its outcome to be recorded; press Ctrl-C again to exit at once`,
      ),
    );
  };
  context.signals.on('SIGINT', onInterrupt);
  try {
    const outcome = await running.wait();
    await view.finish();
    return interrupts > 0 ? { ...outcome, interrupted: true } : outcome;
  } finally {
    context.signals.off('SIGINT', onInterrupt);
  }
}

/** The exit code of a run: 130 when a person interrupted it, else its outcome's. */
export function exitCodeOfRun(run: LiveRunOutcome): number {
  return run.interrupted === true ? EXIT_INTERRUPTED : exitCodeOf(run.outcome);
}

/**
 * A repeated submission: nothing runs here. Says so, waits for the first run's end
 * (another process may still run it) and shows its answer, as the terminal may show it.
 */
async function replayedRun(context: CliContext, running: RunningInvocation): Promise<RunOutcome> {
  const { terminal } = context;
  const c = terminal.colors;
  terminal.line(
    c.dim(
      `this idempotency key already started invocation ${shownText(running.invocation.invocationId)}: nothing runs again; ${running.recorded === undefined ? 'waiting for its end' : 'its recorded answer'}:`,
    ),
  );
  const outcome = await running.wait();
  for (const part of outcome.answer.parts) {
    terminal.line(
      part.kind === 'refusal' ? c.yellow(`refused: ${shownText(part.text)}`) : shownText(part.text),
    );
  }
  return outcome;
}

/** The exit code an outcome maps to: 0 completed, 4 awaiting approval, 130 cancelled, 1 otherwise. */
export function exitCodeOf(outcome: InvocationOutcome): number {
  switch (outcome.kind) {
    case 'completed':
    case 'handoff_paused':
      return 0;
    case 'cancelled':
      return EXIT_INTERRUPTED;
    case 'approval_pending':
      return EXIT_AWAITING_APPROVAL;
    case 'failed':
      return 1;
    default:
      return outcome satisfies never;
  }
}

/** One line saying how an invocation ended, safe to print. */
export function describeOutcome(outcome: InvocationOutcome): string {
  switch (outcome.kind) {
    case 'completed':
      return 'completed';
    case 'failed':
      return shownText(`failed {${outcome.error.code}}: ${outcome.error.message}`);
    case 'cancelled':
      return shownText(`cancelled {${outcome.source}}`);
    case 'handoff_paused':
      return shownText(`paused for a handoff to run ${outcome.pause.intent.successorRunId}`);
    case 'approval_pending':
      return `awaiting approval of ${outcome.operations.length === 1 ? '1 call' : `${outcome.operations.length} calls`}`;
    default:
      return outcome satisfies never;
  }
}
