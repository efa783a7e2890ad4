import { join } from 'node:path';
import { FactumError } from '@factum/agent-facts';
import type { ProviderConfig } from '@factum/model';
import type { CAC } from 'cac';
import { prepareDataDirectory } from '../data-directory.js';
import type { RuntimeTarget } from '../factum-runtime.js';
import { tracingFrom, withOtlpOption } from '../telemetry/tracing-option.js';
import { type ApprovalFlags, requiredApprovals, withApprovalOptions } from './approval-options.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { CliError } from './cli-error.js';
import { openRuntime } from './open-runtime.js';
import { type ProviderOptions, providerFrom, withProviderOptions } from './provider-options.js';
import { instructionsFor } from './run.js';
import { type ShellFlags, shellIsolation, toolSetup, withShellOptions } from './tool-setup.js';

/** The port `factum serve` listens on unless `--port` says otherwise. */
export const DEFAULT_PORT = 4317;

type ServeOptions = GlobalOptions &
  ProviderOptions &
  ShellFlags &
  ApprovalFlags & {
    readonly port?: string | number;
    readonly host?: string;
    readonly postgres?: string;
    readonly token?: string;
    readonly otlp?: string;
  };

/**
 * `factum serve`: the HTTP API and the live web timeline over the data directory's
 * log (or PostgreSQL). Prints the URL, and the token on first start only; serves until
 * SIGINT or SIGTERM, then cancels live runs, waits for their effects to settle and
 * closes the log. A second signal stops at once (the next start recovers).
 */
export function registerServe(cli: CAC, context: CliContext): void {
  withApprovalOptions(
    withOtlpOption(
      withShellOptions(
        withProviderOptions(
          cli
            .command('serve', 'Serve the HTTP API and the live web timeline')
            .option('--port <port>', `port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)`)
            .option('--host <address>', 'address to listen on (default 127.0.0.1: this machine only)')
            .option('--postgres <url>', 'keep the log in PostgreSQL instead of <dir>/events.sqlite')
            .option(
              '--token <token>',
              'the API token (or FACTUM_TOKEN); made and printed on first start if absent',
            )
            .option(
              '--allow-shell',
              'also offer turns a shell tool (commands run in a sandbox in the workspace)',
            ),
        ),
      ),
    ),
  )
    .example('factum serve --port 0 --base-url http://localhost:11434/v1 --model qwen3')
    .action((options: ServeOptions) => serve(options, context));
}

async function serve(options: ServeOptions, context: CliContext): Promise<number> {
  // The server's modules load when it starts, not with every command.
  const [{ InvocationRegistry }, { ServerToken, TOKEN_FILE }, { startServer }] = await Promise.all([
    import('../server/invocation-registry.js'),
    import('../server/server-token.js'),
    import('../server/start-server.js'),
  ]);
  const { terminal } = context;
  const c = terminal.colors;
  const shell = await shellIsolation(options, context.env);
  const dataDir = dataDirOf(options, context);
  const port = portOf(options.port);
  const requireApproval = requiredApprovals(options, dataDir, context);
  const hostname = options.host === undefined ? '127.0.0.1' : String(options.host);
  // Private, and ignored by git, before the token is written into it.
  prepareDataDirectory(dataDir, { log: options.postgres === undefined });
  const opened = ServerToken.open({ dataDir, ...tokenOption(options, context) });
  const provider = providerOrNotice(options, dataDir, context);
  const { workspace, catalog, processes } = await toolSetup(options, context, { dataDir, shell });
  const tracing = await tracingFrom(options, context.env);
  const target: RuntimeTarget =
    options.postgres === undefined ? { dataDir } : { postgres: String(options.postgres) };
  // The web timeline follows the log: a server records each model step as it happens
  // (without waiting for it) so that viewers see a request while its answer streams.
  const runtime = await openRuntime({ target, engine: { liveModelFacts: true } });
  // A server is a host from its start: it recovers what dead hosts left and sweeps for
  // them from then on; other live processes' runs (a CLI, another server) are left alone.
  await runtime.engine.recover().catch(async (error: unknown) => {
    await runtime.close();
    throw error;
  });
  // Sessions come at once to a server: its log's writer thread is started now, in the
  // background, so that their first batches need not commit on the event loop meanwhile
  // (a thread that cannot start leaves them there: the log still works).
  runtime.log.startWriterThread().catch(() => undefined);
  // Each run this server starts is exported as a trace once it has ended.
  const registry = new InvocationRegistry(
    tracing === undefined
      ? {}
      : { onEnded: (invocation) => tracing.exportInvocation(runtime.log, invocation) },
  );
  const server = await startServer({
    runtime,
    registry,
    token: opened.token,
    provider,
    tools: catalog,
    cwd: workspace.root,
    instructions: instructionsFor(workspace),
    requireApproval,
    port,
    hostname,
    logger: { error: (line) => terminal.error(`${c.red('error:')} ${line}`) },
  }).catch(async (error: unknown) => {
    await runtime.close();
    throw error;
  });

  // A browser cannot open http://0.0.0.0: the printed URLs name this machine's loopback.
  const url = openableUrl(server.url);
  terminal.line(`${c.bold('factum serve')} ${c.dim(`· log ${runtime.description}`)}`);
  terminal.line(`${c.dim('API      ')} ${url}/api`);
  terminal.line(`${c.dim('timeline ')} ${url}/`);
  const tokenFile = join(dataDir, TOKEN_FILE);
  if (opened.created !== undefined) {
    // The token rides in the fragment, which browsers never send: no server or proxy logs it.
    terminal.line(`${c.dim('login    ')} ${c.bold(`${url}/#token=${opened.created}`)}`);
    terminal.line(`${c.dim('token    ')} ${c.bold(opened.created)}`);
    terminal.line(
      c.dim(
        `  shown once: only its SHA-256 is kept, in ${tokenFile}. Send it as "Authorization: Bearer <token>".`,
      ),
    );
  } else {
    terminal.line(
      `${c.dim('token    ')} ${c.dim(`the one printed at first start (only its SHA-256 is kept, in ${tokenFile}); open ${url}/#token=<token> to sign in, or delete that file and restart for a new one`)}`,
    );
  }
  if (!isLoopback(hostname)) {
    terminal.error(
      c.yellow(
        c.bold(
          `WARNING: listening on ${hostname}, reachable from other machines. Anyone with the token can run the model and tools in ${workspace.root}, and the traffic is not encrypted: put TLS in front, or serve on 127.0.0.1.`,
        ),
      ),
    );
  }
  terminal.line(
    c.dim('Ctrl-C stops: live runs are cancelled and their effects settle before the log closes.'),
  );

  const stop = await nextSignal(context);
  terminal.line(c.dim(`${stop}: closing the server…`));
  await server.close();
  server.registry.cancelAll();
  const drained = (async () => {
    await server.registry.drained();
    await tracing?.shutdown().catch(() => undefined);
    await runtime.close();
    return 'drained' as const;
  })();
  const forced = nextSignal(context).then(() => 'forced' as const);
  if ((await Promise.race([drained, forced])) === 'forced') {
    processes.killAll();
    terminal.error(c.yellow('stopped before runs drained; the next start recovers them'));
    return 130;
  }
  terminal.line(c.dim('runs drained, log closed'));
  return 0;
}

/**
 * A URL a browser can open for a server bound to `url`'s host: a wildcard address
 * (`0.0.0.0`, `::`) accepts connections but is no place to connect to, so this
 * machine's loopback (`127.0.0.1`, `[::1]`) stands for it; other hosts are kept.
 */
export function openableUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  else if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.origin;
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

function portOf(value: string | number | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new CliError('usage', `--port must be a number from 0 to 65535 (got ${String(value)})`);
  }
  return port;
}

function tokenOption(options: ServeOptions, context: CliContext): { token?: string } {
  const token = options.token === undefined ? context.env.FACTUM_TOKEN : String(options.token);
  if (token === undefined || token === '') return {};
  if (token.length < 16) throw new CliError('usage', 'the token must be at least 16 characters long');
  return { token };
}

/**
 * The provider of new turns, resolved once at start: a file changed while the server
 * runs (by a turn's tools, say) cannot redirect later turns. A server without one
 * still serves the timeline; turns are refused with the same reason.
 */
function providerOrNotice(options: ServeOptions, dataDir: string, context: CliContext): () => ProviderConfig {
  try {
    const provider = providerFrom(options, dataDir, context);
    return () => provider;
  } catch (error) {
    if (!FactumError.isInstance(error) || error.code !== 'provider_settings') throw error;
    context.terminal.error(
      context.terminal.colors.yellow(
        `no model provider: ${error.message}; turns are refused until the server restarts with one`,
      ),
    );
    return () => {
      throw error;
    };
  }
}

function nextSignal(context: CliContext): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      context.signals.off('SIGINT', onInt);
      context.signals.off('SIGTERM', onTerm);
      resolve(signal);
    };
    const onInt = () => on('SIGINT');
    const onTerm = () => on('SIGTERM');
    context.signals.on('SIGINT', onInt);
    context.signals.on('SIGTERM', onTerm);
  });
}
