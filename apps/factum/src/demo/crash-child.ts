import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler, type ToolRegistration } from '@factum/tools';
import { builtinTools } from '../builtin-tools/builtin-catalog.js';
import { Workspace } from '../builtin-tools/workspace.js';
import { CliError } from '../commands/cli-error.js';
import { FactumRuntime } from '../factum-runtime.js';
import type { Terminal } from '../terminal/terminal.js';
import { demoInput, demoWorkspacePath } from './demo-input.js';
import { crashTurn, MESSAGES } from './demo-script.js';

/**
 * write_file as it is, except that once its effect has happened the process kills
 * itself with SIGKILL: after T1 (the effect only starts once `tool_dispatched` is
 * durable) and before T2 — the one window where only recovery can say what happened.
 */
function crashingAfterEffect(registration: ToolRegistration, terminal: Terminal): ToolRegistration {
  const effect = registration.handler.executor;
  return {
    ...registration,
    handler: ToolHandler.immediate({
      names: () => effect.names(),
      invoke: async (name, input, context) => {
        await effect.invoke(name, input, context);
        terminal.line(
          `    ${terminal.colors.red('child ›')} the file is written; killing this process (SIGKILL) before the result is recorded`,
        );
        process.kill(process.pid, 'SIGKILL');
        return new Promise<never>(() => {});
      },
    }),
  };
}

/**
 * The host id of the demo's crashing child. The demo reopens the log under the same id,
 * as a restarted host does: the dead epoch's runs are then recoverable at once.
 */
export function demoHostId(sessionId: string): string {
  return `demo-${sessionId.replace(/[^A-Za-z0-9._:@-]/g, '-')}`.slice(0, 128);
}

/**
 * The demo's child process: starts a turn in the demo session whose write_file effect
 * kills the process. It never returns normally; the parent watches it die.
 */
export async function runCrashChild(options: {
  readonly dataDir: string;
  readonly sessionId: string;
  readonly terminal: Terminal;
}): Promise<never> {
  const { dataDir, sessionId, terminal } = options;
  const workspace = await Workspace.open(demoWorkspacePath(dataDir, sessionId));
  const provider = await startScriptedProvider({ replies: crashTurn() });
  // A short lease: the host that dies here is seen as gone a second later by any process.
  const lease = { hostId: demoHostId(sessionId), ttlMs: 1000 };
  const runtime = await FactumRuntime.open({ target: { dataDir }, engine: { lease } });
  const tools = new ToolCatalog(
    builtinTools({ workspace }).map((registration) =>
      registration.definition.name === 'write_file'
        ? crashingAfterEffect(registration, terminal)
        : registration,
    ),
  );
  const input = demoInput({
    provider,
    sessionId,
    workspace,
    toolMode: 'direct',
    message: MESSAGES.crash,
    tools,
  });
  terminal.line(
    `    ${terminal.colors.red('child ›')} pid ${process.pid} started turn ${input.invocation.turnId}`,
  );
  await runtime.engine.run(input);
  await provider.close();
  throw new CliError('demo_failed', 'the crash child finished its turn instead of crashing');
}
