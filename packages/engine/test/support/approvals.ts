import { spawn } from 'node:child_process';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ToolExecutor } from '@factum/agent-facts';
import type { LogTarget } from '@factum/event-log';
import type { ProviderConfig } from '@factum/model';
import type { ScriptedReply } from '@factum/model/testing';
import { type ToolApproval, ToolCatalog, ToolHandler } from '@factum/tools';
import type { RunInput, RunWork } from '../../src/index.ts';
import { configuration } from './agent-loop.ts';
import { nodeArgs } from './child-node.ts';

/**
 * Two tools: `send` needs a person's approval for every call, `echo` for none (unless a
 * run demands it), both nestable so Code mode cells may call them.
 */
export function approvalCatalog(effect: ToolExecutor, send: ToolApproval = 'always'): ToolCatalog {
  const tool = (name: string, approval?: ToolApproval) => ({
    definition: { name, description: name, inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate(effect),
    nesting: 'nestable' as const,
    semantics: 'parallel' as const,
    ...(approval === undefined ? {} : { approval }),
  });
  return new ToolCatalog([tool('echo'), tool('send', send)]);
}

/** A run in session `session`; by default a message run over `tools`. */
export function approvalInput(
  provider: ProviderConfig,
  suffix: string,
  tools: ToolCatalog,
  work: RunWork = { kind: 'message', message: `question ${suffix}`, tools },
): RunInput {
  return {
    invocation: {
      sessionId: 'session',
      turnId: `turn-${suffix}`,
      runId: `run-${suffix}`,
      invocationId: `invocation-${suffix}`,
    },
    provider,
    configuration: configuration(),
    work,
  };
}

/** One step's calls: `[name, input]` pairs, ids `call-1`, `call-2`, … unless given. */
export function calls(...list: [name: string, input: unknown, id?: string][]): ScriptedReply {
  return {
    toolCalls: list.map(([name, value, id], index) => ({
      id: id ?? `call-${index + 1}`,
      name,
      arguments: JSON.stringify(value),
    })),
    finishReason: 'tool_calls',
    usage: { inputTokens: 4, outputTokens: 3 },
  };
}

export const approvalChild = fileURLToPath(new URL('./approval-child.ts', import.meta.url));

/** Runs the approval child to its end: its printed lines and how it ended. */
export function runChild(
  target: LogTarget,
  args: string[],
): Promise<{ lines: string[]; signal: string | null; code: number | null }> {
  return new Promise((resolve, reject) => {
    const process = spawn(
      'node',
      nodeArgs(approvalChild, [args[0]!, JSON.stringify(target), ...args.slice(1)]),
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let text = '';
    process.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    process.on('error', reject);
    process.on('close', (code, signal) => resolve({ lines: text.split('\n').filter(Boolean), signal, code }));
  });
}

/** The effects a ledger recorded: `{ pid, input }` per line. */
export function effects(path: string): { pid: number; input: unknown }[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const space = line.indexOf(' ');
      return { pid: Number(line.slice(0, space)), input: JSON.parse(line.slice(space + 1)) };
    });
}

/** An effect that appends `<pid> <input>` to `ledger` and fsyncs it; `crash` then SIGKILLs. */
export function effectInto(ledger: string, crash = false): ToolExecutor {
  return {
    names: () => ['echo', 'send'],
    async invoke(_name, value) {
      const fd = openSync(ledger, 'a');
      writeSync(fd, `${process.pid} ${JSON.stringify(value)}\n`);
      fsyncSync(fd);
      closeSync(fd);
      if (crash) process.kill(process.pid, 'SIGKILL');
      return value;
    },
  };
}
