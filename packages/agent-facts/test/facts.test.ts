import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CommitError,
  callInputDigest,
  canonicalJson,
  chainDigest,
  contentDigest,
  EventWrite,
  FactParseError,
  FactumError,
  InvocationConfigurationSchema,
  newEventId,
  parseFact,
  RuntimeEvent,
  rejectionSentence,
  successorOf,
  ToolRejectionSchema,
  ToolResult,
  terminalStatusOf,
  WorkspaceIdentity,
} from '../src/index.ts';
import { everyKind, invocation } from './fixtures.ts';

describe('facts', () => {
  it('every fact kind round-trips through the schema and canonical bytes unchanged', () => {
    for (const fact of everyKind()) {
      const event = RuntimeEvent.create(invocation, fact, { id: () => 'e', now: () => new Date(0) });
      const bytes = canonicalJson(event);
      expect(canonicalJson(RuntimeEvent.parse(JSON.parse(bytes)))).toBe(bytes);
    }
  });

  it('a malformed fact fails with an error naming the path of the bad field', () => {
    const bad = {
      kind: 'tool_dispatched',
      operationId: 's:c',
      call: { id: 'c', name: 'echo', input: {}, origin: { kind: 'provider' } },
    };
    const error = catchError(() => parseFact(bad));
    expect(FactParseError.isInstance(error)).toBe(true);
    expect((error as FactParseError).message).toContain('call.origin.stepId');
    expect((error as FactParseError).code).toBe('fact_parse');
  });

  it('a dispatch may name the MCP server its tool came from; one written before that field still parses', () => {
    const call = {
      id: 'c',
      name: 'echo',
      input: { message: 'hi' },
      origin: { kind: 'provider', stepId: 's' },
    };
    const old = { kind: 'tool_dispatched', operationId: 's:c', call };
    expect(parseFact(old)).toEqual(old);
    const sourced = { ...old, source: { kind: 'mcp', server: 'everything' } };
    expect(parseFact(sourced)).toEqual(sourced);
    expect(() => parseFact({ ...old, source: { kind: 'mcp', server: '' } })).toThrow(/at source\.server/);
    expect(() => parseFact({ ...old, source: { kind: 'plugin', server: 'x' } })).toThrow(FactParseError);
    expect(() => parseFact({ ...old, source: { kind: 'mcp', server: 'x', url: 'http://secret' } })).toThrow(
      FactParseError,
    );
  });

  it('an unknown fact kind and a value that is not JSON are refused', () => {
    expect(() => parseFact({ kind: 'tool_exploded' })).toThrow(FactParseError);
    expect(() =>
      parseFact({
        kind: 'tool_dispatched',
        operationId: 'o',
        call: { id: 'c', name: 'n', input: { at: new Date() }, origin: { kind: 'provider', stepId: 's' } },
      }),
    ).toThrow(/call\.input/);
  });

  it('configuration has no place for secrets: unknown fields are refused', () => {
    const result = InvocationConfigurationSchema.safeParse({
      cwd: '/',
      toolMode: 'direct',
      apiKey: 'sk-secret',
    });
    expect(result.success).toBe(false);
  });

  it('event ids are UUID v7: they carry their millisecond, sort by it and within it by creation, and never repeat', () => {
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const at = Date.UTC(2026, 10, 30, 4, 0, 0, 123);
    const id = newEventId(at);
    expect(id).toMatch(v7);
    expect(Number.parseInt(id.replace('-', '').slice(0, 12), 16)).toBe(at);
    const times = [at - 86_400_000, at - 1, at, at + 1, at + 3_600_000];
    const ids = times.map((time) => newEventId(time));
    expect([...ids].sort()).toEqual(ids);
    const many = Array.from({ length: 10_000 }, () => newEventId(at));
    expect(new Set(many).size).toBe(many.length);
    for (const one of many) expect(one).toMatch(v7);
    // The variant's two free bits are random too: all four of its digits occur.
    expect(new Set(many.map((one) => one[19])).size).toBe(4);
    // Within one millisecond they sort in the order made, for at least 2,048 ids (the
    // counter starts below 2,048 and stops at 4,095).
    const burst = Array.from({ length: 2_048 }, () => newEventId(at + 7));
    expect([...burst].sort()).toEqual(burst);
    const event = RuntimeEvent.create(
      invocation,
      parseFact({ kind: 'invocation_ended', outcome: { kind: 'completed' } }),
      {
        now: () => new Date(at),
      },
    );
    expect(event.id).toMatch(v7);
    expect(event.id.startsWith(id.slice(0, 13))).toBe(true);
  });

  it('canonical JSON sorts keys so equal values digest equally', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'] })).toBe('{"a":[true,null,"x"],"b":1}');
    expect(contentDigest(canonicalJson({ b: 1, a: 2 }))).toBe(contentDigest(canonicalJson({ a: 2, b: 1 })));
    expect(contentDigest('abc')).toBe(
      'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(chainDigest(undefined, 'a')).not.toBe(chainDigest(chainDigest(undefined, 'x'), 'a'));
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });

  it('a success cannot be written without its result, and the result must match the fact', () => {
    const result = ToolResult.of({ value: 42 });
    const settled = RuntimeEvent.create(invocation, {
      kind: 'tool_settled',
      operationId: 's:c',
      outcome: { kind: 'succeeded', result: result.reference() },
    });
    expect(() => EventWrite.plain(settled)).toThrow(/must carry its result/);
    expect(EventWrite.withResult(settled, result).result?.json()).toEqual({ value: 42 });
    expect(() => EventWrite.withResult(settled, { value: 43 })).toThrow(/does not match/);
    const opened = RuntimeEvent.create(invocation, everyKind()[0]!);
    expect(() => EventWrite.withResult(opened, {})).toThrow(/carries no result/);
  });

  it('every rejection says it did not run', () => {
    const kinds = ToolRejectionSchema.options.map((option) => option.shape.kind.value);
    for (const kind of kinds) {
      const needsMessage = kind === 'invalid_input' || kind === 'limit_exceeded';
      const rejection = ToolRejectionSchema.parse(
        needsMessage
          ? { kind, message: 'limit reached' }
          : kind === 'approval_required'
            ? { kind, reason: 'r' }
            : { kind },
      );
      expect(rejectionSentence(rejection)).toMatch(/^did not run: /);
    }
  });

  it('approval rejections say who stopped the call, with the note when there is one', () => {
    expect(rejectionSentence({ kind: 'denied' })).toBe('did not run: a person denied this call');
    expect(rejectionSentence({ kind: 'denied', note: 'not on prod' })).toBe(
      'did not run: a person denied this call: not on prod',
    );
    expect(rejectionSentence({ kind: 'expired' })).toBe(
      'did not run: no one approved this call before its deadline',
    );
    expect(rejectionSentence({ kind: 'approval_required', reason: 'shell' })).toBe(
      "did not run: this call needs a person's approval, which a code cell cannot wait for; call the tool directly",
    );
  });

  it('approval facts are bounded: a reason, a name and a note have limits, a digest a prefix', () => {
    const call = {
      id: 'c',
      name: 'shell',
      input: { command: 'ls' },
      origin: { kind: 'provider', stepId: 's' },
    };
    const requested = {
      kind: 'approval_requested',
      operationId: 's:c',
      call,
      inputDigest: callInputDigest({ command: 'ls' }),
      reason: 'shell',
    };
    expect(parseFact(requested)).toEqual(requested);
    expect(() => parseFact({ ...requested, reason: '' })).toThrow(/at reason/);
    expect(() => parseFact({ ...requested, reason: 'x'.repeat(1025) })).toThrow(/at reason/);
    expect(() => parseFact({ ...requested, inputDigest: 'md5:x' })).toThrow(/at inputDigest/);
    expect(() => parseFact({ ...requested, expiresAt: 'tomorrow' })).toThrow(/at expiresAt/);
    expect(parseFact({ ...requested, expiresAt: '2026-01-01T00:00:00Z' })).toMatchObject({
      expiresAt: '2026-01-01T00:00:00Z',
    });
    const decided = {
      kind: 'approval_decided',
      operationId: 's:c',
      decision: 'approved',
      inputDigest: requested.inputDigest,
      by: 'ada',
    };
    expect(parseFact(decided)).toEqual(decided);
    expect(() => parseFact({ ...decided, decision: 'maybe' })).toThrow(/at decision/);
    expect(() => parseFact({ ...decided, by: '' })).toThrow(/at by/);
    expect(() => parseFact({ ...decided, by: 'x'.repeat(257) })).toThrow(/at by/);
    expect(() => parseFact({ ...decided, note: 'x'.repeat(2049) })).toThrow(/at note/);
    expect(() => parseFact({ ...decided, extra: 1 })).toThrow(FactParseError);
    expect(() =>
      parseFact({ kind: 'invocation_ended', outcome: { kind: 'approval_pending', operations: [] } }),
    ).toThrow(/at outcome.operations/);
    expect(terminalStatusOf({ kind: 'approval_pending', operations: ['s:c'] })).toBe('awaiting_approval');
  });

  it('the input digest of a call does not depend on the order of its keys', () => {
    expect(callInputDigest({ a: 1, b: [1, 2] })).toBe(callInputDigest({ b: [1, 2], a: 1 }));
    expect(callInputDigest({ a: 1 })).toBe(contentDigest('{"a":1}'));
    expect(callInputDigest({ a: 1 })).not.toBe(callInputDigest({ a: 2 }));
  });

  it('a handoff successor keeps the session and turn and takes the intent run', () => {
    const intent = {
      handoffId: 'h',
      hostEpoch: 'e',
      rootRunId: 'run',
      successorRunId: 'run-next',
      successorInvocationId: 'inv-next',
      claimId: 'c',
    };
    expect(successorOf(intent, invocation)).toEqual({
      sessionId: 'session',
      turnId: 'turn',
      runId: 'run-next',
      invocationId: 'inv-next',
    });
  });

  it('workspace identity comes only from a UUID marker', () => {
    expect(WorkspaceIdentity.fromMarkerId('EF751105-55b5-4d65-a364-646281586a17')).toBe(
      'workspace:ef751105-55b5-4d65-a364-646281586a17',
    );
    expect(() => WorkspaceIdentity.fromMarkerId('../etc')).toThrow(FactumError);
  });

  it('commit errors keep their outcome and are recognised across copies', () => {
    const error = CommitError.outcomeUnknown('fsync failed');
    expect(error.outcome).toBe('outcome_unknown');
    expect(CommitError.isInstance(error)).toBe(true);
    expect(CommitError.isInstance(new FactumError('x', 'y'))).toBe(false);
    expect(FactumError.isInstance(error)).toBe(true);
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
