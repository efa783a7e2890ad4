import { describe, expect, it } from 'vitest';
import { ToolCatalog, ToolHandler } from '../src/index.ts';

describe('JSON Schema formats in tool inputs', () => {
  it('a format the schema names (uri, email, date-time) is checked, not ignored', () => {
    const catalog = new ToolCatalog([
      {
        definition: {
          name: 'fetch',
          description: 'fetch',
          inputSchema: {
            type: 'object',
            properties: {
              url: { type: 'string', format: 'uri' },
              at: { type: 'string', format: 'date-time' },
            },
            required: ['url'],
          },
        },
        handler: ToolHandler.immediate({ names: () => ['fetch'], invoke: async () => null }),
        nesting: 'nestable',
        semantics: 'parallel',
      },
    ]);
    const check = catalog.get('fetch')!.checkInput;
    expect(check({ url: 'https://example.test/a', at: '2026-12-01T05:00:00Z' })).toEqual({ ok: true });
    expect(check({ url: 'not a uri' })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/format/),
    });
    expect(check({ url: 'https://example.test', at: 'yesterday' })).toMatchObject({ ok: false });
  });
});
