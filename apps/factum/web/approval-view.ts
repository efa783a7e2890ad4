import { gutter, h, shortJson } from './dom.js';
import type { ApprovalRow } from './timeline-model.js';
import type { TimelineActions } from './timeline-view.js';

const DECIDED_LABELS = { approved: 'approved', denied: 'denied', expired: 'expired' } as const;

/**
 * A call that waits for a person: the tool, its exact input, the reason, and — until
 * someone decides — Approve and Deny with a note. The decision carries the digest of
 * the input shown, so the server refuses it if the call's input were another.
 */
export function renderApproval(row: ApprovalRow, actions: TimelineActions): HTMLElement {
  const { fact } = row;
  const decided = row.decided?.fact;
  const state = decided === undefined ? 'pending' : decided.decision;
  const note = h('input', {
    class: 'approval-note',
    'data-draft': `approval-note:${fact.operationId}`,
    type: 'text',
    maxlength: 2048,
    placeholder: 'Note (optional; a denial’s note is told to the model)',
    'aria-label': 'Note',
  }) as HTMLInputElement;
  const sending = actions.sending.has(fact.operationId);
  const decide = (decision: 'approve' | 'deny') => () => {
    for (const button of card.querySelectorAll('button')) button.disabled = true;
    actions.decide(fact.operationId, decision, note.value.trim(), fact.inputDigest);
  };
  const footer =
    decided === undefined
      ? h('div', { class: 'approval-actions' }, [
          note,
          h('button', {
            class: 'primary approve',
            type: 'button',
            text: 'Approve',
            disabled: sending,
            onclick: decide('approve'),
          }),
          h('button', {
            class: 'danger deny',
            type: 'button',
            text: 'Deny',
            disabled: sending,
            onclick: decide('deny'),
          }),
        ])
      : h('div', { class: 'approval-decided' }, [
          h('span', {
            class: `badge ${decided.decision === 'approved' ? 't2' : 'bad'}`,
            text: DECIDED_LABELS[decided.decision],
          }),
          h('span', { text: `by ${decided.by}${decided.note ? `: ${decided.note}` : ''}` }),
          h('span', { class: 'kind', text: `#${row.decided!.sequence}` }),
        ]);
  const card = h(
    'div',
    { class: `approval ${state}`, 'data-operation': fact.operationId, 'data-state': state },
    [
      h('div', { class: 'line' }, [
        h('span', {
          class: 'badge warn',
          text: decided === undefined ? '\u23f8 needs approval' : 'approval',
        }),
        h('span', { class: 'tool', text: fact.call.name }),
        h('span', { class: 'kind', text: fact.operationId }),
      ]),
      h('div', { class: 'why', text: fact.reason }),
      h('pre', { class: 'json', text: shortJson(fact.call.input, 4000) }),
      fact.expiresAt ? h('div', { class: 'kind', text: `expires ${fact.expiresAt}` }) : null,
      footer,
    ],
  );
  return h('div', { class: 'row', 'data-sequence': row.sequence, 'data-kind': 'approval_requested' }, [
    gutter(row.sequence, row.timestamp),
    h('div', {}, [card]),
  ]);
}

/**
 * Resolve on an uncertain operation: what happened (succeeded, failed, not run), how the
 * person knows (required), and for a success what it produced.
 */
export function renderResolve(operationId: string, actions: TimelineActions): HTMLElement {
  const outcome = h(
    'select',
    {
      class: 'resolve-outcome',
      'data-draft': `resolve-outcome:${operationId}`,
      'aria-label': 'What happened',
    },
    [
      h('option', { value: 'not_run', text: 'did not happen (not run)' }),
      h('option', { value: 'succeeded', text: 'happened (succeeded)' }),
      h('option', { value: 'failed', text: 'was attempted and failed' }),
    ],
  ) as HTMLSelectElement;
  const note = h('input', {
    class: 'resolve-note',
    'data-draft': `resolve-note:${operationId}`,
    type: 'text',
    required: true,
    maxlength: 2048,
    placeholder: 'How do you know? (required)',
    'aria-label': 'How do you know',
  }) as HTMLInputElement;
  const result = h('input', {
    class: 'resolve-result',
    'data-draft': `resolve-result:${operationId}`,
    type: 'text',
    placeholder: 'Result, if it succeeded (optional)',
    'aria-label': 'Result',
  }) as HTMLInputElement;
  return h('div', { class: 'resolve' }, [
    h('span', { class: 'kind', text: 'Resolve by hand:' }),
    outcome,
    note,
    result,
    h('button', {
      class: 'primary resolve-button',
      type: 'button',
      text: 'Resolve',
      disabled: actions.sending.has(operationId),
      onclick: (event) => {
        if (note.value.trim() === '') {
          note.focus();
          return;
        }
        (event.currentTarget as HTMLButtonElement).disabled = true;
        const chosen = outcome.value as 'succeeded' | 'failed' | 'not_run';
        actions.resolve(operationId, chosen, note.value.trim(), chosen === 'succeeded' ? result.value : '');
      },
    }),
  ]);
}
