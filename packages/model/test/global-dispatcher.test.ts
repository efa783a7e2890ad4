import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startScriptedProvider } from '../src/testing.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

describe("undici's global dispatcher", () => {
  it("streams through the dispatcher Node's own fetch installed when fetch ran first", async () => {
    await using provider = await startScriptedProvider({
      replies: [{ text: 'to fetch' }, { text: 'to the executor' }],
    });
    // A fresh process, so that Node's built-in undici (through fetch) makes the global
    // dispatcher before the executor's first request, as in an app that fetched first.
    const script = `
      const response = await fetch(${JSON.stringify(`${provider.baseUrl}/chat/completions`)}, { method: 'POST', body: '{}' });
      await response.text();
      const { ModelExecutor } = await import('./src/index.ts');
      const step = await new ModelExecutor({ timeoutMs: 5000, retry: { maxAttempts: 1 } })
        .stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] }, { provider: ${JSON.stringify(provider.config())} })
        .step();
      console.log(JSON.stringify(step.parts));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=@factum/source', '--import', tsx, '--input-type=module', '-e', script],
      { cwd: packageRoot },
    );
    expect(JSON.parse(stdout)).toEqual([{ kind: 'text', text: 'to the executor' }]);
    expect(provider.recorded).toHaveLength(2);
  }, 30_000);
});
