import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ApprovalRequested } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { McpToolSource } from '../src/index.ts';
import { factsOf, invocation, runOver, seed, temporaryDirectory } from './support/log-fixtures.ts';
import { filesystem } from './support/servers.ts';

const code = new CodeExecutor();

describe('approval from MCP annotations', () => {
  it('a tool stating destructiveHint needs approval for every call; the user overrides per tool', async () => {
    using dir = temporaryDirectory();
    await using source = await McpToolSource.connect(filesystem(dir.path));
    const approval = (from: McpToolSource) =>
      Object.fromEntries(
        from.registrations().map((tool) => [tool.definition.name, tool.approval ?? 'never']),
      );
    // write_file and edit_file say destructiveHint: true; create_directory says false; reads are read-only.
    expect(approval(source)).toMatchObject({
      write_file: 'always',
      edit_file: 'always',
      move_file: 'always',
      create_directory: 'never',
      read_text_file: 'never',
    });
    expect(source.tools.find((tool) => tool.name === 'write_file')?.approval).toBe('always');
    await using overridden = await McpToolSource.connect({
      ...filesystem(dir.path),
      approval: { write_file: 'never', create_directory: 'always' },
    });
    expect(approval(overridden)).toMatchObject({
      write_file: 'never',
      edit_file: 'always',
      create_directory: 'always',
    });
  }, 60_000);

  it('a destructive call parks: approval_requested with its exact input, and the server is never called', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    await using source = await McpToolSource.connect(filesystem(dir.path));
    const file = join(dir.path, 'note.txt');
    const call = { id: 'w', name: 'write_file', input: { path: file, content: 'needs a person' } };
    await seed(log, invocation, [call]);
    const run = runOver(log, source, code);
    const step = (await run.capture('.')).intoStep('step');
    const error = await step.invoke(call).catch((caught: unknown) => caught);
    expect(ApprovalRequested.isInstance(error)).toBe(true);
    await run.shutdown();
    expect(existsSync(file)).toBe(false);
    expect(await factsOf(log, 'step:w')).toMatchObject([
      { kind: 'approval_requested', call: { name: 'write_file', input: call.input } },
    ]);
  }, 60_000);
});
