import type { Invocation, InvocationConfiguration } from '@factum/agent-facts';
import type { CodeExecutor } from '@factum/code-runtime';
import type { ModelExecutor, ProviderConfig } from '@factum/model';
import type { ToolCatalog } from '@factum/tools';
import type { RunApprovals } from '../run-input.js';
import type { RecordedCalls } from './recorded-calls.js';

/** Which part of a log a replay covers. */
export type ReplayTarget =
  | { readonly kind: 'invocation'; readonly sessionId: string; readonly invocationId: string }
  | { readonly kind: 'session'; readonly sessionId: string }
  | { readonly kind: 'all' };

/**
 * What the recorded runs were given that the log does not hold: the app's agent
 * definition (the same catalog, instructions and provider settings `factum run` uses).
 */
export type ReplayAgent = {
  /** The provider the requests are digested for; in `model` mode, the one that answers. */
  readonly provider: ProviderConfig;
  readonly catalog: ToolCatalog;
  readonly instructions?: string;
  readonly providerOptions?: Readonly<Record<string, unknown>>;
  readonly mainOutputLimit?: number;
  /** Approvals the runs demanded beyond the tools' own rules. */
  readonly approvals?: RunApprovals;
};

/** What an invocation's recorded opening says about it, to choose its agent by. */
export type OpenedInvocation = {
  readonly invocation: Invocation;
  readonly configuration: InvocationConfiguration | undefined;
};

/** Options of a replay. */
export type ReplayOptions = {
  readonly target: ReplayTarget;
  /**
   * `verify`: recorded answers and results; the replay must produce the recorded facts.
   * `model`: `agent.provider` answers through `models`; recorded calls are served, others
   * are not run.
   */
  readonly mode: 'verify' | 'model';
  /**
   * The agent, or for a log whose runs were given different agents (an app's demo beside
   * its own runs), the agent of each invocation, chosen from its recorded opening.
   */
  readonly agent: ReplayAgent | ((opened: OpenedInvocation) => ReplayAgent);
  /** `model` mode: a call nothing recorded matches is answered `unavailable` (default) or stops the invocation. */
  readonly onNewCall?: 'unavailable' | 'stop';
  /**
   * `verify`: where each step's route (provider kind, base URL, model) comes from —
   * `agent` (default: `agent.provider`, so a changed route is a divergence) or `recorded`
   * (the route the recorded request names, with the rest of `agent.provider`: for a log
   * whose runs used a provider that is gone, a scripted one on a loopback port say).
   */
  readonly route?: 'agent' | 'recorded';
  /** Model steps per invocation at most (default 50, as the engine's). */
  readonly maxSteps?: number;
  /** `model` mode: times the new model's steps (milliseconds); without it no replayed latency is reported. */
  readonly now?: () => number;
  /**
   * A file the scratch facts are written to as JSON lines (`{ sequence, event }`), replaced
   * at the start: what each replayed invocation produced, to read beside the recording.
   * By default they stay in memory and go with the replay.
   */
  readonly scratchFile?: string;
  /** Bounds of what is read from the source log. */
  readonly bounds?: { readonly maxEvents: number; readonly maxBytes: number };
  readonly signal?: AbortSignal;
};

/** What replaying one invocation needs, resolved once per replay. */
export type InvocationSetup = {
  readonly mode: 'verify' | 'model';
  readonly agent: ReplayAgent;
  /** The agent's catalog with every executor serving `served.current`'s recorded outcomes. */
  readonly catalog: ToolCatalog;
  readonly served: { current: RecordedCalls | undefined };
  readonly code: CodeExecutor;
  readonly models: ModelExecutor;
  readonly maxSteps: number;
  readonly route: 'agent' | 'recorded';
  readonly onNewCall: 'unavailable' | 'stop';
  readonly now?: () => number;
  /** Reads a recorded tool result from the source log. */
  readonly readSource: (sessionId: string, eventId: string) => Promise<unknown>;
  readonly signal: AbortSignal;
};
