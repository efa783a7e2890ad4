import { type Fact, type FactOf, rejectionSentence } from '@factum/agent-facts';
import type { StoredEvent } from '@factum/event-log';
import { describeCall, describeResult, oneLine, plural } from './describe-call.js';
import { excerpt, textOf } from './excerpt.js';
import type { Colors } from './terminal.js';
import { shownText as t } from './terminal-text.js';

/** Reads a stored tool result (a settlement's or a reconciliation's). */
export type ResultReader = (eventId: string) => Promise<unknown>;

type Dispatch = { readonly fact: FactOf<'tool_dispatched'>; readonly depth: number };

/**
 * One invocation's facts as lines a person can read: each tool call's T1 joined to its
 * T2 on one line (with how long the effect took), rejections with their sentence, an
 * operation with no T2 marked UNCERTAIN, streamed observations counted rather than
 * listed, and Code mode calls indented under their cell.
 */
export async function renderTimeline(
  events: readonly StoredEvent[],
  options: { readonly colors: Colors; readonly readResult: ResultReader; readonly full?: boolean },
): Promise<string[]> {
  const full = options.full === true;
  // Under an entry, aligned past the `#  12 kind     ` columns.
  const under = (text: string, dim = false) =>
    excerpt(text, { full, indent: '               │ ' }).map((line) => (dim ? c.dim(line) : line));
  const c = options.colors;
  const settled = new Map<string, StoredEvent>();
  const reconciled = new Map<string, StoredEvent>();
  const decisions = new Map<string, number>();
  for (const stored of events) {
    const fact = stored.event.fact;
    if (fact.kind === 'approval_decided') decisions.set(fact.operationId, stored.sequence);
    if (fact.kind === 'tool_settled') settled.set(fact.operationId, stored);
    if (fact.kind === 'tool_reconciled') reconciled.set(fact.operationId, stored);
  }
  const dispatches = new Map<string, Dispatch>();
  const lines: string[] = [];
  let observed = 0;
  const at = (sequence: number) => c.dim(`#${String(sequence).padStart(4)}`);
  for (const stored of events) {
    const { sequence, event } = stored;
    const fact: Fact = event.fact;
    if (fact.kind === 'model_observed') {
      observed += 1;
      continue;
    }
    switch (fact.kind) {
      case 'invocation_opened': {
        const input = fact.input;
        const what =
          input.kind === 'message'
            ? `${c.bold('message')} ${JSON.stringify(oneLine(input.content, 80))}`
            : `${c.bold(input.kind)} from run ${t(input.source.invocation.runId)} at #${input.source.highWater}`;
        const mode = fact.configuration
          ? c.dim(` (${fact.configuration.toolMode}, ${t(fact.configuration.cwd)})`)
          : '';
        lines.push(`${at(sequence)} opened   ${what}${mode}`);
        break;
      }
      case 'model_requested':
        lines.push(`${at(sequence)} model    ${t(fact.stepId)} requested ${c.dim(`(${t(fact.modelId)})`)}`);
        break;
      case 'model_completed': {
        const text = fact.output.parts.flatMap((part) => (part.kind === 'text' ? [part.text] : [])).join('');
        const calls = fact.output.parts.filter((part) => part.kind === 'tool_call').length;
        const streamed = observed === 0 ? '' : `, ${plural(observed, 'streamed piece')}`;
        observed = 0;
        const reasoning = fact.output.parts
          .flatMap((part) => (part.kind === 'reasoning' ? [part.text] : []))
          .join('');
        lines.push(
          `${at(sequence)} model    ${t(fact.stepId)} completed${calls > 0 ? ` + ${plural(calls, 'tool call')}` : ''} ${c.dim(`(${t(fact.output.finishReason)}, ${fact.output.usage.totalTokens} tokens${streamed})`)}`,
        );
        if (reasoning !== '') lines.push(c.dim('               reasoning:'), ...under(reasoning, true));
        if (text !== '') lines.push(...under(text));
        break;
      }
      case 'tool_dispatched': {
        const origin = fact.call.origin;
        const parent = origin.kind === 'provider' ? undefined : dispatches.get(origin.parentOperationId);
        const depth = parent === undefined ? 0 : parent.depth + 1;
        dispatches.set(fact.operationId, { fact, depth });
        const call =
          origin.kind === 'code_cell' ? 'code cell' : describeCall(fact.call.name, fact.call.input);
        // The server an MCP tool came from, as the run's own line showed it.
        const label = fact.source === undefined ? call : `${call} ${c.dim(`[${t(fact.source.server)}]`)}`;
        const pad = '  '.repeat(depth);
        const end = settled.get(fact.operationId);
        const t1 = `${at(sequence)} tool     ${pad}T1 ${label}`;
        if (end === undefined || end.event.fact.kind !== 'tool_settled') {
          const closed = reconciled.get(fact.operationId)?.event.fact;
          if (closed?.kind === 'tool_reconciled' && closed.decision.kind !== 'unknown') {
            const where = reconciled.get(fact.operationId)!.sequence;
            lines.push(`${t1} ${c.yellow('⚠ no T2')} ${c.dim(`— closed by reconciliation at #${where}`)}`);
          } else {
            lines.push(
              `${t1} ${c.yellow(c.bold('⚠ UNCERTAIN'))} ${c.yellow('no T2: the effect may or may not have happened')}`,
            );
          }
          break;
        }
        const outcome = end.event.fact.outcome;
        const took = Math.max(0, Date.parse(end.event.timestamp) - Date.parse(event.timestamp));
        const value = outcome.kind === 'succeeded' ? await options.readResult(end.event.id) : undefined;
        const result =
          outcome.kind === 'succeeded'
            ? `${c.green('succeeded')} ${describeResult(fact.call.name, value)}`
            : `${c.red(`failed {${t(outcome.error.code)}}`)} ${t(outcome.error.message)}`;
        lines.push(`${t1} ${c.dim('→')} T2 #${end.sequence} ${result} ${c.dim(`· ${took} ms`)}`);
        if (outcome.kind === 'succeeded') lines.push(...under(textOf(value), true));
        break;
      }
      case 'tool_settled':
        break;
      case 'tool_notified': {
        const depth = (dispatches.get(fact.operationId)?.depth ?? 0) + 1;
        lines.push(`${at(sequence)} notify   ${'  '.repeat(depth)}${c.dim(t(fact.message))}`);
        break;
      }
      case 'tool_rejected':
        lines.push(
          `${at(sequence)} tool     ${c.yellow('⊘')} ${describeCall(fact.name, fact.input)} ${c.yellow(t(rejectionSentence(fact.reason)))}`,
        );
        break;
      case 'tool_redispatched': {
        const name = dispatches.get(fact.operationId)?.fact.call.name ?? fact.operationId;
        lines.push(
          `${at(sequence)} recover  ${t(name)} re-run, attempt ${fact.attempt}: ${c.dim(t(fact.reason))}`,
        );
        break;
      }
      case 'tool_reconciled': {
        const name = dispatches.get(fact.operationId)?.fact.call.name ?? fact.operationId;
        const decision = fact.decision;
        const value = decision.kind === 'succeeded' ? await options.readResult(event.id) : undefined;
        const detail =
          decision.kind === 'succeeded'
            ? `${c.green('succeeded')} ${describeResult(name, value)}`
            : decision.kind === 'failed'
              ? `${c.red(`failed {${t(decision.error.code)}}`)} ${t(decision.error.message)}`
              : decision.kind === 'not_run'
                ? c.yellow('not run')
                : `${c.yellow('unknown')} ${t(decision.note)}`;
        const who =
          fact.policy === 'operator'
            ? `resolved by ${t(fact.by ?? 'an operator')}`
            : `reconciled by ${t(fact.policy)}`;
        lines.push(`${at(sequence)} recover  ${t(name)} ${who}: ${detail}`);
        if (fact.note !== undefined) lines.push(...under(`note: ${fact.note}`, true));
        if (decision.kind === 'succeeded') lines.push(...under(textOf(value), true));
        break;
      }
      case 'approval_requested': {
        const decided = decisions.get(fact.operationId);
        const state =
          decided === undefined ? c.yellow('waiting for a person') : c.dim(`decided at #${decided}`);
        lines.push(
          `${at(sequence)} approval ${c.yellow('⏸')} ${describeCall(fact.call.name, fact.call.input)} ${c.dim('—')} needs approval: ${t(fact.reason)} ${c.dim('·')} ${state}`,
        );
        lines.push(...under(JSON.stringify(fact.call.input, null, 2) ?? 'null', true));
        break;
      }
      case 'approval_decided': {
        const mark =
          fact.decision === 'approved'
            ? c.green('✔ approved')
            : fact.decision === 'denied'
              ? c.yellow('⊘ denied')
              : c.yellow('⌛ expired');
        lines.push(`${at(sequence)} approval ${mark} ${c.dim(t(`${fact.operationId} · by ${fact.by}`))}`);
        if (fact.note !== undefined) lines.push(...under(`note: ${fact.note}`, true));
        break;
      }
      case 'invocation_ended': {
        const outcome = fact.outcome;
        const text =
          outcome.kind === 'completed'
            ? c.green('completed')
            : outcome.kind === 'failed'
              ? `${c.red(`failed {${t(outcome.error.code)}}`)} ${t(outcome.error.message)}`
              : outcome.kind === 'cancelled'
                ? c.yellow(`cancelled {${outcome.source}}`)
                : outcome.kind === 'approval_pending'
                  ? c.yellow(
                      `awaiting approval of ${plural(outcome.operations.length, 'call')}: factum approve|deny <operation>`,
                    )
                  : c.yellow(`paused for a handoff to run ${t(outcome.pause.intent.successorRunId)}`);
        lines.push(`${at(sequence)} ended    ${text}`);
        break;
      }
      case 'session_forked':
        lines.push(`${at(sequence)} fork     ${t(forkText(fact))}`);
        break;
      default:
        fact satisfies never;
    }
  }
  return lines;
}

/** Where a forked session's history comes from, in words. */
export function forkText(fact: FactOf<'session_forked'>): string {
  const { invocation, highWater } = fact.source;
  const where = fact.step === undefined ? `the end of ${invocation.invocationId}` : `step ${fact.step}`;
  return `forked from session ${invocation.sessionId} at ${where} (#${highWater})`;
}
