import { type Invocation, type ModelObservation, rejectionSentence } from '@factum/agent-facts';
import type { RunObserver } from '@factum/engine';
import type { EventLog, StoredEvent } from '@factum/event-log';
import { cellSource, describeCall, describeResult } from './describe-call.js';
import type { Spinner, Terminal } from './terminal.js';
import { shownStream, shownText } from './terminal-text.js';

/** Options of a run view. */
export type RunViewOptions = {
  readonly terminal: Terminal;
  readonly log: EventLog;
  readonly invocation: Invocation;
  /** Spaces before every line (the demo indents its story). */
  readonly indent?: number;
  /** Written before each block of model text, e.g. `agent ›`. */
  readonly textLabel?: string;
  readonly pollMs?: number;
  /** The server each MCP tool came from: its lines say `name [server]`. */
  readonly toolServers?: ReadonlyMap<string, string>;
};

type LiveCall = {
  readonly label: string;
  readonly name: string;
  readonly indent: number;
  readonly at: string;
};

/**
 * What a person sees of a run while it goes: model text as it streams (from the
 * engine's observer) and every tool call as the log records it — a spinner from
 * `tool_dispatched`, a line at `tool_settled` or `tool_rejected`. Tool lines come
 * from the log, not from the tools, so the screen never claims more than is durable.
 * One queue orders both sources: before a new model step's text is shown, the log is
 * read up to that point, so a tool's line always comes before the text that follows it.
 */
export class RunView {
  readonly #options: RunViewOptions;
  readonly #pad: string;
  readonly #live = new Map<string, LiveCall>();
  #after = 0;
  #step: string | undefined;
  #chain: Promise<void> = Promise.resolve();
  #polling = false;
  #timer: NodeJS.Timeout | undefined;
  #spinner: Spinner | undefined;
  #inText = false;
  #failure: unknown;

  constructor(options: RunViewOptions) {
    this.#options = options;
    this.#pad = ' '.repeat(options.indent ?? 0);
  }

  /** Hand this to `engine.start(input, { observer })`. */
  readonly observer: RunObserver = {
    onObservation: (stepId, observation) => this.#observe(stepId, observation),
  };

  /** Starts following the log. */
  start(): void {
    this.#timer = setInterval(() => this.#poll(), this.#options.pollMs ?? 50);
  }

  /** The calls dispatched and not yet settled, as they read on screen. */
  inFlight(): string[] {
    return [...this.#live.values()].filter((call) => call.label !== '').map((call) => call.label);
  }

  /** Prints a line between the run's lines (keeps the spinner below it). */
  note(text: string): void {
    this.#enqueue(async () => {
      this.#pauseSpinner();
      this.#options.terminal.line(`${this.#pad}${text}`);
      this.#resumeSpinner();
    });
  }

  /**
   * Reads the log up to now, then prints `render(inFlight())`: what is said to be in
   * flight is what the log holds at that moment, not what the last poll saw.
   */
  noteInFlight(render: (inFlight: string[]) => string): void {
    this.#enqueue(() => this.#catchUp());
    this.#enqueue(async () => {
      this.#pauseSpinner();
      this.#options.terminal.line(`${this.#pad}${render(this.inFlight())}`);
      this.#resumeSpinner();
    });
  }

  /**
   * Prints a last line at once, on its own line: the spinner is cleared and streamed text
   * ended first (for a second Ctrl-C, which exits right after).
   */
  lastWord(text: string): void {
    clearInterval(this.#timer);
    this.#pauseSpinner();
    this.#options.terminal.line(`${this.#pad}${text}`);
  }

  /** Stops following once the run has ended, after showing everything it recorded. */
  async finish(): Promise<void> {
    clearInterval(this.#timer);
    this.#enqueue(() => this.#catchUp());
    await this.#chain;
    this.#pauseSpinner();
    this.#options.terminal.endLine();
    if (this.#failure !== undefined) throw this.#failure;
  }

  #poll(): void {
    if (this.#polling) return;
    this.#polling = true;
    this.#enqueue(() => this.#catchUp().finally(() => (this.#polling = false)));
  }

  #enqueue(task: () => Promise<void>): void {
    this.#chain = this.#chain.then(task).catch((error: unknown) => {
      this.#failure ??= error;
    });
  }

  #observe(stepId: string, observation: ModelObservation): void {
    if (stepId !== this.#step) {
      this.#step = stepId;
      this.#enqueue(() => this.#catchUp());
    }
    if (observation.kind === 'tool_call_delta') return;
    const { text } = observation;
    const c = this.#options.terminal.colors;
    this.#enqueue(async () => {
      const terminal = this.#options.terminal;
      if (!this.#inText) {
        this.#pauseSpinner();
        terminal.endLine();
        terminal.write(this.#pad + (this.#options.textLabel ? `${this.#options.textLabel} ` : ''));
        this.#inText = true;
      }
      const indented = shownStream(text).replaceAll('\n', `\n${this.#pad}`);
      // A refusal is shown as the model said it, marked so it is not read as an answer.
      terminal.write(
        observation.kind === 'reasoning_delta'
          ? c.dim(indented)
          : observation.kind === 'refusal_delta'
            ? c.yellow(indented)
            : indented,
      );
    });
  }

  async #catchUp(): Promise<void> {
    const { log, invocation } = this.#options;
    for (;;) {
      const page = await log.read({
        afterSequence: this.#after,
        limit: 500,
        scope: { session: invocation.sessionId },
      });
      for (const stored of page) {
        this.#after = stored.sequence;
        if (stored.event.invocation.invocationId === invocation.invocationId) await this.#render(stored);
      }
      if (page.length < 500) return;
    }
  }

  async #render({ event }: StoredEvent): Promise<void> {
    const fact = event.fact;
    const c = this.#options.terminal.colors;
    switch (fact.kind) {
      case 'tool_dispatched': {
        const origin = fact.call.origin;
        const parent = origin.kind === 'provider' ? undefined : this.#live.get(origin.parentOperationId);
        // A cell is shown through its exec call; only its notifications and children appear.
        const server = this.#options.toolServers?.get(fact.call.name);
        const call = describeCall(fact.call.name, fact.call.input);
        const label =
          origin.kind === 'code_cell' ? '' : server === undefined ? call : `${call} ${c.dim(`[${server}]`)}`;
        const indent = origin.kind === 'provider' ? 0 : (parent?.indent ?? 0) + (label === '' ? 0 : 2);
        this.#live.set(fact.operationId, { label, name: fact.call.name, indent, at: event.timestamp });
        if (fact.call.name === 'exec' && origin.kind === 'provider') {
          // A cell's calls print before it settles: show its code first, so they read in context.
          this.#print(`${c.cyan('▸')} ${label}`, indent);
          for (const line of cellSource(fact.call.input)) this.#print(c.dim(`│ ${line}`), indent + 2);
          return;
        }
        this.#endText();
        this.#resumeSpinner();
        return;
      }
      case 'tool_notified': {
        const call = this.#live.get(fact.operationId);
        this.#print(`${c.dim('·')} ${c.dim(shownText(fact.message))}`, (call?.indent ?? 0) + 2);
        return;
      }
      case 'tool_settled': {
        const call = this.#live.get(fact.operationId);
        this.#live.delete(fact.operationId);
        if (call === undefined || call.label === '') return;
        const took = c.dim(`· ${elapsed(call.at, event.timestamp)}`);
        if (fact.outcome.kind === 'succeeded') {
          const value = (
            await this.#options.log.resolveToolResult(event.invocation.sessionId, event.id)
          ).json();
          // A call that stopped because the run was cancelled succeeded at stopping, not at its work.
          const stopped =
            typeof value === 'object' && value !== null && 'cancelled' in value && value.cancelled === true;
          this.#print(
            `${stopped ? c.yellow('■') : c.green('✔')} ${call.label} ${c.dim('—')} ${describeResult(call.name, value)} ${took}`,
            call.indent,
          );
        } else {
          this.#print(
            `${c.red('✖')} ${call.label} ${c.dim('—')} ${c.red(shownText(fact.outcome.error.message))} ${took}`,
            call.indent,
          );
        }
        return;
      }
      case 'tool_rejected': {
        const server = this.#options.toolServers?.get(fact.name);
        const label = `${describeCall(fact.name, fact.input)}${server === undefined ? '' : ` ${c.dim(`[${shownText(server)}]`)}`}`;
        this.#print(
          `${c.yellow('⊘')} ${label} ${c.dim('—')} ${c.yellow(shownText(rejectionSentence(fact.reason)))}`,
          0,
        );
        return;
      }
      case 'approval_requested': {
        this.#print(
          `${c.yellow('⏸')} ${describeCall(fact.call.name, fact.call.input)} ${c.dim('—')} ${c.yellow('waits for a person’s approval')}`,
          0,
        );
        return;
      }
      default:
        return;
    }
  }

  #endText(): void {
    if (!this.#inText) return;
    this.#inText = false;
    this.#options.terminal.endLine();
  }

  #print(text: string, indent: number): void {
    this.#endText();
    this.#pauseSpinner();
    this.#options.terminal.line(`${this.#pad}${' '.repeat(indent)}${text}`);
    this.#resumeSpinner();
  }

  #pauseSpinner(): void {
    this.#spinner?.clear();
    this.#spinner = undefined;
  }

  #resumeSpinner(): void {
    this.#pauseSpinner();
    const latest = [...this.#live.values()].filter((call) => call.label !== '').at(-1);
    if (latest === undefined || !this.#options.terminal.interactive) return;
    this.#spinner = this.#options.terminal.spinner(latest.label, this.#pad.length + latest.indent);
  }
}

function elapsed(from: string, to: string): string {
  const ms = Math.max(0, Date.parse(to) - Date.parse(from));
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
