import type { Fact } from '@factum/agent-facts';
import type { InvocationReplay, ReplayReport } from '@factum/engine';
import type { Terminal } from '../terminal/terminal.js';
import { shownText } from '../terminal/terminal-text.js';

/** A replay report for a person: one line per invocation, each divergence with both sides. */
export function printReplay(terminal: Terminal, report: ReplayReport): void {
  const c = terminal.colors;
  for (const entry of report.invocations) {
    const mark = entry.status === 'same' ? c.green('same    ') : c.red('diverged');
    terminal.line(
      `${mark} ${shownText(entry.invocationId)} ${c.dim(shownText(`session ${entry.sessionId}`))}`,
    );
    for (const line of details(entry)) terminal.line(`    ${shownText(line)}`);
  }
  const { invocations, same, diverged } = report.summary;
  terminal.line(`${report.mode}: ${invocations} invocations replayed, ${same} same, ${diverged} diverged`);
}

function details(entry: InvocationReplay): string[] {
  const lines: string[] = [];
  for (const divergence of entry.divergences) {
    const at =
      divergence.recordedSequence === undefined ? '' : `, recorded sequence ${divergence.recordedSequence}`;
    lines.push(`${divergence.kind} at fact ${divergence.index}${at}`);
    lines.push(`  recorded: ${describe(divergence.recorded)}`);
    lines.push(`  replayed: ${describe(divergence.replayed)}`);
  }
  const model = entry.model;
  if (model !== undefined) {
    lines.push(
      `calls: ${model.sameCalls.length} served as recorded, ${model.newCalls.length} not run (new effects), ${model.missingCalls.length} recorded but not made`,
    );
    lines.push(`recorded answer (${model.answers.recorded.end}): ${model.answers.recorded.text}`);
    lines.push(`replayed answer (${model.answers.replayed.end}): ${model.answers.replayed.text}`);
    const { recorded, replayed } = model.usage;
    const ms = model.latencyMs.replayed === undefined ? '' : `, ${Math.round(model.latencyMs.replayed)} ms`;
    lines.push(
      `tokens: recorded ${recorded.totalTokens}, ${Math.round(model.latencyMs.recorded)} ms; replayed ${replayed.totalTokens}${ms}`,
    );
  }
  return lines;
}

/** A fact in one line: its kind and what tells it apart. */
function describe(fact: Fact | undefined): string {
  if (fact === undefined) return '(nothing)';
  switch (fact.kind) {
    case 'model_requested':
      return `model_requested ${fact.stepId} digest ${fact.inputDigest} via ${fact.routeIdentity}`;
    case 'tool_dispatched':
      return `tool_dispatched ${fact.operationId} ${fact.call.name} ${JSON.stringify(fact.call.input)}`;
    case 'approval_requested':
      return `approval_requested ${fact.operationId} ${fact.call.name}: ${fact.reason}`;
    case 'tool_rejected':
      return `tool_rejected ${fact.operationId} ${fact.name}: ${fact.reason.kind}`;
    case 'invocation_ended':
      return `invocation_ended ${fact.outcome.kind === 'failed' ? `failed: ${fact.outcome.error.code}` : fact.outcome.kind}`;
    default:
      return `${fact.kind} ${JSON.stringify(fact).slice(0, 200)}`;
  }
}
