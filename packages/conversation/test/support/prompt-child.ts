// A process that sends one prompt through the backend and never reads its answer, to be
// SIGKILLed while the prompt runs. Arguments: server URL, session id, SQLite file.
import { OpenCodeBackend, openSqlitePromptStore } from '../../src/index.js';

const [url, sessionId, file] = process.argv.slice(2);
if (!url || !sessionId || !file) throw new Error('usage: prompt-child <url> <session> <sqlite>');
const store = await openSqlitePromptStore(file);
const backend = await OpenCodeBackend.open({ baseUrl: url, store, sessionId });
const stream = backend.prompt({ text: 'answer from a process that dies' });
process.stdout.write(`sent ${stream.messageId}\n`);
for await (const event of stream) process.stdout.write(`${event.kind}\n`);
