import { join } from 'node:path';
import type { ToolMode } from '@factum/agent-facts';
import type { RunInput } from '@factum/engine';
import type { ScriptedProvider } from '@factum/model/testing';
import type { ToolCatalog } from '@factum/tools';
import type { Workspace } from '../builtin-tools/workspace.js';
import { newInvocation } from '../new-invocation.js';

/** Where a demo session's files live: inside the data directory, one folder per session. */
export function demoWorkspacePath(dataDir: string, sessionId: string): string {
  return join(dataDir, 'demo', sessionId);
}

/** A message run of the demo: a new turn in the demo's session, against the scripted provider. */
export function demoInput(options: {
  readonly provider: ScriptedProvider;
  readonly sessionId: string;
  readonly workspace: Workspace;
  readonly toolMode: ToolMode;
  readonly message: string;
  readonly tools: ToolCatalog;
}): RunInput {
  return {
    invocation: newInvocation(options.sessionId),
    // The scripted provider needs no key; the demo has nothing secret to keep out of the log.
    provider: options.provider.config({ model: 'scripted-demo', auth: { none: true } }),
    configuration: { cwd: options.workspace.root, toolMode: options.toolMode },
    work: { kind: 'message', message: options.message, tools: options.tools },
  };
}
