import { join } from 'node:path';
import type { EventLog } from '@factum/event-log';
import type { FactumRuntime, FactumRuntimeOptions } from '../factum-runtime.js';

/**
 * `FactumRuntime.open`, loading the runtime (the engine, the log, the model client)
 * only when a command opens one: `factum --help`, a usage error, or a command that needs
 * none of it starts without them.
 */
export async function openRuntime(options: FactumRuntimeOptions): Promise<FactumRuntime> {
  const { FactumRuntime } = await import('../factum-runtime.js');
  return FactumRuntime.open(options);
}

/**
 * The log of a data directory alone, for the commands that only read it (`log`,
 * `show`): the engine, the model client and the code runtime are never loaded. The
 * directory is prepared as `FactumRuntime.open` prepares it.
 */
export async function openLogOf(dataDir: string): Promise<EventLog> {
  const [{ EventLog }, { LOG_FILE, prepareDataDirectory }] = await Promise.all([
    import('@factum/event-log'),
    import('../data-directory.js'),
  ]);
  prepareDataDirectory(dataDir);
  return EventLog.open(join(dataDir, LOG_FILE));
}
