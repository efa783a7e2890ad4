import type { Terminal } from '../terminal/terminal.js';

/** The voice of the demo: numbered chapters, short explanations, facts in colour. */
export class Narrator {
  readonly #terminal: Terminal;
  #chapter = 0;

  constructor(terminal: Terminal) {
    this.#terminal = terminal;
  }

  /** A new chapter: a blank line, its number and title. */
  chapter(title: string): void {
    this.#chapter += 1;
    const c = this.#terminal.colors;
    this.#terminal.line();
    this.#terminal.line(`${c.bold(c.magenta(`${this.#chapter}.`))} ${c.bold(title)}`);
  }

  /** An explanation, dimmed, under the chapter. */
  say(text: string): void {
    this.#terminal.line(`   ${this.#terminal.colors.dim(text)}`);
  }

  /** What the user says. */
  user(text: string): void {
    const c = this.#terminal.colors;
    this.#terminal.line(`    ${c.bold(c.blue('you ›'))} ${text}`);
  }

  /** A plain line of the story, indented. */
  point(text: string): void {
    this.#terminal.line(`    ${text}`);
  }

  /** A label and a value, aligned. */
  field(label: string, value: string): void {
    this.#terminal.line(`    ${this.#terminal.colors.dim(label.padEnd(10))} ${value}`);
  }
}
