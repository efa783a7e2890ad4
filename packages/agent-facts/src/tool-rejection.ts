import { z } from 'zod';
import { factObject } from './fact-object.js';

/** Why a call did not run. Each kind has a sentence the model and the user can read. */
export const ToolRejectionSchema = z.discriminatedUnion('kind', [
  factObject({ kind: z.literal('cancelled') }),
  factObject({ kind: z.literal('invalid_input'), message: z.string() }),
  factObject({ kind: z.literal('unavailable') }),
  factObject({ kind: z.literal('not_nestable') }),
  factObject({ kind: z.literal('interrupted') }),
  factObject({ kind: z.literal('limit_exceeded'), message: z.string() }),
  factObject({ kind: z.literal('repeated_call_id') }),
  factObject({ kind: z.literal('denied'), note: z.string().max(2048).optional() }),
  factObject({ kind: z.literal('expired') }),
  factObject({ kind: z.literal('approval_required'), reason: z.string() }),
]);
export type ToolRejection = z.infer<typeof ToolRejectionSchema>;

/** The languages rejection sentences exist in. */
export type Language = 'en';

/**
 * The human sentence for a rejection, always starting "did not run:" so a reader
 * (or a model) can tell at once that no effect happened.
 */
export function rejectionSentence(rejection: ToolRejection, _language: Language = 'en'): string {
  switch (rejection.kind) {
    case 'cancelled':
      return 'did not run: the run was cancelled before this call started';
    case 'invalid_input':
      return `did not run: the input does not match the tool's schema (${rejection.message})`;
    case 'unavailable':
      return 'did not run: no tool of this name is available in this run';
    case 'not_nestable':
      return 'did not run: this tool cannot be called from inside code';
    case 'interrupted':
      return 'did not run: the process stopped before this call was dispatched';
    case 'limit_exceeded':
      return `did not run: ${rejection.message}`;
    case 'repeated_call_id':
      return 'did not run: an earlier call in the same step has the same call id; give every call its own id';
    case 'denied':
      return rejection.note === undefined || rejection.note === ''
        ? 'did not run: a person denied this call'
        : `did not run: a person denied this call: ${rejection.note}`;
    case 'expired':
      return 'did not run: no one approved this call before its deadline';
    case 'approval_required':
      return "did not run: this call needs a person's approval, which a code cell cannot wait for; call the tool directly";
    default:
      return rejection satisfies never;
  }
}
