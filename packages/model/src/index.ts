export { anthropicVersion } from './anthropic-messages-adapter.js';
export { defaultAnthropicMaxTokens } from './map-anthropic-request.js';
export type { ModelClock } from './model-clock.js';
export { systemClock } from './model-clock.js';
export type { ModelErrorCode, ModelErrorDetails, ModelErrorPhase, ProtocolIssue } from './model-error.js';
export { ModelError } from './model-error.js';
export type { ModelExecutorOptions, ModelStreamOptions } from './model-executor.js';
export { ModelExecutor } from './model-executor.js';
export type { ModelMessage, ModelRequest, ModelToolOutcome, ModelToolSpec } from './model-request.js';
export type { ModelStream } from './model-stream.js';
export type {
  ProviderAuth,
  ProviderCapabilities,
  ProviderConfig,
  ProviderKind,
  ProviderNetwork,
} from './provider-config.js';
export { routeIdentity } from './provider-config.js';
export { RequestDigester } from './request-digester.js';
export type { RetryOptions } from './retry-policy.js';
export { requestDigest, wireBody } from './wire-request.js';
