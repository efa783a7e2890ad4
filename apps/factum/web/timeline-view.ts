import { renderApproval, renderResolve } from './approval-view.js';
import { describeFact, rejectionSentence } from './describe-fact.js';
import { type Child, gutter, h, shortJson } from './dom.js';
import {
  type FactRow,
  joinedSequences,
  type OperationRow,
  operationState,
  type Section,
  type StreamRow,
  type Timeline,
} from './timeline-model.js';

/** What the rendered timeline can ask the app to do. */
export type TimelineActions = {
  cancel(invocationId: string): void;
  /** Forks the session at an invocation's end or before a step, and shows the new session. */
  fork(sessionId: string, at: string): void;
  /** Shows or hides a stored tool result under its card (fetched on first open). */
  toggleResult(sessionId: string, eventId: string): void;
  /** Results already fetched and open, by the id of the event that holds them. */
  readonly openResults: ReadonlyMap<string, string>;
  /** Operations whose decision or resolution is on its way: drawn with their buttons disabled. */
  readonly sending: ReadonlySet<string>;
  /** Approves or denies a call that waits for a person (the digest is of the input shown). */
  decide(operationId: string, decision: 'approve' | 'deny', note: string, inputDigest: string): void;
  /** Resolves an uncertain operation by hand. */
  resolve(
    operationId: string,
    outcome: 'succeeded' | 'failed' | 'not_run',
    note: string,
    result: string,
  ): void;
};

/** A status pill. */
export function statusBadge(status: string): HTMLElement {
  const labels: Record<string, string> = {
    paused: 'paused for handoff',
    awaiting_approval: 'awaiting approval',
  };
  return h('span', { class: `badge ${status}`, text: labels[status] ?? status });
}

function settlementOf(
  timeline: Timeline,
  op: OperationRow,
  section: Section,
  actions: TimelineActions,
): { line: Child[]; result: Child } {
  const state = operationState(timeline, op);
  if (state === 'in-flight') {
    return {
      line: [
        h('span', { class: 'badge warn', text: 'in flight' }),
        h('span', { text: 'dispatched; the effect is running and has not settled yet' }),
      ],
      result: null,
    };
  }
  if (state === 'uncertain') {
    return {
      line: [
        h('span', { class: 'badge warn', text: '\u26a0 uncertain' }),
        h('span', { text: 'dispatched but never settled: the effect may or may not have happened' }),
      ],
      result: renderResolve(op.fact.operationId, actions),
    };
  }
  const done = op.settled ?? op.reconciled!;
  const outcome = op.settled ? op.settled.outcome : op.reconciled!.fact.decision;
  const line: Child[] = [
    h('span', { class: 'badge t2', text: op.settled ? 'T2' : 'reconciled' }),
    h('span', {
      text:
        outcome.kind === 'succeeded'
          ? `succeeded \u00b7 result ${outcome.result.bytes} bytes`
          : outcome.kind === 'failed'
            ? `failed \u00b7 ${outcome.error.code}: ${outcome.error.message}`
            : outcome.kind === 'not_run'
              ? 'not run'
              : `unknown \u00b7 ${outcome.note}`,
    }),
    op.reconciled?.fact.policy === 'operator'
      ? h('span', {
          class: 'kind resolved-by',
          text: `resolved by ${op.reconciled.fact.by ?? 'an operator'}${op.reconciled.fact.note ? `: ${op.reconciled.fact.note}` : ''}`,
        })
      : null,
    h('span', { class: 'kind', text: `#${done.sequence}` }),
  ];
  if (outcome.kind !== 'succeeded') return { line, result: null };
  const sessionId = section.invocation.sessionId;
  const open = actions.openResults.get(done.eventId);
  line.push(
    h('button', {
      class: 'link result-toggle',
      type: 'button',
      'aria-expanded': open === undefined ? 'false' : 'true',
      text: open === undefined ? 'Show result' : 'Hide result',
      onclick: () => actions.toggleResult(sessionId, done.eventId),
    }),
  );
  return { line, result: open === undefined ? null : h('pre', { class: 'json result', text: open }) };
}

function renderOperation(
  timeline: Timeline,
  section: Section,
  op: OperationRow,
  actions: TimelineActions,
): HTMLElement {
  const { fact } = op;
  const state = operationState(timeline, op);
  const origin = fact.call.origin;
  const from =
    origin.kind === 'provider'
      ? `from step ${origin.stepId}`
      : `${origin.kind.replace('_', ' ')} of ${origin.parentOperationId}`;
  const settlement = settlementOf(timeline, op, section, actions);
  const notes = op.notes.map((note) => h('div', { text: `\u2022 ${note.message}  (#${note.sequence})` }));
  const card = h(
    'div',
    {
      class: `op ${state}`,
      'data-operation': fact.operationId,
      'data-state': state,
      'data-joined': joinedSequences(op).join(' '),
    },
    [
      h('div', { class: 'dispatch' }, [
        h('div', { class: 'line' }, [
          h('span', { class: 'badge t1', text: 'T1' }),
          h('span', { class: 'tool', text: fact.call.name }),
          fact.source === undefined
            ? null
            : h('span', { class: 'badge source', text: `MCP ${fact.source.server}` }),
          h('span', { class: 'kind', text: `${fact.operationId} \u00b7 ${from}` }),
        ]),
        h('pre', { class: 'json', text: shortJson(fact.call.input, 600) }),
        notes.length ? h('div', { class: 'notes' }, notes) : null,
      ]),
      h('div', { class: 'settlement' }, settlement.line),
      settlement.result,
    ],
  );
  return h('div', { class: 'row', 'data-sequence': op.sequence, 'data-kind': 'tool_dispatched' }, [
    gutter(op.sequence, op.timestamp),
    h('div', {}, [card]),
  ]);
}

function renderStream(row: StreamRow): HTMLElement {
  return h(
    'div',
    {
      class: `row stream${row.done ? '' : ' streaming'}`,
      'data-sequence': row.sequence,
      'data-kind': 'model_observed',
    },
    [
      gutter(row.sequence, row.timestamp, row.last),
      h('div', {}, [
        h('div', { class: 'line' }, [
          h('span', { class: 'badge', text: 'model' }),
          h('span', {
            class: 'kind',
            text: `${row.done ? 'streamed' : 'streaming'} \u00b7 step ${row.stepId}`,
          }),
        ]),
        row.reasoning ? h('div', { class: 'reasoning', text: row.reasoning }) : null,
        row.text ? h('div', { class: 'text', text: row.text }) : null,
        row.toolDeltas
          ? h('div', { class: 'kind', text: `${row.toolDeltas} tool-call pieces streamed` })
          : null,
      ]),
    ],
  );
}

/** The "Fork from here" button of an ended invocation or of one of its steps. */
function forkButton(fork: () => void, what: string): HTMLElement {
  return h('button', { class: 'fork', type: 'button', text: 'Fork from here', title: what, onclick: fork });
}

function renderFact(row: FactRow, fork?: () => void): HTMLElement {
  const { fact } = row;
  if (fact.kind === 'tool_rejected') {
    return h('div', { class: 'row rejected', 'data-sequence': row.sequence, 'data-kind': fact.kind }, [
      gutter(row.sequence, row.timestamp),
      h('div', {}, [
        h('div', { class: 'line' }, [
          h('span', { class: 'badge bad', text: 'rejected' }),
          h('span', { class: 'tool mono', text: fact.name }),
          h('span', { class: 'kind', text: fact.operationId }),
        ]),
        h('div', { class: 'why', text: rejectionSentence(fact.reason) }),
        h('pre', { class: 'json', text: shortJson(fact.input, 400) }),
      ]),
    ]);
  }
  const d = describeFact(fact);
  if (fact.kind === 'model_completed' && row.streamed) d.body = '';
  const classes = `row${d.quiet ? ' quiet' : ''}${d.ended ? ` ended ${d.ended}` : ''}`;
  return h('div', { class: classes, 'data-sequence': row.sequence, 'data-kind': fact.kind }, [
    gutter(row.sequence, row.timestamp),
    h('div', {}, [
      h('div', { class: 'line' }, [
        d.ended ? statusBadge(d.ended) : h('span', { class: 'badge', text: d.title }),
        d.meta ? h('span', { class: 'kind', text: d.meta }) : null,
        fork ? h('span', { class: 'spacer' }) : null,
        fork ? forkButton(fork, 'a new session whose history stops right before this step') : null,
      ]),
      d.body ? h('pre', { text: d.body }) : null,
    ]),
  ]);
}

/** One invocation as a card: its header (with Cancel while live) and one row per fact. */
export function renderSection(timeline: Timeline, section: Section, actions: TimelineActions): HTMLElement {
  const inv = section.invocation;
  const live = section.status === 'open' && !timeline.notLive.has(inv.invocationId);
  const status = live ? 'running' : section.status;
  // Only an ended invocation is forked: a live run is never cut.
  const forkable = section.status !== 'open' && section.status !== 'forked';
  const forkAt = (at: string) => () => actions.fork(inv.sessionId, at);
  const rows = section.rows.map((row) => {
    switch (row.kind) {
      case 'operation':
        return renderOperation(timeline, section, row, actions);
      case 'stream':
        return renderStream(row);
      case 'approval':
        return renderApproval(row, actions);
      case 'fact':
        return renderFact(
          row,
          forkable && row.fact.kind === 'model_requested' ? forkAt(row.fact.stepId) : undefined,
        );
      default:
        return row satisfies never;
    }
  });
  return h('section', { class: 'invocation', 'data-invocation': inv.invocationId }, [
    h('header', {}, [
      statusBadge(status),
      h('code', { text: inv.invocationId }),
      h('span', { class: 'meta', text: `${inv.turnId} \u00b7 ${inv.runId}` }),
      h('span', { class: 'spacer' }),
      live
        ? h('button', {
            class: 'danger',
            type: 'button',
            text: 'Cancel',
            onclick: () => actions.cancel(inv.invocationId),
          })
        : null,
      forkable
        ? forkButton(forkAt(inv.invocationId), 'a new session whose history is this session up to here')
        : null,
    ]),
    ...rows,
  ]);
}
