export type { FakeOpenCodeServerOptions, FakeOpenCodeStats, FakePromptMode } from './fake-opencode-server.js';
export { FakeOpenCodeServer } from './fake-opencode-server.js';
