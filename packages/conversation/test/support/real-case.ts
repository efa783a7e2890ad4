import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ScriptedProvider, startScriptedProvider } from '@factum/model/testing';
import {
  type ConversationTimeouts,
  OpenCodeBackend,
  openSqlitePromptStore,
  type PromptRecord,
  type PromptStore,
  parsePromptRecord,
  promptKey,
} from '../../src/index.js';
import { RealOpenCode } from './real-opencode.js';

const child = fileURLToPath(new URL('./prompt-child.ts', import.meta.url));

/** Generous budgets: the real server's first prompt takes seconds on two busy cores. */
export const realTimeouts: Partial<ConversationTimeouts> = {
  promptMs: 60_000,
  abortMs: 30_000,
  requestMs: 20_000,
  settleMs: 2_000,
};

/** A real server, its scripted model, and a SQLite store per conversation, in one temp directory. */
export class RealCase implements AsyncDisposable {
  /** The default model. */
  readonly provider: ScriptedProvider;
  /** A model that only answers 503 (`{ providerID: 'failing', modelID: 'test' }`). */
  readonly failing: ScriptedProvider;
  readonly server: RealOpenCode;
  readonly #dir: string;
  readonly #stores: PromptStore[] = [];
  readonly #backends: OpenCodeBackend[] = [];
  readonly #children: ChildProcess[] = [];

  private constructor(
    providers: { provider: ScriptedProvider; failing: ScriptedProvider },
    server: RealOpenCode,
    dir: string,
  ) {
    this.provider = providers.provider;
    this.failing = providers.failing;
    this.server = server;
    this.#dir = dir;
  }

  static async start(): Promise<RealCase> {
    const provider = await startScriptedProvider();
    const failing = await startScriptedProvider();
    try {
      const server = await RealOpenCode.start({ scripted: provider, failing });
      return new RealCase({ provider, failing }, server, mkdtempSync(join(tmpdir(), 'factum-real-case-')));
    } catch (error) {
      await provider.close();
      await failing.close();
      throw error;
    }
  }

  /** A fresh fsynced SQLite store in the case's directory. */
  async store(name = `prompts-${this.#stores.length}.sqlite`): Promise<{ store: PromptStore; file: string }> {
    const file = join(this.#dir, name);
    const store = await openSqlitePromptStore(file);
    this.#stores.push(store);
    return { store, file };
  }

  /** A backend on its own new session (or `sessionId`), closed with the case. */
  async backend(store: PromptStore, sessionId?: string): Promise<OpenCodeBackend> {
    const backend = await OpenCodeBackend.open({
      baseUrl: this.server.url,
      store,
      timeouts: realTimeouts,
      ...(sessionId ? { sessionId } : {}),
    });
    this.#backends.push(backend);
    return backend;
  }

  /** Runs the prompt child on `sessionId` and `file`; resolves with it once it has sent its message. */
  async promptChild(sessionId: string, file: string): Promise<{ process: ChildProcess; messageId: string }> {
    const process = spawn(
      'node',
      ['--conditions=@factum/source', '--import', 'tsx', child, this.server.url, sessionId, file],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    this.#children.push(process);
    const messageId = await new Promise<string>((resolve, reject) => {
      let text = '';
      process.stdout?.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const sent = /^sent (\S+)$/m.exec(text);
        if (sent?.[1]) resolve(sent[1]);
      });
      process.once('exit', (code) => reject(new Error(`the prompt child exited (${code}) before sending`)));
    });
    return { process, messageId };
  }

  /** SIGKILLs a child and waits until it is gone. */
  static async kill(process: ChildProcess): Promise<void> {
    if (process.exitCode !== null || process.signalCode !== null) return;
    const gone = new Promise((resolve) => process.once('exit', resolve));
    process.kill('SIGKILL');
    await gone;
  }

  /** The prompt record of `sessionId` in `store`, if any. */
  static async record(store: PromptStore, sessionId: string): Promise<PromptRecord | undefined> {
    const tx = await store.begin({ purpose: 'abort_activation' });
    try {
      const value = await tx.read(promptKey(sessionId));
      return value === undefined ? undefined : parsePromptRecord(value);
    } finally {
      await tx.rollback();
    }
  }

  /** The session's messages as the server lists them. */
  async messages(
    sessionId: string,
  ): Promise<Array<{ info: { id: string; role: string; parentID?: string } }>> {
    const response = await fetch(`${this.server.url}/session/${sessionId}/message`);
    return (await response.json()) as Array<{ info: { id: string; role: string; parentID?: string } }>;
  }

  async close(): Promise<void> {
    for (const process of this.#children) await RealCase.kill(process);
    for (const backend of this.#backends) await backend.close();
    for (const store of this.#stores) await store.close();
    await this.server.close();
    await this.provider.close();
    await this.failing.close();
    rmSync(this.#dir, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
