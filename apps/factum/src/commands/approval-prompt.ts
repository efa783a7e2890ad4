import { createInterface } from 'node:readline/promises';
import type { Terminal } from '../terminal/terminal.js';

/** Where a question is asked: the person's input, and the terminal the question is printed on. */
export type PromptTarget = {
  readonly stdin: NodeJS.ReadableStream;
  readonly terminal: Terminal;
};

/**
 * Asks `question` and waits for one line: true only for `y` or `yes` (any case), so a
 * bare Enter, anything else or the end of the input is a no. The question goes through
 * the terminal (sanitised); the answer is read with readline from `stdin`, which is left
 * open and paused for the next question.
 */
export async function askYesNo(target: PromptTarget, question: string): Promise<boolean> {
  target.terminal.endLine();
  target.terminal.write(question);
  const lines = createInterface({ input: target.stdin, terminal: false });
  try {
    const answer = await new Promise<string | undefined>((resolve) => {
      lines.once('line', resolve);
      lines.once('close', () => resolve(undefined));
    });
    target.terminal.answered();
    return answer !== undefined && /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    lines.close();
    // readline resumed the stream; pause it so an idle stdin does not hold the process.
    target.stdin.pause();
  }
}
