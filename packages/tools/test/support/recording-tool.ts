import type { ToolExecutor } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { ToolCatalog, ToolHandler } from '../../src/index.ts';

/** A tool that records when it ran, what the log held then, and can be held open. */
export class RecordingTool implements ToolExecutor {
  readonly calls: { input: unknown; lastDurableKind: string | undefined }[] = [];
  running = 0;
  maxRunning = 0;
  readonly #log: EventLog;
  readonly #name: string;
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;

  constructor(log: EventLog, name: string) {
    this.#log = log;
    this.#name = name;
  }

  names(): string[] {
    return [this.#name];
  }

  /** Holds every call until `release()`. */
  hold(): void {
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  release(): void {
    this.#open?.();
  }

  async invoke(_name: string, input: unknown): Promise<unknown> {
    const last = (await this.#log.prefix({ maxEvents: 10_000, maxBytes: 1 << 24 })).events.at(-1)?.event.fact;
    this.calls.push({ input, lastDurableKind: last?.kind });
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      await this.#gate;
      if ((input as { fail?: boolean } | null)?.fail) throw new Error('the tool was asked to fail');
      return { echoed: input };
    } finally {
      this.running -= 1;
    }
  }
}

/** A catalog of one nestable, parallel tool that records every input its effect receives. */
export function recordingCatalog(name: string): { catalog: ToolCatalog; received: unknown[] } {
  const received: unknown[] = [];
  const catalog = new ToolCatalog([
    {
      definition: { name, description: name, inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({
        names: () => [name],
        invoke: async (_name, value) => {
          received.push(value);
          return { ok: true };
        },
      }),
      nesting: 'nestable',
      semantics: 'parallel',
    },
  ]);
  return { catalog, received };
}
