import type { Command } from 'cac';
import { type OtlpTracing, openOtlpTracing, otlpTracesUrl } from './otlp-tracing.js';

/** Adds `--otlp <url>` to a command that runs invocations. */
export function withOtlpOption(command: Command): Command {
  return command.option(
    '--otlp <url>',
    'export each invocation as an OpenTelemetry trace to this OTLP/HTTP endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT)',
  );
}

/** The exporter `--otlp` or the OpenTelemetry variables ask for, or undefined. */
export async function tracingFrom(
  options: { readonly otlp?: string },
  env: NodeJS.ProcessEnv,
): Promise<OtlpTracing | undefined> {
  const url = otlpTracesUrl(options.otlp === undefined ? undefined : String(options.otlp), env);
  return url === undefined ? undefined : openOtlpTracing(url, env);
}
