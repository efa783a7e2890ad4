import {
  canonicalJson,
  contentDigest,
  type EventWrite,
  FactParseError,
  RuntimeEvent,
} from '@factum/agent-facts';
import { AppendRefusedError } from './append-refused-error.js';
import type { WriterStamp } from './invocation-owner.js';
import type { StagedWrite } from './staged-write.js';

/** The canonical bytes and their digest of an event, as a log staged it. */
export type StagedForm = { readonly body: string; readonly bytes: number; readonly digest: string };

/** Events this process staged, with the form the log stores for them. */
const stagedForms = new WeakMap<object, StagedForm>();

/**
 * The canonical body and content digest the log computed when it staged `event` (the
 * event object itself, as written), or undefined for an event no log of this process
 * staged. Such an event passed the log's parse: a reader of this process that decodes
 * `body` has the event the log reads back, with no need to canonicalise, digest or
 * parse it again.
 */
export function stagedForm(event: RuntimeEvent): StagedForm | undefined {
  return stagedForms.get(event);
}

/** Size limits a write must fit before it reaches the store. */
export type WriteLimits = { readonly maxEventBytes: number; readonly maxResultBytes: number };

/**
 * Parses a write and computes its canonical bytes, or refuses it (`invalid_write`,
 * `write_too_large`) before it reaches the store. An event `RuntimeEvent.create` made
 * was parsed there: `RuntimeEvent.ensure` checks again only the JSON values its caller
 * could have changed since, and parses anything else in full.
 */
export function stageWrite(write: EventWrite, limits: WriteLimits, writer?: WriterStamp): StagedWrite {
  try {
    RuntimeEvent.ensure(write.event);
  } catch (error) {
    const path = FactParseError.isInstance(error) ? error.message : String(error);
    throw new AppendRefusedError('invalid_write', `refused a write that does not parse: ${path}`, {
      cause: error,
    });
  }
  const body = canonicalJson(write.event);
  const bytes = Buffer.byteLength(body);
  if (bytes > limits.maxEventBytes) {
    throw new AppendRefusedError(
      'write_too_large',
      `event is ${bytes} bytes, over maxEventBytes (${limits.maxEventBytes}); store large data as a tool result`,
    );
  }
  const digest = contentDigest(body);
  stagedForms.set(write.event, { body, bytes, digest });
  const result = write.result;
  if (result === undefined) {
    return writer === undefined
      ? { event: write.event, body, bytes, digest }
      : { event: write.event, body, bytes, digest, writer };
  }
  const reference = result.reference();
  if (reference.bytes > limits.maxResultBytes) {
    throw new AppendRefusedError(
      'write_too_large',
      `tool result is over maxResultBytes (${limits.maxResultBytes})`,
    );
  }
  const text = { digest: reference.digest, text: result.text() };
  return writer === undefined
    ? { event: write.event, body, bytes, digest, result: text }
    : { event: write.event, body, bytes, digest, result: text, writer };
}
