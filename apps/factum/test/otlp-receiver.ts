import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceRequest } from './otlp-protobuf.ts';

/** An OTLP attribute value as the JSON encoding carries it. */
type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

/** One span as it arrived, its attributes decoded into plain values. */
export type ReceivedSpan = {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** The span kind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Record<string, unknown>;
  readonly events: { readonly name: string; readonly attributes: Record<string, unknown> }[];
  readonly status: number | undefined;
  readonly service: unknown;
};

function decode(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(decode);
  return undefined;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, decode(value)]));
}

/**
 * A loopback OTLP/HTTP trace receiver on port 0: it accepts `POST /v1/traces` in the
 * JSON or the protobuf encoding, decodes every span it receives, and answers 200 as a
 * collector does.
 */
export async function startOtlpReceiver(): Promise<{
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly paths: string[];
  /** The content type of each request. */
  readonly contentTypes: string[];
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      paths.push(request.url ?? '');
      const type = String(request.headers['content-type']);
      contentTypes.push(type);
      const protobuf = type.includes('application/x-protobuf');
      if (!type.includes('json') && !protobuf) {
        response.writeHead(415).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = (protobuf ? decodeTraceRequest(raw) : JSON.parse(raw.toString('utf8'))) as {
        resourceSpans?: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: { spans?: Record<string, unknown>[] }[];
        }[];
      };
      for (const resource of body.resourceSpans ?? []) {
        const service = attributes(resource.resource?.attributes)['service.name'];
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId as string,
              spanId: span.spanId as string,
              parentSpanId: (span.parentSpanId as string | undefined) || undefined,
              name: span.name as string,
              kind: Number(span.kind),
              startNs: BigInt(String(span.startTimeUnixNano)),
              endNs: BigInt(String(span.endTimeUnixNano)),
              attributes: attributes(span.attributes as KeyValue[]),
              events: ((span.events as { name: string; attributes?: KeyValue[] }[]) ?? []).map((event) => ({
                name: event.name,
                attributes: attributes(event.attributes),
              })),
              status: (span.status as { code?: number } | undefined)?.code,
              service,
            });
          }
        }
      }
      // An empty ExportTraceServiceResponse, in the encoding it was asked in.
      if (protobuf) response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url: `http://127.0.0.1:${port}`, spans, paths, contentTypes, close, [Symbol.asyncDispose]: close };
}
