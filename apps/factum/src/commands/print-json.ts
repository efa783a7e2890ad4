import type { z } from 'zod';
import type { Terminal } from '../terminal/terminal.js';

/**
 * Prints one `--json` document on stdout, checked against its documented schema first
 * so a script never receives a shape the docs do not describe.
 */
export function printJson<S extends z.ZodType>(terminal: Terminal, schema: S, value: z.input<S>): void {
  terminal.line(JSON.stringify(schema.parse(value)));
}
