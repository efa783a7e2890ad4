import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import { EventLog, recoverInvocations } from '@factum/event-log';
import { startScriptedProvider } from '@factum/model/testing';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from '@opentelemetry/semantic-conventions/incubating';
import { cac } from 'cac';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '../src/commands/cli-context.ts';
import { registerServe } from '../src/commands/serve.ts';
import { ATTR, providerNameOf } from '../src/telemetry/invocation-trace.ts';
import { openOtlpTracing, otlpProtocol, otlpTracesUrl } from '../src/telemetry/otlp-tracing.ts';
import { Terminal } from '../src/terminal/terminal.ts';
import { eventually, runCli, temporaryDirectory, untilLeaseExpired } from './cli-harness.ts';
import { type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.ts';

function byName(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.find((span) => span.name === name);
  if (found === undefined) throw new Error(`no span ${name} in ${spans.map((span) => span.name).join(', ')}`);
  return found;
}

describe('OpenTelemetry export over OTLP/HTTP', () => {
  it('factum run --otlp exports the invocation as one trace: model steps and tool calls as GenAI spans', async () => {
    using dir = temporaryDirectory();
    await using receiver = await startOtlpReceiver();
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [{ id: 'call-7', name: 'write_file', arguments: { path: 'a.txt', content: 'A' } }],
        usage: { inputTokens: 11, outputTokens: 3 },
      },
      { text: 'Done.', usage: { inputTokens: 20, outputTokens: 2 } },
    );
    const run = await runCli(
      [
        'run',
        'write a.txt',
        '--base-url',
        provider.baseUrl,
        '--model',
        'test-model',
        '--otlp',
        receiver.url,
        '--dir',
        dir.dataDir,
      ],
      { cwd: dir.workspace, env: { FACTUM_API_KEY: 'sk-otlp-secret' } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(receiver.paths).toContain('/v1/traces');
    const spans = receiver.spans;
    expect(spans.map((span) => span.name).sort()).toEqual([
      'chat test-model',
      'chat test-model',
      'execute_tool write_file',
      'invoke_agent factum',
    ]);
    expect(new Set(spans.map((span) => span.traceId)).size, 'one trace').toBe(1);
    const root = byName(spans, 'invoke_agent factum');
    expect(root.parentSpanId).toBeUndefined();
    expect(root.service).toBe('factum');
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'factum.outcome': 'completed',
    });
    expect(root.kind, 'the agent runs in process: INTERNAL').toBe(1);
    const [first, second] = spans
      .filter((span) => span.name === 'chat test-model')
      .sort((a, b) => Number(a.startNs - b.startNs));
    expect(first!.parentSpanId).toBe(root.spanId);
    expect(first!.kind, 'a request to a model server: CLIENT').toBe(3);
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'test-model',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    expect(second!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.output_tokens': 2,
    });
    const tool = byName(spans, 'execute_tool write_file');
    expect(tool.parentSpanId).toBe(root.spanId);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'write_file',
      'gen_ai.tool.call.id': 'call-7',
      'factum.outcome': 'succeeded',
    });
    expect(String(tool.attributes['factum.operation.id'])).toMatch(/:call-7$/);
    expect(tool.attributes, 'a span that did not fail has no error.type').not.toHaveProperty('error.type');
    expect(tool.startNs >= first!.endNs, 'the tool ran after the step that asked for it').toBe(true);
    expect(
      JSON.stringify(spans, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
      'no secret in the trace',
    ).not.toContain('sk-otlp-secret');
  }, 60_000);

  it('OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf exports protobuf; failed spans carry error.type', async () => {
    using dir = temporaryDirectory();
    await using receiver = await startOtlpReceiver();
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-r', name: 'read_file', arguments: { path: 'missing.txt' } }] },
      { status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } },
    );
    const run = await runCli(
      ['run', 'read missing.txt', ...['--base-url', provider.baseUrl, '--model', 'm'], '--dir', dir.dataDir],
      {
        cwd: dir.workspace,
        env: {
          FACTUM_API_KEY: 'k',
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        },
      },
    );
    expect(run.code, run.stderr).toBe(1);
    expect(receiver.contentTypes).toEqual(['application/x-protobuf']);
    const root = byName(receiver.spans, 'invoke_agent factum');
    expect(root.status).toBe(2);
    expect(root.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'factum.outcome': 'failed' });
    expect(typeof root.attributes['error.type']).toBe('string');
    const tool = byName(receiver.spans, 'execute_tool read_file');
    expect(tool.status).toBe(2);
    expect(tool.attributes).toMatchObject({ 'factum.outcome': 'failed', 'error.type': 'failed' });
    const chats = receiver.spans.filter((span) => span.name === 'chat m');
    expect(chats.map((span) => span.kind)).toEqual([3, 3]);
    // The step the run failed under ends failed with it, with the run's error code.
    expect(chats.map((span) => span.attributes['error.type'] ?? null).sort()).toEqual([
      root.attributes['error.type'],
      null,
    ]);
    expect(() => otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /http\/protobuf or http\/json/,
    );
    expect(
      otlpProtocol({
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toBe('http/protobuf');
  }, 60_000);

  it('names attributes and operations as @opentelemetry/semantic-conventions does', () => {
    expect(ATTR).toMatchObject({
      operationName: ATTR_GEN_AI_OPERATION_NAME,
      providerName: ATTR_GEN_AI_PROVIDER_NAME,
      requestModel: ATTR_GEN_AI_REQUEST_MODEL,
      inputTokens: ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      outputTokens: ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      finishReasons: ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
      toolName: ATTR_GEN_AI_TOOL_NAME,
      toolCallId: ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: ATTR_GEN_AI_TOOL_TYPE,
      conversationId: ATTR_GEN_AI_CONVERSATION_ID,
      agentName: ATTR_GEN_AI_AGENT_NAME,
      errorType: ATTR_ERROR_TYPE,
    });
    // Every gen_ai.* name we use is one the conventions define.
    const defined = new Set<string>(Object.values(incubating).filter((value) => typeof value === 'string'));
    for (const name of Object.values(ATTR).filter((name) => name.startsWith('gen_ai.')))
      expect(defined.has(name), name).toBe(true);
    expect(providerNameOf('openai_chat_completions http://x/v1 m')).toBe(GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
    expect(providerNameOf('openai_responses http://x/v1 m')).toBe(GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
    expect(providerNameOf('anthropic_messages http://x m')).toBe(GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC);
    expect([
      GEN_AI_OPERATION_NAME_VALUE_CHAT,
      GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
    ]).toEqual(['chat', 'execute_tool', 'invoke_agent']);
  });

  it('marks an operation a crash left uncertain and the recovery that followed as span events, in the same trace', async () => {
    using dir = temporaryDirectory();
    await using receiver = await startOtlpReceiver();
    const log = await EventLog.open(join(dir.path, 'events.sqlite'));
    try {
      const invocation: Invocation = {
        sessionId: 's',
        turnId: 't',
        runId: 'r',
        invocationId: 'invocation-crashed',
      };
      const facts: Fact[] = [
        {
          kind: 'invocation_opened',
          configuration: { cwd: '/w', toolMode: 'direct' },
          input: { kind: 'message', content: 'charge', sourceMessages: [] },
        },
        {
          kind: 'tool_dispatched',
          operationId: 'step-1:call-a',
          call: {
            id: 'call-a',
            name: 'charge_card',
            input: { amount: 42 },
            origin: { kind: 'provider', stepId: 'step-1' },
          },
        },
      ];
      for (const fact of facts) await log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
      await recoverInvocations(log);
      const tracing = await openOtlpTracing(`${receiver.url}/v1/traces`, {});
      await tracing.exportInvocation(log, invocation);
      const exportedUpTo = (await log.invocationEvents(invocation, { maxEvents: 100, maxBytes: 1 << 20 })).at(
        -1,
      )!.sequence;
      await log.append(
        EventWrite.plain(
          RuntimeEvent.create(invocation, {
            kind: 'tool_reconciled',
            operationId: 'step-1:call-a',
            policy: 'reconcile',
            decision: { kind: 'unknown', note: 'the processor has no record either way' },
          }),
        ),
      );
      await tracing.exportInvocation(log, invocation, { afterSequence: exportedUpTo });
      await tracing.shutdown();
      const root = byName(receiver.spans, 'invoke_agent factum');
      expect(root.status, 'failed {interrupted} is an error').toBe(2);
      expect(root.events.map((event) => event.name)).toContain('factum.invocation.interrupted');
      const tool = byName(receiver.spans, 'execute_tool charge_card');
      expect(tool.attributes['factum.outcome']).toBe('uncertain');
      expect(tool.events).toEqual([
        { name: 'factum.operation.uncertain', attributes: { 'factum.operation.id': 'step-1:call-a' } },
      ]);
      const recovery = byName(receiver.spans, 'factum recover');
      expect(recovery.traceId, 'the recovery joins the invocation’s trace').toBe(root.traceId);
      expect(recovery.parentSpanId).toBe(root.spanId);
      expect(recovery.events).toEqual([
        {
          name: 'factum.operation.reconciled',
          attributes: {
            'factum.operation.id': 'step-1:call-a',
            'factum.policy': 'reconcile',
            'factum.decision': 'unknown',
          },
        },
      ]);
    } finally {
      await log.close();
    }
  });

  it('factum recover --apply --otlp exports what a crashed process never could: the uncertain call and its reconciliation', async () => {
    using dir = temporaryDirectory();
    await using receiver = await startOtlpReceiver();
    const session = 'session-crashed';
    mkdirSync(join(dir.dataDir, 'demo', session), { recursive: true });
    const crash = await runCli(['demo', '--crash-child', session, '--dir', dir.dataDir], { cwd: dir.path });
    expect(crash.signal).toBe('SIGKILL');
    await untilLeaseExpired(dir.dataDir, dir.path);
    const applied = await runCli(['recover', '--apply', '--otlp', receiver.url, '--dir', dir.dataDir], {
      cwd: dir.path,
    });
    expect(applied.code, applied.stderr).toBe(0);
    const root = byName(receiver.spans, 'invoke_agent factum');
    expect(root.events.map((event) => event.name)).toEqual(
      expect.arrayContaining(['factum.invocation.interrupted', 'factum.operation.reconciled']),
    );
    expect(
      root.events.find((event) => event.name === 'factum.operation.reconciled')?.attributes,
    ).toMatchObject({
      'factum.policy': 'reconcile',
      'factum.decision': 'succeeded',
    });
    const tool = byName(receiver.spans, 'execute_tool write_file');
    expect(tool.events.map((event) => event.name)).toEqual(['factum.operation.uncertain']);
  }, 60_000);

  it('factum serve exports each turn it ran, with the endpoint from OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'factum-serve-otlp-'));
    await using receiver = await startOtlpReceiver();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'served', finishReason: 'stop' });
    let out = '';
    const signals = new EventEmitter();
    const sink = () =>
      new Writable({
        write(chunk, _encoding, done) {
          out += String(chunk);
          done();
        },
      });
    const context: CliContext = {
      cwd,
      env: {
        NO_COLOR: '1',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        FACTUM_TOKEN: 'serve-otlp-token-0123456789',
      },
      terminal: new Terminal({ stdout: sink(), stderr: sink(), env: { NO_COLOR: '1' } }),
      self: { execPath: process.execPath, args: [] },
      version: '0.0.0-test',
      signals: signals as unknown as CliContext['signals'],
    };
    try {
      const cli = cac('factum');
      cli.option('--dir <path>', 'data directory');
      registerServe(cli, context);
      cli.parse(['node', 'factum', 'serve', '--port', '0', '--base-url', provider.baseUrl, '--model', 'm'], {
        run: false,
      });
      const exit = Promise.resolve(cli.runMatchedCommand()) as Promise<number>;
      await eventually(() => /timeline\s+http/.test(out));
      const url = /timeline\s+(http:\S+)\//.exec(out)![1]!;
      const turn = await fetch(`${url}/api/sessions/s-otlp/turns`, {
        method: 'POST',
        headers: { authorization: 'Bearer serve-otlp-token-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hi' }),
      });
      expect(turn.status).toBe(202);
      const { invocation } = (await turn.json()) as { invocation: Invocation };
      signals.emit('SIGTERM');
      expect(await exit).toBe(0);
      const root = byName(receiver.spans, 'invoke_agent factum');
      expect(root.attributes).toMatchObject({
        'gen_ai.conversation.id': 's-otlp',
        'factum.invocation.id': invocation.invocationId,
      });
      expect(byName(receiver.spans, 'chat m').parentSpanId).toBe(root.spanId);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('reads the endpoint from the flag, then the variables OpenTelemetry SDKs use, and refuses one that is not a URL', () => {
    expect(otlpTracesUrl('http://c:4318', {})).toBe('http://c:4318/v1/traces');
    expect(otlpTracesUrl(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe(
      'http://c:4318/v1/traces',
    );
    expect(otlpTracesUrl(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' })).toBe(
      'http://c:4318/custom',
    );
    expect(otlpTracesUrl(undefined, {})).toBeUndefined();
    expect(() => otlpTracesUrl(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' })).toThrow(
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
    );
  });
});
