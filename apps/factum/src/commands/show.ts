import type { CAC } from 'cac';
import { FactumRuntime } from '../factum-runtime.js';
import { renderTimeline } from '../terminal/render-timeline.js';
import { shownText } from '../terminal/terminal-text.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { findInvocation, indexInvocations } from './invocation-index.js';

type ShowOptions = GlobalOptions & { readonly session?: string };

const bounds = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

/** `factum show <invocation-id>`: one invocation's facts as a readable timeline. */
export function registerShow(cli: CAC, context: CliContext): void {
  cli
    .command('show <invocation-id>', 'Show one invocation as a timeline: each T1 joined to its T2')
    .option('--session <id>', 'the session the invocation is in (faster on a large log)')
    .action(async (id: string, options: ShowOptions) => {
      const { terminal } = context;
      const c = terminal.colors;
      await using runtime = await FactumRuntime.open({ target: { dataDir: dataDirOf(options, context) } });
      const index = await indexInvocations(
        runtime.log,
        options.session === undefined ? {} : { sessionId: String(options.session) },
      );
      const { invocation } = findInvocation(index, String(id));
      const events = await runtime.log.invocationEvents(invocation, bounds);
      terminal.line(
        `${c.bold(shownText(invocation.invocationId))} ${c.dim(shownText(`session ${invocation.sessionId} · turn ${invocation.turnId} · run ${invocation.runId}`))}`,
      );
      const lines = await renderTimeline(events, {
        colors: c,
        readResult: async (eventId) =>
          (await runtime.log.resolveToolResult(invocation.sessionId, eventId)).json(),
      });
      for (const line of lines) terminal.line(line);
      return 0;
    });
}
