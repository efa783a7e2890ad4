import { ConversationError, type ErrorOperation } from './conversation-error.js';

/** The server events a prompt observation understands; everything else is `other`. */
export type OpenCodeEvent =
  | { readonly type: 'server.connected' }
  | {
      readonly type: 'message.updated';
      readonly sessionId: string;
      readonly messageId: string;
      readonly role: string;
      readonly parentId: string | null;
    }
  | {
      readonly type: 'message.part.updated';
      readonly sessionId: string;
      readonly messageId: string;
      readonly partId: string;
      readonly partType: string;
      readonly text: string | null;
    }
  | {
      readonly type: 'message.part.delta';
      readonly sessionId: string;
      readonly messageId: string;
      readonly partId: string;
      readonly field: string;
      readonly delta: string;
    }
  | { readonly type: 'session.status'; readonly sessionId: string; readonly status: string }
  | { readonly type: 'session.idle'; readonly sessionId: string }
  | { readonly type: 'other'; readonly name: string };

/**
 * Parses one SSE `data` payload. A payload that is not JSON, has no `type`, or is a
 * known event with a wrong shape is a protocol error: a half-understood stream must
 * not be reported as a prompt's output.
 */
export function mapOpenCodeEvent(data: string, operation: ErrorOperation): OpenCodeEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (error) {
    throw malformed(`event data is not JSON: ${data.slice(0, 80)}`, operation, error);
  }
  const event = record(value, 'event', operation);
  const type = event.type;
  if (typeof type !== 'string') throw malformed('event has no type', operation);
  const properties = () => record(event.properties, `${type}.properties`, operation);
  const text = (from: Record<string, unknown>, key: string) => string(from[key], `${type}.${key}`, operation);
  switch (type) {
    case 'server.connected':
      return { type };
    case 'message.updated': {
      const info = record(properties().info, `${type}.info`, operation);
      const parent = info.parentID;
      return {
        type,
        sessionId: text(info, 'sessionID'),
        messageId: text(info, 'id'),
        role: text(info, 'role'),
        parentId: typeof parent === 'string' ? parent : null,
      };
    }
    case 'message.part.updated': {
      const part = record(properties().part, `${type}.part`, operation);
      return {
        type,
        sessionId: text(part, 'sessionID'),
        messageId: text(part, 'messageID'),
        partId: text(part, 'id'),
        partType: text(part, 'type'),
        text: typeof part.text === 'string' ? part.text : null,
      };
    }
    case 'message.part.delta': {
      const props = properties();
      const delta = props.delta;
      if (typeof delta !== 'string') throw malformed(`${type}.delta is not a string`, operation);
      return {
        type,
        sessionId: text(props, 'sessionID'),
        messageId: text(props, 'messageID'),
        partId: text(props, 'partID'),
        field: text(props, 'field'),
        delta,
      };
    }
    case 'session.status': {
      const props = properties();
      const status = record(props.status, `${type}.status`, operation);
      return { type, sessionId: text(props, 'sessionID'), status: text(status, 'type') };
    }
    case 'session.idle':
      return { type, sessionId: text(properties(), 'sessionID') };
    default:
      return { type: 'other', name: type };
  }
}

function record(value: unknown, what: string, operation: ErrorOperation): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed(`${what} is not an object`, operation);
  }
  return value as Record<string, unknown>;
}

function string(value: unknown, what: string, operation: ErrorOperation): string {
  if (typeof value !== 'string' || value.length === 0) throw malformed(`${what} is not a string`, operation);
  return value;
}

function malformed(message: string, operation: ErrorOperation, cause?: unknown): ConversationError {
  return new ConversationError(`malformed server event: ${message}`, {
    kind: 'protocol',
    context: { operation, phase: 'stream' },
    cause,
  });
}
