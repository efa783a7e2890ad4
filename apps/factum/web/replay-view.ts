import type { ApiClient } from './api-client.js';
import { byId, h } from './dom.js';

type Fact = { readonly kind: string } & Record<string, unknown>;

type Divergence = {
  readonly kind: string;
  readonly index: number;
  readonly recordedSequence?: number;
  readonly recorded?: Fact;
  readonly replayed?: Fact;
};

type ReplayReport = {
  readonly mode: string;
  readonly invocations: readonly {
    readonly invocationId: string;
    readonly status: 'same' | 'diverged';
    readonly compared: number;
    readonly divergences: readonly Divergence[];
  }[];
  readonly summary: { readonly invocations: number; readonly same: number; readonly diverged: number };
};

/**
 * The replay report of the selected session: `Verify replay` asks the server to replay
 * it (`POST /api/replays`, nothing runs, nothing is written) and shows each invocation's
 * status, and each divergence with the recorded fact and the replayed one side by side.
 */
export class ReplayPanel {
  #session: string | undefined;

  /** Wires the button; `api` is read when it is pressed (the token may change). */
  start(api: () => ApiClient | undefined): void {
    byId('replay').addEventListener('click', () => {
      const client = api();
      if (client !== undefined && this.#session !== undefined) void this.#run(client, this.#session);
    });
  }

  /** A session was selected: the button is offered, an earlier report goes. */
  select(sessionId: string): void {
    this.#session = sessionId;
    byId('replay').classList.remove('hidden');
    const panel = byId('replay-report');
    panel.classList.add('hidden');
    panel.replaceChildren();
  }

  async #run(api: ApiClient, sessionId: string): Promise<void> {
    const panel = byId('replay-report');
    panel.classList.remove('hidden');
    panel.replaceChildren(h('div', { class: 'empty', text: 'Replaying\u2026' }));
    try {
      const report = await api.call<ReplayReport>('/api/replays', {
        method: 'POST',
        body: { target: { kind: 'session', sessionId } },
      });
      if (this.#session === sessionId) panel.replaceChildren(...renderReport(report));
    } catch (error) {
      if (this.#session === sessionId)
        panel.replaceChildren(h('div', { class: 'error-text', text: String(error) }));
    }
  }
}

function renderReport(report: ReplayReport): HTMLElement[] {
  const { invocations, same, diverged } = report.summary;
  const head = h('div', {
    class: 'replay-summary',
    'data-diverged': diverged,
    text: `Replay (${report.mode}): ${invocations} invocations, ${same} same, ${diverged} diverged`,
  });
  const rows = report.invocations.map((entry) =>
    h('div', { class: 'replay-invocation', 'data-status': entry.status }, [
      h('div', { class: 'replay-title' }, [
        h('span', { class: `badge ${entry.status === 'same' ? 'completed' : 'failed'}`, text: entry.status }),
        h('span', { class: 'mono', text: ` ${entry.invocationId}` }),
        h('span', { class: 'muted', text: ` \u00b7 ${entry.compared} facts compared` }),
      ]),
      ...entry.divergences.map(renderDivergence),
    ]),
  );
  return [head, ...rows];
}

function renderDivergence(divergence: Divergence): HTMLElement {
  const at =
    divergence.recordedSequence === undefined ? '' : `, recorded sequence ${divergence.recordedSequence}`;
  const side = (label: string, fact: Fact | undefined) =>
    h('div', { class: 'replay-side', 'data-side': label }, [
      h('div', { class: 'replay-label', text: label }),
      h('pre', { text: fact === undefined ? '(nothing)' : JSON.stringify(fact, null, 2) }),
    ]);
  return h('div', { class: 'replay-divergence', 'data-kind': divergence.kind }, [
    h('div', { class: 'replay-where', text: `${divergence.kind} at fact ${divergence.index}${at}` }),
    h('div', { class: 'replay-sides' }, [
      side('recorded', divergence.recorded),
      side('replayed', divergence.replayed),
    ]),
  ]);
}
