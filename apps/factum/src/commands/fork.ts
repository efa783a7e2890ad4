import type { CAC } from 'cac';
import { forkText } from '../terminal/render-timeline.js';
import { shownText } from '../terminal/terminal-text.js';
import type { CliContext } from './cli-context.js';
import { ForkOutputSchema } from './json-output-schemas.js';
import { printJson } from './print-json.js';
import { type RunOptions, runMessage, withTurnOptions } from './run.js';

type ForkOptions = RunOptions & { readonly at?: string; readonly json?: boolean };

/**
 * `factum fork <session> [--at <invocation|step>] "<message>"`: a new session whose
 * history is the source's prefix up to the boundary (referenced, never copied), then the
 * message as its first turn, run as `factum run` runs one.
 */
export function registerFork(cli: CAC, context: CliContext): void {
  withTurnOptions(
    cli
      .command(
        'fork <session> <message>',
        'Fork a session at an invocation’s end or before a step, and run a message in the new session',
      )
      .option(
        '--at <invocation|step>',
        'where to fork: an invocation id (its end) or a step id `<invocation>/<n>` (right before that step); default: the last invocation that ended',
      )
      .option('--json', 'print the new session as one JSON line (ForkOutputSchema) before its turn runs'),
  )
    .example('factum fork session-1a2b "try it with tabs instead"')
    .example('factum fork session-1a2b --at invocation-3c4d/2 "use the other file" --script replies.json')
    .action((session: string, message: string, options: ForkOptions) =>
      runMessage(String(message), { ...options, session: undefined }, context, async (runtime) => {
        const at = options.at === undefined ? {} : { at: String(options.at) };
        const fork = await runtime.engine.fork({ session: String(session), ...at });
        const printed = {
          session: fork.sessionId,
          source: fork.source,
          ...(fork.step ? { step: fork.step } : {}),
        };
        if (options.json) printJson(context.terminal, ForkOutputSchema, printed);
        else {
          const fact = {
            kind: 'session_forked' as const,
            source: fork.source,
            ...(fork.step ? { step: fork.step } : {}),
          };
          context.terminal.line(
            `${context.terminal.colors.bold(shownText(fork.sessionId))} ${shownText(forkText(fact))}`,
          );
        }
        return fork.sessionId;
      }),
    );
}
