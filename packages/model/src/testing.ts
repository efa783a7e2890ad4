export type {
  RecordedRequest,
  ScriptedProviderOptions,
  ScriptedRequestBody,
  ScriptHandle,
} from './scripted-provider.js';
export { ScriptedProvider, startScriptedProvider } from './scripted-provider.js';
export { ScriptedProviderError } from './scripted-provider-error.js';
export type {
  ScriptedAnswer,
  ScriptedHttpError,
  ScriptedRaw,
  ScriptedReply,
  ScriptedTiming,
  ScriptedToolCall,
} from './scripted-reply.js';
