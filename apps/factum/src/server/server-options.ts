import type { ProviderConfig } from '@factum/model';
import type { ToolCatalog } from '@factum/tools';
import type { FactumRuntime } from '../factum-runtime.js';
import type { InvocationRegistry } from './invocation-registry.js';
import type { HandoffTimeouts } from './live-invocation.js';
import type { ServerToken } from './server-token.js';

/** Where the server reports failures it answered with a 500: names and codes only, never messages. */
export type ServerLogger = { readonly error: (line: string) => void };

/** Options of `createServer`. */
export type ServerOptions = {
  readonly runtime: FactumRuntime;
  /** The bearer token (plain, e.g. in tests) or a verifier of its stored digest. */
  readonly token: string | ServerToken;
  /** The model provider of new turns; a function is asked again for every turn. */
  readonly provider?: ProviderConfig | (() => ProviderConfig);
  /** The tools of new turns (default: none). */
  readonly tools?: ToolCatalog | (() => ToolCatalog);
  /** Request bodies past this many bytes are refused with 413 (default 256 KiB). */
  readonly maxBodyBytes?: number;
  /** The working directory recorded in each turn's configuration (default `process.cwd()`). */
  readonly cwd?: string;
  /** A system prompt for every turn (kept out of the log's facts). */
  readonly instructions?: string;
  /** How long a handoff may wait for a safe point and be held (default 30 s and 60 s). */
  readonly handoff?: Partial<HandoffTimeouts>;
  /** How often live streams poll the log for new facts (default 150 ms). */
  readonly pollIntervalMs?: number;
  /** The runs this server starts; pass one to cancel or await them from outside. */
  readonly registry?: InvocationRegistry;
  /** Aborting it closes the server: live streams end, held handoffs are released, no new turn starts. */
  readonly signal?: AbortSignal;
  readonly logger?: ServerLogger;
  /** Tools whose every call waits for a person's approval (default: only the tools' own rules). */
  readonly requireApproval?: readonly string[];
  /** Who decides through this server, as approvals and resolutions record it (default `web`). */
  readonly operator?: string;
};

/** The defaults of the optional limits. */
export const SERVER_DEFAULTS = {
  maxBodyBytes: 256 * 1024,
  handoff: { readyMs: 30_000, holdMs: 60_000 },
  pollIntervalMs: 150,
} as const;
