import type { ProviderConfig } from '@factum/model';
import type { ToolCatalog } from '@factum/tools';
import type { FactumRuntime } from '../factum-runtime.js';
import type { InvocationRegistry } from './invocation-registry.js';
import type { HandoffTimeouts, LiveInvocation } from './live-invocation.js';
import type { LogFollower } from './log-follower.js';
import { ServerError } from './server-error.js';
import type { SessionIndex } from './session-index.js';

/** What every route group shares: the runtime, the live runs and the log's projection. */
export type RouteContext = {
  readonly runtime: FactumRuntime;
  readonly registry: InvocationRegistry;
  readonly index: SessionIndex;
  readonly follower: LogFollower;
  readonly provider: () => ProviderConfig;
  readonly tools: () => ToolCatalog;
  readonly cwd: string;
  readonly instructions: string | undefined;
  readonly handoff: HandoffTimeouts;
  readonly closing: AbortSignal;
  /** Tools whose every call waits for a person, in every turn and continuation. */
  readonly requireApproval: readonly string[];
  /** Who decides through this server, as decisions record it (`by`). */
  readonly operator: string;
};

/**
 * The live run of `invocationId`, or the refusal that says why there is none:
 * 409 `not_running` when the log knows the invocation, 404 when it does not.
 */
export async function liveInvocation(context: RouteContext, invocationId: string): Promise<LiveInvocation> {
  const live = context.registry.get(invocationId);
  if (live !== undefined) return live;
  await context.follower.catchUp();
  const known = context.index.invocation(invocationId);
  if (known === undefined) throw new ServerError('not_found', `no invocation ${invocationId} in the log`);
  throw new ServerError(
    'not_running',
    `invocation ${invocationId} is not running on this server (it is ${known.status === 'open' ? 'unfinished' : known.status})`,
  );
}
