import type { ScriptedReply } from '@factum/model/testing';

/** The note the Direct mode turn writes and reads back. */
export const NOTE = [
  '# Factum',
  '',
  'Every tool effect runs at most once, after its dispatch is durable.',
  'A crash never turns an unknown outcome into a success.',
  '',
].join('\n');

/** The file the crashing turn writes just before its process dies. */
export const PLAN_PATH = 'plan.md';
export const PLAN = ['# Plan', '', '1. Write the plan.', '2. Survive the crash.', ''].join('\n');

/** What the user says in each turn of the story. */
export const MESSAGES = {
  direct: 'Write a short note about Factum to notes.md, then read it back to me.',
  code: 'Look around the workspace with code: what is there, and where is "at most once" mentioned?',
  crash: 'Write our plan to plan.md.',
  after: 'Is plan.md in place?',
} as const;

/** Streams a sentence word by word, the way a real model's text arrives. */
function words(text: string): string[] {
  return text.split(/(?<= )/);
}

const streamed = (text: string): ScriptedReply => ({ text: words(text), chunkDelayMs: 12 });

/** Turn 1, Direct mode: write a file, read it back, answer. */
export function directTurn(): ScriptedReply[] {
  return [
    {
      text: words('I will write the note first. '),
      chunkDelayMs: 12,
      toolCalls: [{ id: 'call-1', name: 'write_file', arguments: { path: 'notes.md', content: NOTE } }],
    },
    { toolCalls: [{ id: 'call-2', name: 'read_file', arguments: { path: 'notes.md' } }] },
    streamed(
      'notes.md is written and reads back exactly: two sentences on at-most-once effects and honest crashes.',
    ),
  ];
}

/** The code of the Code mode cell: two tool calls, each recorded as its own child call. */
export const CELL_CODE = [
  "notify('listing the workspace');",
  'const listing = await tools.list_files({});',
  "const hits = await tools.search({ query: 'at most once' });",
  "text('entries: ' + listing.entries.length + '; mentioned at ' + hits.matches.map((m) => m.path + ':' + m.line).join(', '));",
].join('\n');

/** Turn 2, Code mode: one exec cell calling two tools, then an answer. */
export function codeTurn(): ScriptedReply[] {
  return [
    { toolCalls: [{ id: 'call-1', name: 'exec', arguments: { code: CELL_CODE } }] },
    streamed(
      'The workspace holds notes.md, and it mentions "at most once" on line 3. I used one code cell; its two tool calls were recorded like direct ones.',
    ),
  ];
}

/** The crashing turn (played by the child's own provider): one write_file call. */
export function crashTurn(): ScriptedReply[] {
  return [
    {
      text: words('Writing the plan now. '),
      chunkDelayMs: 12,
      toolCalls: [{ id: 'call-1', name: 'write_file', arguments: { path: PLAN_PATH, content: PLAN } }],
    },
  ];
}

/** Turn 4, after recovery: the session goes on and sees the reconciled result. */
export function afterTurn(): ScriptedReply[] {
  return [
    { toolCalls: [{ id: 'call-1', name: 'read_file', arguments: { path: PLAN_PATH } }] },
    streamed(
      'Yes. plan.md holds the plan: the write before the crash happened, and recovery recorded it with evidence instead of running it again.',
    ),
  ];
}
