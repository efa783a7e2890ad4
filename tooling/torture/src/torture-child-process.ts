import { type ChildProcess, spawn } from 'node:child_process';
import type { LogTarget } from '@factum/event-log';
import type { KillPlan } from './child/kill-switch.js';

/** What the driver sends a child: where its log and ledger are, and where it dies. */
export type ChildConfig = {
  readonly log: LogTarget;
  readonly ledger: string;
  readonly generation: number;
  readonly seed: number;
  readonly plan: KillPlan;
  readonly sessions: readonly { readonly id: string; readonly port: number }[];
  /** One host of several on one log: its own lease, a sweeper, and a graceful stop. */
  readonly host?: {
    readonly id: string;
    readonly ttlMs: number;
    readonly sweepEveryMs: number;
    /** Partition mode: say when a T1's commit is about to go, and wait a moment. */
    readonly partition?: boolean;
  };
};

/** How a child ended: the signal that killed it, its exit code, what it said on stderr. */
export type ChildExit = {
  readonly signal: NodeJS.Signals | null;
  readonly code: number | null;
  readonly stderr: string;
};

/**
 * A torture child started ahead of its turn: plain `node` on the bundle of the child and
 * the built packages (`bundleChild`), waiting on stdin for its configuration while it
 * loads. Started early, its loading overlaps the previous child's run and the checks
 * after it.
 */
export class TortureChildProcess {
  readonly #child: ChildProcess;
  readonly #exit: Promise<ChildExit>;
  #onOpening: (() => void) | undefined;
  #onPaused: (() => void) | undefined;
  /** Callbacks for the signal lines a host says on stderr (`{"<name>":true}`). */
  readonly #signals = new Map<string, () => void>();
  /** The end of stderr not yet ended by a newline. */
  #partial = '';

  /** @param entry the bundled child script */
  constructor(entry: string) {
    this.#child = spawn(process.execPath, [entry], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    this.#child.stderr?.setEncoding('utf8');
    this.#child.stderr?.on('data', (text: string) => {
      if (stderr.length < 512 * 1024) stderr += text;
      if (this.#signals.size > 0) {
        const lines = (this.#partial + text).split('\n');
        this.#partial = lines.pop() ?? '';
        for (const line of lines) this.#signals.get(line)?.();
      }
      if (this.#onOpening !== undefined && stderr.includes('{"opening":true}')) {
        const opening = this.#onOpening;
        this.#onOpening = undefined;
        opening();
      }
      if (this.#onPaused !== undefined && stderr.includes('{"paused":true')) {
        const paused = this.#onPaused;
        this.#onPaused = undefined;
        paused();
      }
    });
    this.#exit = new Promise((resolve, reject) => {
      this.#child.once('error', reject);
      this.#child.once('close', (code, signal) => resolve({ code, signal, stderr }));
    });
    // A child killed before it read its configuration makes stdin fail: that is its exit.
    this.#child.stdin?.on('error', () => {});
  }

  /**
   * Sends the configuration and waits until the child is gone. An `open` plan's kill is
   * the driver's: `delayMs` after the child says it is opening its log.
   */
  run(config: ChildConfig): Promise<ChildExit> {
    const point = config.plan.point;
    if (point.kind === 'open') {
      this.#onOpening = () => setTimeout(() => this.#child.kill('SIGKILL'), point.delayMs);
    }
    const line = `${JSON.stringify(config)}\n`;
    // A host of several keeps its stdin open: its end is the request to stop.
    if (config.host === undefined) this.#child.stdin?.end(line);
    else this.#child.stdin?.write(line);
    return this.#exit;
  }

  /** Calls `then` once the child says it stopped itself (SIGSTOP) mid-effect. */
  onPaused(then: () => void): void {
    this.#onPaused = then;
  }

  /**
   * Calls `then` each time the child says `{"<name>":true}` on a line of its own: a host
   * in partition mode says `hosting` once its lease is held, and `t1batch` when a commit
   * carrying a T1 is about to go.
   */
  onSignal(name: 'hosting' | 't1batch', then: () => void): void {
    this.#signals.set(JSON.stringify({ [name]: true }), then);
  }

  /** Resumes a child that stopped itself. */
  resume(): void {
    this.#child.kill('SIGCONT');
  }

  /** Asks a host to stop starting turns, finish its runs and exit 0. */
  stop(): void {
    this.#child.stdin?.end();
  }

  /** Kills the child now (a survivor that would not stop). */
  kill(): void {
    this.#child.kill('SIGKILL');
  }

  /** Stops a child that was never given work (by its own pid). */
  async discard(): Promise<void> {
    this.#child.kill('SIGKILL');
    await this.#exit.catch(() => undefined);
  }
}
