import { FactumError } from '@factum/agent-facts';
import type { Terminal } from '../terminal/terminal.js';
import { shownText } from '../terminal/terminal-text.js';
import { CliError } from './cli-error.js';

/** What to try next, for errors whose fix is another command. */
const hints: Readonly<Record<string, string>> = {
  uncertain_operations: 'see `factum recover` to close them',
  busy: 'wait for the other run in this session to finish',
  provider_settings: 'see `factum run --help`',
  unknown_source: 'list runs with `factum log`',
  approval_pending: 'decide every call first: `factum approvals`',
  approval_unknown: 'list calls waiting for a person with `factum approvals`',
  approval_decided_twice: 'see `factum approvals`',
  not_uncertain: 'list uncertain operations with `factum recover`',
  source_live: 'fork at an invocation that has ended: `factum log --session <id>`',
  invalid_boundary: 'name an invocation or a step that `factum show` lists',
  unknown_session: 'list sessions with `factum log`',
  session_exists: 'a fork starts a new session',
};

/**
 * Prints an error as one line (no stack unless `FACTUM_DEBUG` is set) and returns the
 * exit code: 2 for usage errors and a shell that cannot be sandboxed, 1 for the rest. Messages come from typed errors that
 * never carry secrets; anything else is shown by its message alone.
 */
export function printError(terminal: Terminal, error: unknown, env: NodeJS.ProcessEnv): number {
  const c = terminal.colors;
  terminal.endLine();
  const usage =
    (CliError.isInstance(error) && error.code === 'usage') ||
    (error instanceof Error && error.name === 'CACError');
  // Messages quote paths, ids and names someone else chose: shown as text, on one line.
  const message = shownText(error instanceof Error ? error.message : String(error));
  const code = FactumError.isInstance(error) ? error.code : undefined;
  const hint = usage ? 'see `factum --help`' : code === undefined ? undefined : hints[code];
  terminal.error(`${c.red('error:')} ${message}${hint ? c.dim(` (${hint})`) : ''}`);
  if (env.FACTUM_DEBUG && error instanceof Error && error.stack) terminal.error(c.dim(error.stack));
  return usage || code === 'no_sandbox' ? 2 : 1;
}
