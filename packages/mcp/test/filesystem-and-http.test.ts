import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ModelToolCall, ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { McpError, McpToolSource } from '../src/index.ts';
import {
  factsOf,
  invocation,
  runOver,
  seed,
  temporaryDirectory,
  WatchingSink,
  wide,
} from './support/log-fixtures.ts';
import { everythingBin, filesystem, freePort } from './support/servers.ts';

const code = new CodeExecutor();

async function runCalls(log: EventLog, source: McpToolSource, calls: ModelToolCall[]) {
  await seed(log, invocation, calls);
  const run = runOver(log, source, code);
  const step = (await run.capture('.')).intoStep('step');
  const results: unknown[] = [];
  for (const call of calls) results.push((await step.invoke(call)).json());
  await run.shutdown();
  return results;
}

describe('server-filesystem over stdio', () => {
  it('writes a real file in the allowed directory through T1 and T2, with recovery from its annotations', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    // write_file states destructiveHint: this test lets it run without a person.
    await using source = await McpToolSource.connect({
      ...filesystem(dir.path),
      approval: { write_file: 'never' },
    });
    const recovery = Object.fromEntries(
      source.tools.map((tool) => [tool.name, [tool.recovery, tool.hints.destructive]]),
    );
    expect(recovery).toMatchObject({
      read_text_file: ['read_only', false],
      write_file: ['idempotent', true],
      edit_file: ['never_auto_retry', true],
      move_file: ['never_auto_retry', true],
    });
    const file = join(dir.path, 'note.txt');
    const results = await runCalls(log, source, [
      { id: 'w', name: 'write_file', input: { path: file, content: 'written through MCP' } },
      { id: 'r', name: 'read_text_file', input: { path: file } },
    ]);
    expect(readFileSync(file, 'utf8')).toBe('written through MCP');
    expect(JSON.stringify(results[1])).toContain('written through MCP');
    expect((await factsOf(log, 'step:w')).map((fact) => fact.kind)).toEqual([
      'tool_dispatched',
      'tool_settled',
    ]);
    // The log says which server the tool came from.
    expect((await factsOf(log, 'step:w'))[0]).toMatchObject({
      source: { kind: 'mcp', server: 'filesystem' },
    });
  }, 60_000);

  it('a path outside the allowed directory is the server refusing: settled as failed, nothing written', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect({
      ...filesystem(join(dir.path)),
      approval: { write_file: 'never' },
    });
    await seed(log, invocation, [
      { id: 'w', name: 'write_file', input: { path: '/etc/factum-escape', content: 'x' } },
    ]);
    const run = runOver(log, source, code);
    const step = (await run.capture('.')).intoStep('step');
    await expect(
      step.invoke({ id: 'w', name: 'write_file', input: { path: '/etc/factum-escape', content: 'x' } }),
    ).rejects.toMatchObject({ code: 'failed' });
    await run.shutdown();
    expect((await factsOf(log, 'step:w')).at(-1)).toMatchObject({
      kind: 'tool_settled',
      outcome: { kind: 'failed' },
    });
  }, 60_000);
});

/** server-everything as a Streamable HTTP server on a free loopback port. */
async function startHttpEverything(): Promise<{ server: ChildProcess; port: number }> {
  const port = await freePort();
  const server: ChildProcess = spawn(process.execPath, [everythingBin, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    server.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
    server.on('exit', () => reject(new Error('the HTTP server exited')));
  });
  return { server, port };
}

describe('server-everything over Streamable HTTP', () => {
  it('lists and calls tools, with progress, over HTTP', async () => {
    using dir = temporaryDirectory();
    const { server, port } = await startHttpEverything();
    try {
      await using log = await EventLog.open(dir.file);
      await using source = await McpToolSource.connect({
        kind: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { authorization: 'Bearer not-a-real-secret' },
      });
      expect(source.label).toBe(`127.0.0.1:${port}/mcp`);
      const results = await runCalls(log, source, [
        { id: 'echo', name: 'echo', input: { message: 'over http' } },
        { id: 'long', name: 'trigger-long-running-operation', input: { duration: 0.2, steps: 2 } },
      ]);
      expect(results[0]).toEqual({ content: [{ type: 'text', text: 'Echo: over http' }] });
      const notes = (await factsOf(log, 'step:long')).filter((fact) => fact.kind === 'tool_notified');
      expect(notes).toHaveLength(2);
      const stored = [dir.file, `${dir.file}-wal`]
        .filter((path) => existsSync(path))
        .map((path) => readFileSync(path).toString('latin1'))
        .join('');
      expect(stored).toContain('over http');
      expect(stored).not.toContain('not-a-real-secret');
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);

  it('a server that dies mid-call ends the call at once as outcome_unknown, left uncertain (the SDK reports it only through onerror)', async () => {
    using dir = temporaryDirectory();
    const { server, port } = await startHttpEverything();
    try {
      await using log = await EventLog.open(dir.file);
      await using source = await McpToolSource.connect({
        kind: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        recovery: { 'trigger-long-running-operation': 'never_auto_retry' },
      });
      const call = { id: 'long', name: 'trigger-long-running-operation', input: { duration: 30, steps: 30 } };
      await seed(log, invocation, [call]);
      let killed = false;
      const sink = new WatchingSink(log, (fact) => {
        if (fact.kind === 'tool_notified' && !killed) {
          killed = true;
          server.kill('SIGKILL');
        }
      });
      const run = runOver(sink, source, code);
      const error = await (await run.capture('.'))
        .intoStep('step')
        .invoke(call)
        .catch((e: unknown) => e);
      await run.shutdown();
      expect(killed).toBe(true);
      // Without watching onerror this waited for the 10-minute idle timeout (the test's 60 s first).
      expect(ToolError.isInstance(error) && error.code).toBe('outcome_unknown');
      expect((error as Error).message).toMatch(/connection to the server broke mid-call/);
      expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:long']);
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);

  it('callTimeoutMs in a server configuration bounds a call that goes silent', async () => {
    using dir = temporaryDirectory();
    const { server, port } = await startHttpEverything();
    try {
      await using log = await EventLog.open(dir.file);
      await using source = await McpToolSource.connect({
        kind: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        callTimeoutMs: 300,
        recovery: { 'trigger-long-running-operation': 'never_auto_retry' },
      });
      // One step of 20 s: no progress before the end.
      const call = { id: 'quiet', name: 'trigger-long-running-operation', input: { duration: 20, steps: 1 } };
      await seed(log, invocation, [call]);
      const run = runOver(log, source, code);
      const error = await (await run.capture('.'))
        .intoStep('step')
        .invoke(call)
        .catch((e: unknown) => e);
      await run.shutdown();
      expect(ToolError.isInstance(error) && error.code).toBe('outcome_unknown');
      expect((error as Error).message).toMatch(/neither answered nor reported progress for 300 ms/);
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);

  it('a server that is not there is a typed connect error that names it without its secrets', async () => {
    const port = await freePort();
    const error = await McpToolSource.connect({
      kind: 'http',
      url: `http://user:hunter22@127.0.0.1:${port}/mcp?token=sekrit-token`,
      headers: { authorization: 'Bearer sekrit-header' },
      name: 'absent',
    }).catch((e: unknown) => e);
    expect(McpError.isInstance(error) && error.code).toBe('connect_failed');
    expect(String((error as Error).message)).toMatch(/absent/);
    expect(String((error as Error).message)).not.toMatch(/hunter22|sekrit/);
  }, 60_000);
});
