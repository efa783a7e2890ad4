import type { CAC } from 'cac';
import { describeCall } from '../terminal/describe-call.js';
import { shownText } from '../terminal/terminal-text.js';
import { type CliContext, dataDirOf, type GlobalOptions, operatorName } from './cli-context.js';
import { CliError } from './cli-error.js';
import { indexInvocations } from './invocation-index.js';
import { openRuntime } from './open-runtime.js';

type ResolveOptions = GlobalOptions & {
  readonly succeeded?: boolean;
  readonly failed?: boolean;
  readonly notRun?: boolean;
  readonly result?: string;
  readonly note?: string;
};

const MAX_NOTE = 2048;
const MAX_RESULT = 64 * 1024;

/** The one outcome the flags name, or a usage error saying what to pass. */
function outcomeOf(options: ResolveOptions): 'succeeded' | 'failed' | 'not_run' {
  const named = [
    ...(options.succeeded ? (['succeeded'] as const) : []),
    ...(options.failed ? (['failed'] as const) : []),
    ...(options.notRun ? (['not_run'] as const) : []),
  ];
  if (named.length !== 1)
    throw new CliError('usage', 'say what happened with exactly one of --succeeded, --failed, --not-run');
  return named[0]!;
}

/**
 * `factum resolve <operation> --succeeded [--result <text>] | --failed | --not-run
 * --note <why>`: a person's word on an operation no tool can reconcile (dispatched,
 * never settled), recorded as `tool_reconciled` by the operator. It closes the
 * operation, so the session takes turns again, and the model reads the outcome.
 */
export function registerResolve(cli: CAC, context: CliContext): void {
  cli
    .command('resolve <operation>', 'Record what happened to an uncertain operation, decided by hand')
    .option('--succeeded', 'the effect happened')
    .option('--failed', 'the effect was attempted and failed')
    .option('--not-run', 'the effect did not happen')
    .option('--result <text>', 'with --succeeded: what it produced, as the model will read it')
    .option('--note <why>', 'how you know (required; recorded with your user name)')
    .example('factum resolve step-1:call-1 --not-run --note "no such file on the server"')
    .action(async (operation: string, options: ResolveOptions) => {
      const { terminal } = context;
      const c = terminal.colors;
      const outcome = outcomeOf(options);
      const note = options.note === undefined ? '' : String(options.note);
      if (note.trim() === '' || note.length > MAX_NOTE)
        throw new CliError('usage', `--note <why> is required: 1 to ${MAX_NOTE} characters on how you know`);
      const result = options.result === undefined ? undefined : String(options.result);
      if (result !== undefined && outcome !== 'succeeded')
        throw new CliError('usage', '--result goes with --succeeded only');
      if (result !== undefined && Buffer.byteLength(result) > MAX_RESULT)
        throw new CliError('usage', `--result is over ${MAX_RESULT} bytes`);
      await using runtime = await openRuntime({ target: { dataDir: dataDirOf(options, context) } });
      const operationId = String(operation);
      const owner = (await indexInvocations(runtime.log)).find((summary) => summary.open.has(operationId));
      const by = operatorName(context);
      await runtime.engine.resolve(operationId, {
        outcome,
        by,
        note,
        ...(result === undefined ? {} : { result }),
        ...(owner === undefined ? {} : { sessionId: owner.invocation.sessionId }),
      });
      const call = owner?.open.get(operationId);
      const what = call === undefined ? shownText(operationId) : describeCall(call.name, call.input);
      terminal.line(
        `${c.green('✔')} ${what} resolved as ${c.bold(outcome.replace('_', ' '))} ${c.dim(shownText(`· ${operationId} · by ${by}`))}`,
      );
      if (owner !== undefined) {
        const session = shownText(owner.invocation.sessionId);
        terminal.line(
          c.dim(`the model reads it in the next turn: factum run --session ${session} "<message>"`),
        );
      }
      return 0;
    });
}
