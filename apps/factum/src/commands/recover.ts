import type { CAC } from 'cac';
import { FactumRuntime } from '../factum-runtime.js';
import { describeCall, plural } from '../terminal/describe-call.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { type InvocationSummary, indexInvocations } from './invocation-index.js';
import { ownershipText } from './ownership-text.js';
import { catalogFor, reconcileInvocation, resolutionOf } from './recovery-plan.js';

type RecoverOptions = GlobalOptions & { readonly apply?: boolean };

/**
 * `factum recover`: what a crash left open — invocations with no end, operations with
 * no outcome — and how to close each. `--apply` ends the unfinished invocations (as
 * failed {interrupted}) and applies each tool's recovery policy.
 */
export function registerRecover(cli: CAC, context: CliContext): void {
  cli
    .command('recover', 'List unfinished invocations and uncertain operations, and how to resolve them')
    .option(
      '--apply',
      "end unfinished invocations whose host is gone and reconcile what the tools can (live hosts' runs are left alone)",
    )
    .action(async (options: RecoverOptions) => {
      const { terminal } = context;
      const c = terminal.colors;
      await using runtime = await FactumRuntime.open({ target: { dataDir: dataDirOf(options, context) } });
      let index = await indexInvocations(runtime.log);
      const unfinished = index.filter((summary) => summary.outcome === undefined);
      const uncertain = index.filter((summary) => summary.open.size > 0);
      if (unfinished.length === 0 && uncertain.length === 0) {
        terminal.line(
          `${c.green('✔')} nothing is left open: every invocation ended and every operation has an outcome`,
        );
        return 0;
      }
      if (unfinished.length > 0) {
        terminal.line(c.bold(`Unfinished invocations (${unfinished.length}): no invocation_ended`));
        for (const summary of unfinished) {
          const ownership = await runtime.log.invocationOwnership(summary.invocation);
          terminal.line(
            `  ${c.yellow('⚠')} ${summary.invocation.invocationId} ${c.dim(`session ${summary.invocation.sessionId} · run ${summary.invocation.runId}`)}`,
          );
          terminal.line(c.dim(`      ${ownershipText(ownership)}`));
        }
      }
      if (uncertain.length > 0) {
        terminal.line(c.bold('Uncertain operations: dispatched (T1), never settled (T2)'));
        for (const summary of uncertain) await listUncertain(summary, context);
      }
      if (!options.apply) {
        terminal.line();
        terminal.line(c.dim('nothing was changed; run `factum recover --apply` to act on the above'));
        return 0;
      }
      terminal.line();
      const report = await runtime.engine.sweep();
      terminal.line(
        `${c.green('✔')} ended ${plural(report.ended.length, 'unfinished invocation')} as failed {interrupted}`,
      );
      for (const left of [...report.live, ...report.invalid]) {
        terminal.line(
          `${c.yellow('⚠')} ${left.invocation.invocationId} ${c.dim(ownershipText(left.ownership))}`,
        );
      }
      index = await indexInvocations(runtime.log);
      let left = 0;
      // A live run's operations are in flight, not uncertain: only ended runs are reconciled.
      for (const summary of index.filter((entry) => entry.open.size > 0 && entry.outcome !== undefined)) {
        for (const outcome of await reconcileInvocation(runtime, summary)) {
          const closed = outcome.decision === 'succeeded' || outcome.decision === 'failed';
          if (!closed) left += 1;
          const mark = closed ? c.green('✔') : c.yellow('⚠');
          terminal.line(
            `${mark} ${outcome.name} ${c.dim(outcome.operationId)}: ${c.bold(outcome.decision)} ${c.dim(`(${outcome.reason})`)}`,
          );
        }
      }
      terminal.line(
        left === 0
          ? `${c.green('✔')} nothing is left open`
          : c.yellow(`${plural(left, 'operation')} still uncertain: decide by hand`),
      );
      return left === 0 ? 0 : 1;
    });
}

async function listUncertain(summary: InvocationSummary, context: CliContext): Promise<void> {
  const { terminal } = context;
  const c = terminal.colors;
  const catalog = await catalogFor(summary);
  for (const [operationId, call] of summary.open) {
    terminal.line(
      `  ${c.yellow('⚠')} ${describeCall(call.name, call.input)} ${c.dim(`${operationId} · ${summary.invocation.invocationId}`)}`,
    );
    terminal.line(c.dim(`      ${resolutionOf(call, catalog)}`));
  }
}
