// A small MCP server built with the SDK's own McpServer, standing for a real API that
// deduplicates on an idempotency key: every request is appended (and fsynced) to
// `requests`, every effect — the first request of a key — to `effects`. `--extra`
// lists one more tool, for a server whose tool set changed.
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const [dir, ...flags] = process.argv.slice(2) as [string, ...string[]];
const lines = (name: string) =>
  existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean) : [];
const append = (name: string, line: string) => {
  appendFileSync(join(dir, name), `${line}\n`);
  const fd = openSync(join(dir, name), 'r');
  fsyncSync(fd);
  closeSync(fd);
};

const server = new McpServer({ name: 'keyed', version: '1.0.0' });

function charge(name: string, annotations: Record<string, boolean>, holdMs: number) {
  server.registerTool(
    name,
    { description: `${name} an amount`, inputSchema: { amount: z.number() }, annotations },
    async ({ amount }, extra) => {
      const key = String(extra._meta?.['factum/idempotency-key'] ?? '');
      const attempt = Number(extra._meta?.['factum/attempt'] ?? 0);
      append('requests', JSON.stringify({ tool: name, key, attempt }));
      const known = lines('effects').findIndex((line) => JSON.parse(line).key === key);
      const id = known >= 0 ? known + 1 : lines('effects').length + 1;
      if (known < 0 || key === '') append('effects', JSON.stringify({ tool: name, key, amount }));
      // An MCP cancellation from the client aborts extra.signal: record that it arrived.
      extra.signal.addEventListener('abort', () => append('cancellations', key), { once: true });
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      const structuredContent = { charge: id, key, attempt };
      return {
        content: [{ type: 'text' as const, text: JSON.stringify(structuredContent) }],
        structuredContent,
      };
    },
  );
}

charge('charge', { idempotentHint: true, readOnlyHint: false }, 0);
charge('slow-charge', { idempotentHint: true, readOnlyHint: false }, 5_000);
charge('slow-transfer', { readOnlyHint: false }, 5_000);
if (flags.includes('--extra')) charge('refund', { idempotentHint: true }, 0);

await server.connect(new StdioServerTransport());
