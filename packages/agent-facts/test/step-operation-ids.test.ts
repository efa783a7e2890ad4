import { describe, expect, it } from 'vitest';
import { type ModelPart, rejectionSentence, stepToolCalls } from '../src/index.ts';

const call = (id: string, value = 0): ModelPart => ({
  kind: 'tool_call',
  call: { id, name: 'echo', input: { value } },
});

describe('operations of a model step', () => {
  it('a repeated call id gets an operation of its own and is marked repeated; the first keeps stepId:callId', () => {
    const calls = stepToolCalls('s', [call('a', 1), { kind: 'text', text: 'x' }, call('b'), call('a', 2)]);
    expect(calls.map(({ operationId, repeated }) => [operationId, repeated])).toEqual([
      ['s:a', false],
      ['s:b', false],
      ['s:a#3', true],
    ]);
    expect(calls[2]!.call.input).toEqual({ value: 2 });
  });

  it('operation names stay unique whatever ids the model sends, and the same parts always give the same names', () => {
    const parts = [call('a'), call('a'), call('a#2'), call('a#2'), call('a')];
    const names = stepToolCalls('s', parts).map((entry) => entry.operationId);
    expect(new Set(names).size).toBe(parts.length);
    expect(stepToolCalls('s', parts).map((entry) => entry.operationId)).toEqual(names);
  });

  it('the rejection of a repeated call id reads as a sentence saying nothing ran', () => {
    expect(rejectionSentence({ kind: 'repeated_call_id' })).toMatch(/^did not run: .*same call id/);
  });
});
