import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ProviderConfig, ProviderKind } from '@factum/model';
import type { ScriptedReply } from '@factum/model/testing';
import { z } from 'zod';
import { CliError } from './cli-error.js';

// A union's own message says only "Invalid input": each says what it takes instead.
const pieces = z.union([z.string(), z.array(z.string()).min(1)], {
  error: 'expected a string, or a non-empty list of strings to stream',
});
const count = z.number().int().nonnegative();

const toolCallSchema = z.strictObject({
  /** Defaults to `call-<reply>-<n>`. */
  id: z.string().min(1).optional(),
  name: z.string().min(1),
  /** An object (sent as its JSON), a string, or the string pieces to stream it in. */
  arguments: z
    .union([z.record(z.string(), z.unknown()), pieces], {
      error: 'expected an object, a string, or a non-empty list of strings to stream',
    })
    .default({}),
});

const answerSchema = z.strictObject({
  text: pieces.optional(),
  reasoning: pieces.optional(),
  refusal: pieces.optional(),
  toolCalls: z.array(toolCallSchema).optional(),
  finishReason: z.enum(['stop', 'length', 'tool_calls', 'content_filter']).optional(),
  usage: z.strictObject({ inputTokens: count, outputTokens: count }).optional(),
  delayMs: count.optional(),
  chunkDelayMs: count.optional(),
  truncateAfterChunks: count.optional(),
  stallAfterChunks: count.optional(),
  resetAfterChunks: count.optional(),
});

const errorSchema = z.strictObject({
  error: z.strictObject({
    status: z.number().int().min(400).max(599),
    message: z.string().default('scripted error'),
    /** The provider's error type or code, e.g. `rate_limit_exceeded`, `insufficient_quota`. */
    type: z.string().optional(),
    retryAfterSeconds: count.optional(),
  }),
  delayMs: count.optional(),
});

/**
 * A script of model replies for `factum run --script`: a JSON array of replies, or an
 * object with `replies`. The n-th reply answers the n-th model request. A reply is an
 * answer (`text`, `reasoning`, `refusal`, `toolCalls`, `finishReason`, `usage`, with
 * timing `delayMs`, `chunkDelayMs` and faults `truncateAfterChunks`, `stallAfterChunks`,
 * `resetAfterChunks`) or an HTTP error (`{ "error": { "status", "message", "type",
 * "retryAfterSeconds" } }`).
 */
export const ScriptFileSchema = z.union([
  z.array(z.union([answerSchema, errorSchema])),
  z.strictObject({ replies: z.array(z.union([answerSchema, errorSchema])) }),
]);

/**
 * What is wrong with a script that does not parse, each problem at its path
 * (`[0].toolCalls[0].name: …`). A reply with an `error` key is checked as an error
 * reply, any other as an answer: a union of the two would report only "Invalid input".
 */
export function scriptProblems(json: unknown): string[] {
  let replies: readonly unknown[];
  let base: PropertyKey[] = [];
  if (Array.isArray(json)) replies = json;
  else if (typeof json === 'object' && json !== null && 'replies' in json) {
    const top = z.strictObject({ replies: z.array(z.unknown()) }).safeParse(json);
    if (!top.success) return problemsOf(top.error, []);
    replies = top.data.replies;
    base = ['replies'];
  } else return ['expected a JSON array of replies, or an object { "replies": [...] }'];
  return replies.flatMap((reply, index) => {
    const schema =
      typeof reply === 'object' && reply !== null && 'error' in reply ? errorSchema : answerSchema;
    const checked = schema.safeParse(reply);
    return checked.success ? [] : problemsOf(checked.error, [...base, index]);
  });
}

function problemsOf(error: z.ZodError, base: readonly PropertyKey[]): string[] {
  return error.issues.map((issue) => `${pathText([...base, ...issue.path])}: ${issue.message}`);
}

/** `[0].toolCalls[1].name`, or `(the script)` for the whole of it. */
function pathText(path: readonly PropertyKey[]): string {
  const text = path
    .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
    .join('')
    .replace(/^\./, '');
  return text === '' ? '(the script)' : text;
}
export type ScriptFile = z.infer<typeof ScriptFileSchema>;

/** A scripted provider serving a script file on loopback, for one command. */
export type ScriptedRoute = AsyncDisposable & { readonly provider: ProviderConfig };

/**
 * Reads and checks a script file, and starts a scripted provider on 127.0.0.1 playing
 * it. A file that cannot be read or does not match the format is a usage error naming
 * the file and the first problems.
 */
export async function startScript(
  file: string,
  options: { readonly cwd: string; readonly kind?: ProviderKind; readonly model?: string },
): Promise<ScriptedRoute> {
  const path = resolve(options.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    const reason = (cause as { code?: string }).code ?? String(cause);
    throw new CliError('usage', `cannot read the script ${path} (${reason})`, { cause });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new CliError('usage', `the script ${path} is not JSON: ${(cause as Error).message}`);
  }
  const parsed = ScriptFileSchema.safeParse(json);
  if (!parsed.success) {
    // One line: errors are printed as one, and a newline in them would show as `\n`.
    const problems = scriptProblems(json);
    const shown = problems.slice(0, 5).join('; ');
    const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
    throw new CliError(
      'usage',
      `the script ${path} does not match the format (see "Script files" in the README): ${shown || 'invalid'}${more}`,
    );
  }
  const replies = (Array.isArray(parsed.data) ? parsed.data : parsed.data.replies).map(toReply);
  const { startScriptedProvider } = await import('@factum/model/testing');
  const server = await startScriptedProvider({ replies });
  return {
    provider: server.config({
      kind: options.kind ?? 'openai_chat_completions',
      model: options.model ?? 'scripted',
      auth: { none: true },
    }),
    [Symbol.asyncDispose]: () => server.close(),
  };
}

function toReply(
  reply: z.infer<typeof answerSchema> | z.infer<typeof errorSchema>,
  index: number,
): ScriptedReply {
  if ('error' in reply) {
    const { status, message, type, retryAfterSeconds } = reply.error;
    return {
      status,
      body: { type: 'error', error: { type: type ?? 'scripted_error', code: type ?? null, message } },
      ...(retryAfterSeconds === undefined ? {} : { headers: { 'retry-after': String(retryAfterSeconds) } }),
      ...(reply.delayMs === undefined ? {} : { delayMs: reply.delayMs }),
    };
  }
  const { toolCalls, ...answer } = reply;
  if (toolCalls === undefined) return answer;
  return {
    ...answer,
    toolCalls: toolCalls.map((call, n) => ({
      id: call.id ?? `call-${index + 1}-${n + 1}`,
      name: call.name,
      arguments: call.arguments,
    })),
  };
}
