import { type ModelToolCall, ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ToolCatalog } from '@factum/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpToolSource } from '../src/index.ts';
import { factsOf, invocation, runOver, seed, temporaryDirectory, wide } from './support/log-fixtures.ts';
import { everything } from './support/servers.ts';

let source: McpToolSource;
beforeAll(async () => {
  source = await McpToolSource.connect(everything());
}, 60_000);
afterAll(() => source?.close());

const code = new CodeExecutor();

describe('server-everything over stdio', () => {
  it('lists its tools into the catalog with their schemas and the recovery their annotations choose', () => {
    const byName = new Map(source.tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining([
        'echo',
        'get-sum',
        'get-structured-content',
        'get-tiny-image',
        'trigger-long-running-operation',
      ]),
    );
    expect(byName.get('trigger-long-running-operation')).toMatchObject({
      server: 'everything',
      recovery: 'read_only',
      hints: { readOnly: true, destructive: false },
    });
    expect(byName.get('get-sum')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { a: {}, b: {} },
    });
    expect(source.skipped).toEqual([]);
    const catalog = new ToolCatalog(source.registrations());
    expect(catalog.names()).toEqual(source.tools.map((tool) => tool.name));
    // A server's readOnlyHint makes a tool re-runnable by recovery, but its T1 is still
    // waited for before the call: a hint from a server is not a promise.
    for (const tool of source.tools) expect(catalog.get(tool.name)!.registration.readOnly).toBeUndefined();
  });

  it('every call in Direct mode is T1, the MCP call, then T2: text, structured content, images as references, progress recorded', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const calls: ModelToolCall[] = [
      { id: 'echo', name: 'echo', input: { message: 'hello' } },
      { id: 'weather', name: 'get-structured-content', input: { location: 'Chicago' } },
      { id: 'image', name: 'get-tiny-image', input: {} },
      { id: 'long', name: 'trigger-long-running-operation', input: { duration: 0.3, steps: 3 } },
    ];
    await seed(log, invocation, calls);
    const run = runOver(log, source, code);
    const step = (await run.capture('.')).intoStep('step');
    const results = [];
    for (const call of calls) results.push((await step.invoke(call)).json());
    await run.shutdown();

    expect(results[0]).toEqual({ content: [{ type: 'text', text: 'Echo: hello' }] });
    expect(results[1]).toMatchObject({
      structuredContent: { temperature: expect.any(Number), conditions: expect.any(String) },
    });
    const image = (results[2] as { content: Record<string, unknown>[] }).content.find(
      (block) => block.type === 'image',
    );
    expect(image).toMatchObject({
      mimeType: 'image/png',
      bytes: expect.any(Number),
      digest: expect.stringMatching(/^sha256:/),
    });
    expect(image).not.toHaveProperty('data');
    for (const call of calls) {
      const kinds = (await factsOf(log, `step:${call.id}`)).map((fact) => fact.kind);
      expect(kinds[0]).toBe('tool_dispatched');
      expect(kinds.at(-1)).toBe('tool_settled');
    }
    const long = await factsOf(log, 'step:long');
    expect(
      long.filter((fact) => fact.kind === 'tool_notified').map((fact) => 'message' in fact && fact.message),
    ).toEqual(['1/3', '2/3', '3/3']);
  }, 60_000);

  it('invalid input and unknown tools are recorded rejections and never reach the server', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const calls: ModelToolCall[] = [
      { id: 'bad', name: 'get-sum', input: { a: 'one', b: 2 } },
      { id: 'unknown', name: 'delete-everything', input: {} },
    ];
    await seed(log, invocation, calls);
    const run = runOver(log, source, code);
    const step = (await run.capture('.')).intoStep('step');
    const errors = await Promise.all(calls.map((call) => step.invoke(call).catch((error: unknown) => error)));
    await run.shutdown();
    expect(errors.map((error) => ToolError.isInstance(error) && error.code)).toEqual([
      'invalid_input',
      'unavailable',
    ]);
    const kinds = (await log.prefix(wide)).events.map(({ event }) => event.fact.kind);
    expect(kinds.filter((kind) => kind === 'tool_rejected')).toHaveLength(2);
    expect(kinds).not.toContain('tool_dispatched');
  });

  it('in Code mode a cell calls MCP tools as recorded child calls', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const call = {
      id: 'cell',
      name: 'exec',
      input: { code: "const r = await tools['get-sum']({ a: 2, b: 3 }); text(r.content[0].text);" },
    };
    await seed(log, invocation, [call]);
    const run = runOver(log, source, code, 'code_mode');
    const result = await (await run.capture('.')).intoStep('step').invoke(call);
    await run.shutdown();
    expect(JSON.stringify(result.json())).toMatch(/5/);
    const child = await factsOf(log, 'step:cell#cell/c0');
    expect(child.map((fact) => fact.kind)).toEqual(['tool_dispatched', 'tool_settled']);
    expect(child[0]).toMatchObject({ call: { name: 'get-sum', origin: { kind: 'code_mode' } } });
  }, 60_000);
});
