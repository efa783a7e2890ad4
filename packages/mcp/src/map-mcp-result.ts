import { contentDigest, type JsonValue, ToolError } from '@factum/agent-facts';

/** Binary content (an image, audio, a blob) as the log keeps it: what it was, not its bytes. */
export type McpBinaryReference = {
  readonly mimeType: string;
  readonly bytes: number;
  readonly digest: string;
};

/** One block of an MCP tool result, as Factum records it. */
export type McpContent =
  | { readonly type: 'text'; readonly text: string }
  | ({ readonly type: 'image' | 'audio' } & McpBinaryReference)
  | {
      readonly type: 'resource_link';
      readonly uri: string;
      readonly name: string;
      readonly mimeType?: string;
    }
  | { readonly type: 'resource'; readonly uri: string; readonly mimeType?: string; readonly text: string }
  | ({ readonly type: 'resource'; readonly uri: string } & McpBinaryReference);

/** An MCP tool result as it is recorded and shown to the model. */
export type McpToolResult = {
  readonly content: McpContent[];
  readonly structuredContent?: JsonValue;
};

type Raw = Record<string, unknown>;

const str = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);

/** The size and digest of base64 data: the log keeps these, never the data itself. */
function reference(mimeType: unknown, data: unknown): McpBinaryReference {
  const bytes = Buffer.from(str(data), 'base64');
  return {
    mimeType: str(mimeType, 'application/octet-stream'),
    bytes: bytes.length,
    digest: contentDigest(bytes),
  };
}

function block(raw: Raw): McpContent {
  switch (raw.type) {
    case 'text':
      return { type: 'text', text: str(raw.text) };
    case 'image':
    case 'audio':
      return { type: raw.type, ...reference(raw.mimeType, raw.data) };
    case 'resource_link':
      return {
        type: 'resource_link',
        uri: str(raw.uri),
        name: str(raw.name),
        ...(typeof raw.mimeType === 'string' ? { mimeType: raw.mimeType } : {}),
      };
    case 'resource': {
      const resource = (raw.resource ?? {}) as Raw;
      if (typeof resource.blob === 'string') {
        return { type: 'resource', uri: str(resource.uri), ...reference(resource.mimeType, resource.blob) };
      }
      return {
        type: 'resource',
        uri: str(resource.uri),
        text: str(resource.text),
        ...(typeof resource.mimeType === 'string' ? { mimeType: resource.mimeType } : {}),
      };
    }
    default:
      return { type: 'text', text: `[content of type ${JSON.stringify(str(raw.type, 'unknown'))} left out]` };
  }
}

/**
 * Turns what an MCP server answered into the result Factum records: text as is,
 * structured content as is, and images, audio and blobs as bounded references (MIME
 * type, size, SHA-256) instead of their base64 bytes. A result the server flagged
 * `isError` throws `ToolError('failed')` with its text, so it is settled as a failure.
 */
export function mapMcpResult(raw: unknown, tool: string): McpToolResult {
  const result = (raw ?? {}) as Raw;
  const content = Array.isArray(result.content)
    ? result.content.filter((item): item is Raw => typeof item === 'object' && item !== null).map(block)
    : [];
  if (result.isError === true) {
    const text = content
      .filter((item): item is { type: 'text'; text: string } => item.type === 'text')
      .map((item) => item.text)
      .join('\n')
      .slice(0, 2000);
    throw new ToolError('failed', `${tool}: ${text || 'the MCP server reported an error'}`);
  }
  const structured = result.structuredContent;
  return {
    content,
    ...(structured !== undefined && structured !== null
      ? { structuredContent: structured as JsonValue }
      : {}),
  };
}
