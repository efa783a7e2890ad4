import ora, { type Ora } from 'ora';
import pc from 'picocolors';
import { terminalSafe } from './terminal-text.js';

/** The colour functions a terminal writes with (all identity when colour is off). */
export type Colors = ReturnType<typeof pc.createColors>;

/** A line that shows work in progress and ends as one persistent line. */
export interface Spinner {
  update(text: string): void;
  succeed(text: string): void;
  fail(text: string): void;
  warn(text: string): void;
  /** Removes the spinner without leaving a line (the caller prints its own). */
  clear(): void;
}

/** Where a terminal writes and what it knows about its environment. */
export type TerminalInit = {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
};

/**
 * Whether to write ANSI colour: only to a TTY, never when `NO_COLOR` is set or the
 * terminal is dumb, always when `FORCE_COLOR` asks for it.
 */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/**
 * The one place commands write to: plain lines, colours that honour `NO_COLOR` and
 * non-TTY output, and spinners that only animate on an interactive terminal (a pipe
 * gets the final line alone, so transcripts stay readable).
 */
export class Terminal {
  readonly colors: Colors;
  /** True when stdout is an interactive terminal: spinners animate. */
  readonly interactive: boolean;
  readonly #init: TerminalInit;
  #atLineStart = true;

  constructor(init: TerminalInit) {
    this.#init = init;
    this.colors = pc.createColors(colorEnabled(init.stdout, init.env));
    // A pseudo-terminal with no width (some CI runners) would make a spinner's redraw loop forever.
    this.interactive =
      init.stdout.isTTY === true &&
      (init.stdout.columns ?? 0) > 0 &&
      init.env.TERM !== 'dumb' &&
      init.env.CI === undefined;
  }

  /** Writes text as it is (streamed model text); tracks whether a line is open. */
  write(text: string): void {
    if (text === '') return;
    this.#init.stdout.write(terminalSafe(text));
    this.#atLineStart = text.endsWith('\n');
  }

  /** Writes one line, closing any line streamed text left open. */
  line(text = ''): void {
    this.endLine();
    this.#init.stdout.write(`${terminalSafe(text)}\n`);
    this.#atLineStart = true;
  }

  /** A person's answer ended the open line (their Enter echoed a newline): nothing to close. */
  answered(): void {
    this.#atLineStart = true;
  }

  /** Ends a line streamed text left open. */
  endLine(): void {
    if (!this.#atLineStart) this.#init.stdout.write('\n');
    this.#atLineStart = true;
  }

  /** Writes one line to stderr (errors). */
  error(text: string): void {
    this.#init.stderr.write(`${terminalSafe(text)}\n`);
  }

  /** A spinner: animated on a TTY; elsewhere silent until it ends in one line. */
  spinner(text: string, indent = 0): Spinner {
    this.endLine();
    const c = this.colors;
    const pad = ' '.repeat(indent);
    if (!this.interactive) {
      return {
        update: () => {},
        succeed: (final) => this.line(`${pad}${c.green('✔')} ${final}`),
        fail: (final) => this.line(`${pad}${c.red('✖')} ${final}`),
        warn: (final) => this.line(`${pad}${c.yellow('⚠')} ${final}`),
        clear: () => {},
      };
    }
    const spinner: Ora = ora({
      text,
      indent,
      stream: this.#init.stdout as NodeJS.WriteStream,
      discardStdin: false,
      color: 'cyan',
    }).start();
    return {
      update: (next) => {
        spinner.text = next;
      },
      succeed: (final) => void spinner.stopAndPersist({ symbol: c.green('✔'), text: final }),
      fail: (final) => void spinner.stopAndPersist({ symbol: c.red('✖'), text: final }),
      warn: (final) => void spinner.stopAndPersist({ symbol: c.yellow('⚠'), text: final }),
      clear: () => {
        spinner.stop();
        // ora leaves the cursor at its indent; the next line brings its own.
        this.#init.stdout.write('\r');
      },
    };
  }
}
