import type { PendingApproval } from '@factum/event-log';
import type { CAC } from 'cac';
import { hasLog } from '../data-directory.js';
import { shownText } from '../terminal/terminal-text.js';
import { printApproval } from './approval-flow.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { type ApprovalsOutput, ApprovalsOutputSchema } from './json-output-schemas.js';
import { openRuntime } from './open-runtime.js';
import { printJson } from './print-json.js';

type ApprovalsOptions = GlobalOptions & { readonly json?: boolean };

/** One approval as `approvals --json` prints it. */
export function approvalEntryOf(approval: PendingApproval): ApprovalsOutput['approvals'][number] {
  return {
    invocation: approval.invocation,
    operationId: approval.operationId,
    tool: approval.toolName,
    input: approval.input,
    inputDigest: approval.inputDigest,
    reason: approval.reason,
    requestedAt: approval.requestedAt,
    expiresAt: approval.expiresAt ?? null,
    decision:
      approval.decision === undefined
        ? null
        : {
            decision: approval.decision.decision,
            by: approval.decision.by,
            ...(approval.decision.note === undefined ? {} : { note: approval.decision.note }),
            at: approval.decision.at,
          },
  };
}

/**
 * `factum approvals`: every call that waits for a person, across sessions, with the
 * command that decides it — and decided ones whose run has not been continued yet.
 */
export function registerApprovals(cli: CAC, context: CliContext): void {
  cli
    .command('approvals', 'List calls waiting for a person’s approval, across sessions')
    .option('--json', 'print one JSON document (ApprovalsOutputSchema, see the README) instead of text')
    .action(async (options: ApprovalsOptions) => {
      const { terminal } = context;
      const c = terminal.colors;
      const dataDir = dataDirOf(options, context);
      // No log here: nothing waits, and nothing is created to say so.
      await using runtime = hasLog(dataDir) ? await openRuntime({ target: { dataDir } }) : undefined;
      const approvals = runtime === undefined ? [] : await runtime.engine.pendingApprovals();
      if (options.json) {
        printJson(terminal, ApprovalsOutputSchema, { approvals: approvals.map(approvalEntryOf) });
        return 0;
      }
      if (approvals.length === 0) {
        terminal.line(`${c.green('✔')} no call waits for approval`);
        return 0;
      }
      const undecided = approvals.filter((approval) => approval.decision === undefined);
      terminal.line(c.bold(`Waiting for a person (${undecided.length})`));
      for (const approval of undecided) {
        printApproval(context, approval);
        terminal.line(
          c.dim(
            shownText(
              `  session ${approval.invocation.sessionId} · run ${approval.invocation.runId} · requested ${approval.requestedAt}`,
            ),
          ),
        );
        const op = shownText(approval.operationId);
        terminal.line(
          `  ${c.bold(`factum approve ${op}`)}  or  ${c.bold(`factum deny ${op} --note "<why>"`)}`,
        );
      }
      const decided = approvals.filter((approval) => approval.decision !== undefined);
      if (decided.length > 0) {
        terminal.line();
        terminal.line(c.bold(`Decided, run not yet continued (${decided.length})`));
        for (const approval of decided) {
          const d = approval.decision!;
          terminal.line(
            `  ${d.decision === 'approved' ? c.green('✔') : c.yellow('⊘')} ${shownText(approval.operationId)} ${shownText(`${d.decision} by ${d.by}`)} ${c.dim(shownText(`· continue: factum resume ${approval.invocation.runId}`))}`,
          );
        }
      }
      return 0;
    });
}
