import type { CAC } from 'cac';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';

type DemoOptions = GlobalOptions & { readonly crashChild?: string };

/** `factum demo`: the offline story of a durable run, a crash and its recovery. */
export function registerDemo(cli: CAC, context: CliContext): void {
  cli
    .command('demo', 'Show Factum at work, offline: two turns, a crash mid-tool, and recovery')
    // The demo's own child process; hidden from --help.
    .option('--crash-child <session>', 'internal: run the crashing turn of a demo session')
    .action(async (options: DemoOptions) => {
      const dataDir = dataDirOf(options, context);
      if (options.crashChild !== undefined) {
        const { runCrashChild } = await import('../demo/crash-child.js');
        return runCrashChild({ dataDir, sessionId: String(options.crashChild), terminal: context.terminal });
      }
      const { runDemo } = await import('../demo/demo-story.js');
      return runDemo({ context, dataDir });
    });
}
