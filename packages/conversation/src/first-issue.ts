import type { z } from 'zod';

/** Where a parse failed (`$`, `$.phase.outcome.text`, `$.parts[2]`) and why. */
export type ParseIssue = { readonly path: string; readonly message: string };

/**
 * The first issue of a failed parse. One named field is what a reader needs to fix the
 * sender; the complete list stays on the `ZodError`, kept as the thrown error's cause.
 * `under` is where the parsed value sits in its document, when only a part was parsed.
 */
export function firstIssue(error: z.ZodError, under: readonly PropertyKey[] = []): ParseIssue {
  const issue = error.issues[0];
  const path = [...under, ...(issue?.path ?? [])];
  return { path: `$${path.map(segment).join('')}`, message: issue?.message ?? error.message };
}

function segment(key: PropertyKey): string {
  if (typeof key === 'number') return `[${key}]`;
  if (typeof key === 'symbol') return `[${String(key)}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
