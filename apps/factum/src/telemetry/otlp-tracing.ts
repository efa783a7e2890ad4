import type { Invocation } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { isHttpUrl } from '../commands/check-flags.js';
import { CliError } from '../commands/cli-error.js';

const bounds = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

/**
 * Where traces go: `--otlp <url>`, else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` — the variables every OpenTelemetry SDK reads. A base
 * URL (the flag or the general variable) gets `/v1/traces` appended, as the OTLP/HTTP
 * specification says; undefined when none is set.
 */
export function otlpTracesUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag !== undefined) return tracesPath(checked(flag, '--otlp'));
  const full = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (full) return checked(full, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (base) return tracesPath(checked(base, 'OTEL_EXPORTER_OTLP_ENDPOINT'));
  return undefined;
}

/** How traces travel: OTLP over HTTP, as JSON or as protobuf. */
export type OtlpProtocol = 'http/json' | 'http/protobuf';

/**
 * The protocol `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`,
 * asks for (default `http/json`). `grpc` and anything else is a usage error: only the
 * two HTTP encodings are exported.
 */
export function otlpProtocol(env: NodeJS.ProcessEnv): OtlpProtocol {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = env[name];
  if (value === undefined || value === '' || value === 'http/json') return 'http/json';
  if (value === 'http/protobuf') return 'http/protobuf';
  throw new CliError('usage', `${name} must be http/protobuf or http/json (grpc is not supported)`);
}

function checked(url: string, name: string): string {
  if (!isHttpUrl(url)) throw new CliError('usage', `${name} must be an http:// or https:// URL`);
  return url;
}

function tracesPath(url: string): string {
  return /\/v1\/traces\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/v1/traces`;
}

/** Exports invocations as traces over OTLP/HTTP. */
export type OtlpTracing = {
  /** Exports an invocation's facts (those after `afterSequence`, if given) as spans. */
  exportInvocation(
    log: EventLog,
    invocation: Invocation,
    options?: { afterSequence?: number },
  ): Promise<void>;
  /** Sends what is pending and stops; waits at most a few seconds for the collector. */
  shutdown(): Promise<void>;
};

/**
 * Opens an OTLP/HTTP exporter to `url` (headers from `OTEL_EXPORTER_OTLP_HEADERS`, as
 * the SDK reads them), in the JSON or protobuf encoding `otlpProtocol` chose. The
 * OpenTelemetry packages load only here, so commands without `--otlp` do not pay for
 * them at start-up.
 */
export async function openOtlpTracing(url: string, env: NodeJS.ProcessEnv): Promise<OtlpTracing> {
  const protocol = otlpProtocol(env);
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    ids,
    trace,
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    protocol === 'http/protobuf'
      ? import('@opentelemetry/exporter-trace-otlp-proto')
      : import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('./fact-ids.js'),
    import('./invocation-trace.js'),
  ]);
  const idGenerator = new ids.FactIdGenerator();
  const provider = new BasicTracerProvider({
    idGenerator,
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'factum' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url, timeoutMillis: 5_000 }))],
  });
  const tracer = provider.getTracer('factum');
  let chain: Promise<void> = Promise.resolve();
  return {
    exportInvocation(log, invocation, options = {}) {
      // One at a time: the id generator hands ids to the span being started.
      chain = chain.then(async () => {
        const events = await log.invocationEvents(invocation, bounds);
        trace.traceInvocation({
          tracer,
          ids: idGenerator,
          events,
          ...(options.afterSequence === undefined ? {} : { afterSequence: options.afterSequence }),
        });
      });
      return chain;
    },
    async shutdown() {
      await chain.catch(() => undefined);
      await provider.forceFlush();
      await provider.shutdown();
    },
  };
}
