import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConversationError, parsePromptRecord } from '../src/index.js';
import { mapOpenCodeEvent } from '../src/map-opencode-event.js';
import { findAnswer, mapPromptResponse } from '../src/map-prompt-response.js';
import { OpenCodeClient } from '../src/opencode-client.js';
import { PromptRecordShapeError } from '../src/prompt-record.js';
import { OpenCodeStreamCase } from './support/stream-case.js';

const admitted = {
  message_id: 'msg_1',
  request_part_id: 'prt_1',
  phase: { phase: 'admitted' },
  cancellation: { state: 'not_requested' },
  waiter: 'waiting',
};

function shapeErrorOf(value: unknown): PromptRecordShapeError {
  try {
    parsePromptRecord(value);
  } catch (error) {
    if (error instanceof PromptRecordShapeError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(value)} parsed`);
}

function protocolErrorOf(work: () => unknown): ConversationError {
  try {
    work();
  } catch (error) {
    if (ConversationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('stored prompt records', () => {
  it('parse into their typed shape, dropping unknown fields and defaulting a missing error text', () => {
    const terminal = {
      ...admitted,
      extra: 'dropped',
      phase: {
        phase: 'terminal',
        outcome: { outcome: 'failed', assistantMessageId: null, errorName: 'ProviderAuthError' },
      },
    };
    expect(parsePromptRecord(terminal)).toEqual({
      ...admitted,
      phase: {
        phase: 'terminal',
        outcome: {
          outcome: 'failed',
          assistantMessageId: null,
          errorName: 'ProviderAuthError',
          errorMessage: '',
        },
      },
    });
  });

  it.each([
    ['a record that is not an object', [], '$'],
    ['an empty message id', { ...admitted, message_id: '' }, '$.message_id'],
    ['an unknown waiter', { ...admitted, waiter: 'gone' }, '$.waiter'],
    ['an unknown phase', { ...admitted, phase: { phase: 'done' } }, '$.phase.phase'],
    ['an unknown cancellation', { ...admitted, cancellation: { state: 'maybe' } }, '$.cancellation.state'],
    [
      'a success without text',
      { ...admitted, phase: { phase: 'terminal', outcome: { outcome: 'success', assistantMessageId: 'a' } } },
      '$.phase.outcome.text',
    ],
    [
      'a cancellation without its assistant id',
      { ...admitted, phase: { phase: 'terminal', outcome: { outcome: 'cancelled' } } },
      '$.phase.outcome.assistantMessageId',
    ],
  ])('%s is rejected at the path of the bad field', (_name, value, path) => {
    const error = shapeErrorOf(value);
    expect(error.path).toBe(path);
    expect(error.message).toContain(`does not parse at ${path}: `);
  });

  it('a malformed record in the store fails abort with an integration error naming its path', async () => {
    const t = await OpenCodeStreamCase.start();
    try {
      const tx = await t.faults.begin({ purpose: 'inspection' });
      await tx.put(t.key, { ...admitted, waiter: 'gone' });
      await tx.commit();
      const error = await t.conversation.abort().catch((caught: unknown) => caught);
      expect(ConversationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        kind: 'integration',
        context: { operation: 'abort', phase: 'state_read' },
      });
      expect((error as ConversationError).message).toContain(`${t.key} does not parse at $.waiter: `);
      expect(t.server.stats.aborts).toBe(0);
    } finally {
      await t.revoke();
    }
  });
});

describe('server events', () => {
  it('map the server shape to ours, keeping optional text lenient and unknown types as other', () => {
    const event = (type: string, properties: unknown) => JSON.stringify({ type, properties });
    const info = { sessionID: 'ses', id: 'msg_a', role: 'assistant' };
    expect(mapOpenCodeEvent(event('message.updated', { info }), 'prompt')).toEqual({
      type: 'message.updated',
      sessionId: 'ses',
      messageId: 'msg_a',
      role: 'assistant',
      parentId: null,
      completed: false,
    });
    const part = { sessionID: 'ses', messageID: 'msg_a', id: 'prt', type: 'tool', text: 7 };
    expect(mapOpenCodeEvent(event('message.part.updated', { part }), 'prompt')).toMatchObject({
      partType: 'tool',
      text: null,
    });
    const delta = { sessionID: 'ses', messageID: 'msg_a', partID: 'prt', field: 'text', delta: '' };
    expect(mapOpenCodeEvent(event('message.part.delta', delta), 'prompt')).toMatchObject({ delta: '' });
    expect(mapOpenCodeEvent(event('file.edited', 3), 'prompt')).toEqual({
      type: 'other',
      name: 'file.edited',
    });
    expect(mapOpenCodeEvent(event('toString', null), 'prompt')).toEqual({ type: 'other', name: 'toString' });
  });

  it.each([
    ['an event that is not an object', '[1]', '$'],
    ['an event without a type', '{"properties": {}}', '$.type'],
    [
      'a known event missing an id',
      '{"type": "message.updated", "properties": {"info": {"id": "m", "role": "user"}}}',
      '$.properties.info.sessionID',
    ],
    [
      'a delta that is not text',
      '{"type": "message.part.delta", "properties": {"sessionID": "s", "messageID": "m", "partID": "p", "field": "text"}}',
      '$.properties.delta',
    ],
  ])('%s is a protocol error in phase stream naming its path', (_name, data, path) => {
    const error = protocolErrorOf(() => mapOpenCodeEvent(data, 'prompt'));
    expect(error).toMatchObject({ kind: 'protocol', context: { operation: 'prompt', phase: 'stream' } });
    expect(error.message).toContain(`does not parse at ${path}: `);
  });
});

describe('prompt answers', () => {
  const info = { id: 'msg_a', sessionID: 'ses', role: 'assistant', finish: 'stop' };

  it('join the text parts and read any error value as a failure or an abort', () => {
    const parts = [
      { type: 'text', text: 'Hel' },
      { type: 'tool', tool: 'bash' },
      null,
      { type: 'text', text: 'lo' },
    ];
    expect(mapPromptResponse({ info, parts })).toEqual({
      outcome: 'success',
      assistantMessageId: 'msg_a',
      text: 'Hello',
    });
    const aborted = { ...info, error: { name: 'MessageAbortedError', data: {} } };
    expect(mapPromptResponse({ info: aborted, parts })).toEqual({
      outcome: 'cancelled',
      assistantMessageId: 'msg_a',
    });
    expect(mapPromptResponse({ info: { ...info, error: 'boom' }, parts: [] })).toEqual({
      outcome: 'failed',
      assistantMessageId: 'msg_a',
      errorName: 'UnknownError',
      errorMessage: '',
    });
    const failed = { ...info, error: { name: 'APIError', data: { message: 'rate limited' } } };
    expect(mapPromptResponse({ info: failed, parts: [] })).toMatchObject({
      errorName: 'APIError',
      errorMessage: 'rate limited',
    });
  });

  it('a success needs finish: completed with neither finish nor error is cancelled, never an empty success', () => {
    const bare = { id: 'msg_a', role: 'assistant', time: { created: 1, completed: 2 } };
    expect(mapPromptResponse({ info: bare, parts: [] })).toEqual({
      outcome: 'cancelled',
      assistantMessageId: 'msg_a',
    });
  });

  it('the answer to a message is the last finished assistant message naming it as parent', () => {
    const user = { info: { id: 'msg_1', role: 'user' }, parts: [] };
    const step = (id: string, parentID: string, finish?: string) => ({
      info: {
        id,
        role: 'assistant',
        parentID,
        ...(finish ? { finish, time: { created: 1, completed: 2 } } : {}),
      },
      parts: [{ type: 'text', text: id }],
    });
    const messages = [
      user,
      step('msg_2', 'msg_1', 'tool-calls'),
      'odd',
      step('msg_3', 'msg_1', 'stop'),
      step('msg_5', 'msg_4', 'stop'),
    ];
    expect(findAnswer(messages, 'msg_1', 'abort')).toEqual({
      outcome: 'success',
      assistantMessageId: 'msg_3',
      text: 'msg_3',
    });
    expect(findAnswer(messages, 'msg_9', 'abort')).toBeUndefined();
    // Still running: no answer yet.
    expect(findAnswer([user, step('msg_2', 'msg_1')], 'msg_1', 'abort')).toBeUndefined();
  });

  it.each([
    ['an answer that is not an object', null, '$'],
    ['an answer without an assistant id', { info: {}, parts: [] }, '$.info.id'],
    ['an answer without parts', { info }, '$.parts'],
  ])('%s is a protocol error in phase response naming its path', (_name, body, path) => {
    const error = protocolErrorOf(() => mapPromptResponse(body));
    expect(error).toMatchObject({ kind: 'protocol', context: { operation: 'prompt', phase: 'response' } });
    expect(error.message).toContain(`at ${path}: `);
  });
});

describe('HTTP answers', () => {
  async function answering(bodies: Record<string, unknown>): Promise<{ server: Server; url: string }> {
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(bodies[`${request.method} ${request.url}`] ?? {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it('a session without an id, or an unknown session status, is a protocol error naming its path', async () => {
    const { server, url } = await answering({
      'POST /session': { title: 'factum' },
      'GET /session/status': { ses_other: 'odd', ses_1: { type: 'sleeping' } },
    });
    const client = new OpenCodeClient(url, { requestTimeoutMs: 2000 });
    const signal = new AbortController().signal;
    try {
      const session = await client.createSession({ signal, operation: 'open' }).catch((e: unknown) => e);
      expect(session).toMatchObject({ kind: 'protocol', context: { operation: 'open', phase: 'session' } });
      expect((session as ConversationError).message).toContain('at $.id: ');
      const status = await client.status('ses_1', { signal, operation: 'abort' }).catch((e: unknown) => e);
      expect(status).toMatchObject({
        kind: 'protocol',
        context: { operation: 'abort', phase: 'cancellation' },
      });
      expect((status as ConversationError).message).toContain('at $.ses_1.type: ');
      // Another session's odd entry does not concern this one; a missing entry is idle.
      await expect(client.status('ses_2', { signal, operation: 'abort' })).resolves.toBe('idle');
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('answers the store could not read back', () => {
  it('an answer with an empty assistant id or error name is a protocol error, never a poisoned record', () => {
    for (const info of [{ id: '' }, { id: 'msg_1', error: { name: '', data: { message: 'x' } } }]) {
      const error = (() => {
        try {
          mapPromptResponse({ info, parts: [] });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(ConversationError.isInstance(error) && error.kind).toBe('protocol');
    }
  });
});
