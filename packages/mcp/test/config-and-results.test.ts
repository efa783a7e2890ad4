import { ToolError } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { McpError, mapMcpResult, mcpCommand, mcpServerLabel, parseMcpServerConfig } from '../src/index.ts';

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return McpError.isInstance(error) ? [error.code, error.message] : error;
  }
  return 'no error';
};

describe('server configuration', () => {
  it('a command line is split like a shell would, never run through one; operators are refused', () => {
    expect(mcpCommand(`npx -y '@scope/server x' "--root=/a b"`)).toMatchObject({
      kind: 'stdio',
      command: 'npx',
      args: ['-y', '@scope/server x', '--root=/a b'],
    });
    expect(refusal(() => mcpCommand('server; rm -rf /'))).toEqual([
      'invalid_config',
      expect.stringMatching(/operator/),
    ]);
    expect(refusal(() => mcpCommand('server | tee log'))).toEqual(['invalid_config', expect.any(String)]);
    expect(refusal(() => mcpCommand('   '))).toEqual(['invalid_config', 'the MCP command is empty']);
  });

  it('a malformed configuration is a typed error naming the field', () => {
    expect(refusal(() => parseMcpServerConfig({ kind: 'http', url: 'file:///etc/passwd' }))).toEqual([
      'invalid_config',
      expect.stringMatching(/at url/),
    ]);
    expect(refusal(() => parseMcpServerConfig({ kind: 'stdio', command: 'x', shell: true }))).toEqual([
      'invalid_config',
      expect.any(String),
    ]);
    expect(
      refusal(() => parseMcpServerConfig({ kind: 'stdio', command: 'x', recovery: { t: 'always' } })),
    ).toEqual(['invalid_config', expect.stringMatching(/recovery/)]);
  });

  it('a server is labelled by its program or its URL host and path, never by its credentials', () => {
    expect(mcpServerLabel(mcpCommand('npx -y @modelcontextprotocol/server-everything'))).toBe('everything');
    expect(mcpServerLabel(mcpCommand('node /x/node_modules/@m/server-filesystem/dist/index.js /tmp'))).toBe(
      'filesystem',
    );
    expect(
      mcpServerLabel(parseMcpServerConfig({ kind: 'http', url: 'https://user:pw@example.test/mcp?token=t' })),
    ).toBe('example.test/mcp');
  });
});

describe('results', () => {
  it('binary content is kept as a bounded reference, unknown blocks as a note, isError as a failure', () => {
    const png = Buffer.alloc(4096, 1).toString('base64');
    const mapped = mapMcpResult(
      {
        content: [
          { type: 'image', data: png, mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///a', blob: png } },
          { type: 'hologram' },
          'garbage',
        ],
      },
      't',
    );
    expect(mapped.content).toEqual([
      { type: 'image', mimeType: 'image/png', bytes: 4096, digest: expect.stringMatching(/^sha256:/) },
      {
        type: 'resource',
        uri: 'file:///a',
        mimeType: 'application/octet-stream',
        bytes: 4096,
        digest: expect.any(String),
      },
      { type: 'text', text: '[content of type "hologram" left out]' },
    ]);
    expect(JSON.stringify(mapped)).not.toContain(png.slice(0, 32));
    let error: unknown;
    try {
      mapMcpResult({ isError: true, content: [{ type: 'text', text: 'no such file' }] }, 'read');
    } catch (caught) {
      error = caught;
    }
    expect(ToolError.isInstance(error) && [error.code, error.message]).toEqual([
      'failed',
      'read: no such file',
    ]);
  });
});
