import type { SessionListing } from './composer-state.js';
import { h, plural } from './dom.js';
import { statusBadge } from './timeline-view.js';

/** The sidebar's sessions: status, id, first message and counts; a click selects one. */
export function renderSessionList(
  list: HTMLElement,
  sessions: readonly SessionListing[],
  options: { readonly selected: string | undefined; readonly select: (sessionId: string) => void },
): void {
  list.replaceChildren();
  if (sessions.length === 0)
    list.appendChild(h('div', { class: 'empty', text: 'No sessions yet. Start one with New.' }));
  for (const session of sessions) {
    list.appendChild(
      h(
        'button',
        {
          class: `session${session.id === options.selected ? ' selected' : ''}`,
          type: 'button',
          'data-session': session.id,
          onclick: () => options.select(session.id),
        },
        [
          h('span', { class: 'line' }, [
            statusBadge(session.status),
            h('span', { class: 'id', text: session.id }),
          ]),
          h('span', { class: 'title', text: session.title ?? '(no message)' }),
          h('span', { class: 'counts' }, [
            h('span', { text: plural(session.invocations, 'invocation') }),
            h('span', { text: plural(session.events, 'fact') }),
            session.unsettledOperations
              ? h('span', { class: 'warn', text: `${session.unsettledOperations} unsettled` })
              : null,
            session.rejections ? h('span', { class: 'bad', text: `${session.rejections} rejected` }) : null,
          ]),
        ],
      ),
    );
  }
}
