import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Fact, ToolExecutor } from '@factum/agent-facts';
import type { StoredEvent } from '@factum/event-log';
import { type ScriptedProvider, startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import { FactumRuntime } from '../src/factum-runtime.ts';
import type { HandoffTimeouts } from '../src/server/live-invocation.ts';
import { type RunningServer, startServer } from '../src/server/start-server.ts';

export const TOKEN = 'test-token-0123456789abcdef';
export const SECRET = 'sk-do-not-leak-this-provider-key';
const bounds = { maxEvents: 100_000, maxBytes: 64 * 1024 * 1024 };

/** An echo tool whose effect can be held open until the test lets it finish. */
export class EchoEffect implements ToolExecutor {
  readonly started: string[] = [];
  #gate: Promise<void> = Promise.resolve();
  #open: () => void = () => undefined;

  /** From now on each effect waits for `release()`. */
  hold(): void {
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  release(): void {
    this.#open();
  }

  names(): string[] {
    return ['echo'];
  }

  async invoke(_name: string, input: unknown): Promise<unknown> {
    this.started.push(JSON.stringify(input));
    await this.#gate;
    return { echoed: input };
  }
}

/** A loopback server over a fresh SQLite log, a scripted provider and an echo tool. */
export type Harness = AsyncDisposable & {
  readonly dir: string;
  readonly provider: ScriptedProvider;
  readonly runtime: FactumRuntime;
  readonly server: RunningServer;
  readonly effect: EchoEffect;
  api(path: string, init?: RequestInit & { json?: unknown; token?: string | null }): Promise<Response>;
  digest(): Promise<string>;
  events(): Promise<StoredEvent[]>;
  waitForFact(predicate: (fact: Fact) => boolean): Promise<StoredEvent>;
};

export async function startHarness(
  options: {
    maxBodyBytes?: number;
    handoff?: Partial<HandoffTimeouts>;
    withProvider?: boolean;
    requireApproval?: readonly string[];
  } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'factum-server-'));
  const provider = await startScriptedProvider();
  const runtime = await FactumRuntime.open({
    target: { dataDir: dir },
    modelTimeoutMs: 10_000,
    // As `factum serve` does: viewers follow model steps in the log as they happen.
    engine: { liveModelFacts: true },
  });
  const effect = new EchoEffect();
  const tools = new ToolCatalog([
    {
      definition: { name: 'echo', description: 'echo the input', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(effect),
      nesting: 'nestable',
      semantics: 'parallel',
    },
  ]);
  const server = await startServer({
    runtime,
    token: TOKEN,
    ...(options.withProvider === false ? {} : { provider: provider.config({ auth: { apiKey: SECRET } }) }),
    tools,
    cwd: '/workspace',
    pollIntervalMs: 50,
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
    ...(options.handoff === undefined ? {} : { handoff: options.handoff }),
    ...(options.requireApproval === undefined ? {} : { requireApproval: options.requireApproval }),
  });
  const events = async () => (await runtime.log.prefix(bounds)).events.slice();
  return {
    dir,
    provider,
    runtime,
    server,
    effect,
    api(path, init = {}) {
      const { json, token, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token !== null) headers.set('authorization', `Bearer ${token ?? TOKEN}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${server.url}${path}`, {
        ...rest,
        headers,
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    },
    digest: async () => (await runtime.log.prefix(bounds)).digest,
    events,
    async waitForFact(predicate) {
      for (let attempt = 0; attempt < 400; attempt += 1) {
        const found = (await events()).find((stored) => predicate(stored.event.fact));
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('the fact never appeared in the log');
    },
    async [Symbol.asyncDispose]() {
      effect.release();
      await server.close();
      server.registry.cancelAll();
      await provider.close();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The kinds of facts, in order. */
export function kinds(events: readonly StoredEvent[]): string[] {
  return events.map((stored) => stored.event.fact.kind);
}

/** A reply that calls echo with `value`; `hold` keeps the reply back until released. */
export function echoCall(id: string, value: number, hold = false) {
  return {
    toolCalls: [{ id, name: 'echo', arguments: { value } }],
    finishReason: 'tool_calls',
    hold,
  } as const;
}

/** The `error.code` of a refusal's body. */
export async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}
