import { ApiClient, ApiError } from './api-client.js';
import { composerState, type SessionListing } from './composer-state.js';
import { byId, h, restoreDrafts, takeDrafts } from './dom.js';
import { ReplayPanel } from './replay-view.js';
import { renderSessionList } from './session-list.js';
import { SubmissionKeys } from './submission-keys.js';
import { applyFact, createTimeline, type StoredFact, type Timeline } from './timeline-model.js';
import { renderSection, statusBadge, type TimelineActions } from './timeline-view.js';

const TOKEN_KEY = 'factum.token';

type SessionDetail = {
  readonly invocations: { readonly invocation: { readonly invocationId: string }; readonly live: boolean }[];
};

/**
 * The page: sign-in (a token from the login URL's fragment, or pasted; kept in this
 * tab's sessionStorage), the session list (polled), the selected session's live tail
 * over EventSource (the token rides as `?token=` there only, as EventSource cannot send
 * headers), new sessions, turns and cancels. Rendering is batched per animation frame,
 * one invocation section at a time.
 */
export class TimelineApp {
  #api: ApiClient | undefined;
  #sessions: SessionListing[] = [];
  #selected: string | undefined;
  #source: EventSource | undefined;
  #timeline: Timeline = createTimeline();
  readonly #dirty = new Set<string>();
  readonly #openResults = new Map<string, string>();
  /** Operations whose decision or resolution is on its way: their buttons stay disabled across redraws. */
  readonly #sending = new Set<string>();
  readonly #submissions = new SubmissionKeys();
  readonly #replay = new ReplayPanel();
  #frame = 0;
  #poll = 0;
  readonly #actions: TimelineActions = {
    cancel: (id) => void this.#cancel(id),
    fork: (session, at) => void this.#fork(session, at),
    toggleResult: (session, eventId) => void this.#toggleResult(session, eventId),
    openResults: this.#openResults,
    sending: this.#sending,
    decide: (operationId, decision, note, inputDigest) =>
      void this.#decide(operationId, decision, note, inputDigest),
    resolve: (operationId, outcome, note, result) => void this.#resolve(operationId, outcome, note, result),
  };

  /** Wires the page's forms and buttons, then signs in if a token is at hand. */
  start(): void {
    byId('login-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const input = byId<HTMLInputElement>('token');
      void this.#signIn(input.value.trim());
    });
    byId('sign-out').addEventListener('click', () => this.#signOut(''));
    this.#replay.start(() => this.#api);
    byId('compose').addEventListener('submit', (event) => {
      event.preventDefault();
      const message = byId<HTMLTextAreaElement>('message').value.trim();
      if (message && this.#selected) void this.#send(this.#selected, message);
    });
    byId('new-session').addEventListener('click', () => this.#openNewForm());
    byId('new-cancel').addEventListener('click', () => byId('new-form').classList.add('hidden'));
    byId('new-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const message = byId<HTMLTextAreaElement>('new-message').value.trim();
      const id = byId<HTMLInputElement>('new-session-id').value.trim();
      if (message && id) void this.#send(id, message, true);
    });
    // A login URL carries the token in its fragment, which never reaches a server log;
    // it is moved to sessionStorage and wiped from the address bar at once.
    const hash = new URLSearchParams(location.hash.slice(1));
    const fromUrl = hash.get('token');
    if (fromUrl) {
      hash.delete('token');
      history.replaceState(null, '', `${location.pathname}${hash.size ? `#${hash}` : ''}`);
      void this.#signIn(fromUrl);
      return;
    }
    const kept = sessionStorage.getItem(TOKEN_KEY);
    if (kept) void this.#signIn(kept);
    else this.#signOut('');
  }

  async #signIn(token: string): Promise<void> {
    if (!token) return;
    const api = new ApiClient(token, () => this.#signOut('The server refused the token: enter it again.'));
    try {
      await api.call('/api/sessions');
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401))
        byId('login-error').textContent = String(error);
      return;
    }
    this.#api = api;
    sessionStorage.setItem(TOKEN_KEY, token);
    byId<HTMLInputElement>('token').value = '';
    this.#showApp();
  }

  #signOut(message: string): void {
    sessionStorage.removeItem(TOKEN_KEY);
    this.#api = undefined;
    this.#source?.close();
    clearInterval(this.#poll);
    byId('app').classList.add('hidden');
    byId('sign-out').classList.add('hidden');
    byId('login').classList.remove('hidden');
    byId('login-error').textContent = message;
    this.#setLive('offline', '');
  }

  #showApp(): void {
    byId('login').classList.add('hidden');
    byId('app').classList.remove('hidden');
    byId('sign-out').classList.remove('hidden');
    void this.#refreshSessions();
    clearInterval(this.#poll);
    this.#poll = window.setInterval(() => void this.#refreshSessions(), 2000);
    const wanted = new URLSearchParams(location.hash.slice(1)).get('session');
    if (wanted) this.#select(wanted);
  }

  #setLive(text: string, kind: string): void {
    const live = byId('live');
    live.textContent = text;
    live.className = `live ${kind}`;
  }

  #notice(text: string): void {
    byId('notice').textContent = text;
  }

  async #refreshSessions(): Promise<void> {
    if (this.#api === undefined) return;
    try {
      const body = await this.#api.call<{ sessions: SessionListing[] }>('/api/sessions');
      this.#sessions = body.sessions;
      this.#renderSessions();
    } catch (error) {
      this.#notice(String((error as Error).message));
    }
  }

  #renderSessions(): void {
    renderSessionList(byId('sessions'), this.#sessions, {
      selected: this.#selected,
      select: (id) => this.#select(id),
    });
    const current = this.#sessions.find((session) => session.id === this.#selected);
    byId('session-status').replaceChildren(current ? statusBadge(current.status) : '');
    this.#renderComposer(current);
  }

  /** The composer is offered only when the session would take a turn; otherwise it says why. */
  #renderComposer(session: SessionListing | undefined): void {
    const state = composerState(session);
    const form = byId('compose');
    const reason = byId('compose-reason');
    byId<HTMLTextAreaElement>('message').disabled = !state.enabled;
    byId<HTMLButtonElement>('send').disabled = !state.enabled;
    form.dataset.state = state.enabled ? 'open' : state.reason;
    reason.textContent = state.enabled ? '' : state.why;
    reason.classList.toggle('hidden', state.enabled);
  }

  #openNewForm(): void {
    byId<HTMLInputElement>('new-session-id').value = `session-${crypto.randomUUID().slice(0, 8)}`;
    byId<HTMLTextAreaElement>('new-message').value = '';
    byId('new-error').textContent = '';
    byId('new-form').classList.remove('hidden');
    byId('new-message').focus();
  }

  #select(sessionId: string): void {
    if (this.#api === undefined) return;
    this.#source?.close();
    this.#selected = sessionId;
    this.#timeline = createTimeline();
    history.replaceState(null, '', `#session=${encodeURIComponent(sessionId)}`);
    byId('session-title').textContent = sessionId;
    byId('compose').classList.remove('hidden');
    this.#replay.select(sessionId);
    byId('timeline').replaceChildren(h('div', { class: 'empty', text: 'Loading facts\u2026' }));
    this.#notice('');
    this.#renderSessions();
    void this.#loadDetail();
    const url = `/api/sessions/${encodeURIComponent(sessionId)}/events/stream?token=${encodeURIComponent(this.#api.token)}`;
    const source = new EventSource(url);
    this.#source = source;
    this.#setLive('connecting', 'retry');
    source.addEventListener('ready', () => this.#setLive('live', 'on'));
    source.addEventListener('fact', (message) => {
      const stored = JSON.parse((message as MessageEvent<string>).data) as StoredFact;
      const changed = applyFact(this.#timeline, stored);
      if (changed === null) return;
      this.#dirty.add(changed);
      const { fact } = stored.event;
      const kind = fact.kind;
      // Its fact has come: the card is drawn decided (or settled), not sending any more.
      if (kind === 'approval_decided' || kind === 'tool_reconciled') this.#sending.delete(fact.operationId);
      if (
        kind === 'invocation_opened' ||
        kind === 'invocation_ended' ||
        kind === 'approval_decided' ||
        kind === 'tool_reconciled'
      ) {
        void this.#loadDetail();
        void this.#refreshSessions();
      }
      this.#schedule();
    });
    source.onerror = () =>
      this.#setLive(source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting', 'retry');
  }

  /** Which open invocations no run on this server owns (crashed, or on another host). */
  async #loadDetail(): Promise<void> {
    const id = this.#selected;
    if (id === undefined || this.#api === undefined) return;
    try {
      const detail = await this.#api.call<SessionDetail>(`/api/sessions/${encodeURIComponent(id)}`);
      if (this.#selected !== id) return;
      this.#timeline.notLive = new Set(
        detail.invocations.filter((entry) => !entry.live).map((entry) => entry.invocation.invocationId),
      );
      for (const invocationId of this.#timeline.order) this.#dirty.add(invocationId);
      this.#schedule();
    } catch {
      // A session with no facts yet: the stream fills it.
    }
  }

  #schedule(): void {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => this.#render());
  }

  #render(): void {
    this.#frame = 0;
    const main = byId('main');
    const atBottom = main.scrollHeight - main.scrollTop - main.clientHeight < 80;
    const container = byId('timeline');
    if (this.#timeline.order.length) container.querySelector('.empty')?.remove();
    for (const id of this.#dirty) {
      const section = this.#timeline.sections.get(id);
      if (section === undefined) continue;
      const fresh = renderSection(this.#timeline, section, this.#actions);
      const existing = container.querySelector(`section[data-invocation="${CSS.escape(id)}"]`);
      if (existing) {
        const drafts = takeDrafts(existing);
        existing.replaceWith(fresh);
        restoreDrafts(fresh, drafts);
      } else container.appendChild(fresh);
    }
    this.#dirty.clear();
    if (atBottom) main.scrollTop = main.scrollHeight;
  }

  async #toggleResult(sessionId: string, eventId: string): Promise<void> {
    if (this.#openResults.has(eventId)) this.#openResults.delete(eventId);
    else if (this.#api !== undefined) {
      try {
        const body = await this.#api.call<{ result: unknown }>(
          `/api/sessions/${encodeURIComponent(sessionId)}/results/${encodeURIComponent(eventId)}`,
        );
        this.#openResults.set(eventId, JSON.stringify(body.result, null, 2));
      } catch (error) {
        this.#notice(String((error as Error).message));
        return;
      }
    }
    for (const id of this.#timeline.order) this.#dirty.add(id);
    this.#schedule();
  }

  async #cancel(invocationId: string): Promise<void> {
    try {
      await this.#api?.call(`/api/invocations/${encodeURIComponent(invocationId)}/cancel`, {
        method: 'POST',
        body: {},
      });
      this.#notice(`Cancelling ${invocationId}: its in-flight effect finishes and settles first.`);
    } catch (error) {
      this.#notice(String((error as Error).message));
    }
  }

  async #fork(sessionId: string, at: string): Promise<void> {
    try {
      const fork = await this.#api?.call<{ session: string }>(
        `/api/sessions/${encodeURIComponent(sessionId)}/forks`,
        {
          method: 'POST',
          body: { at },
        },
      );
      if (fork === undefined) return;
      await this.#refreshSessions();
      this.#select(fork.session);
      this.#notice(
        `Forked ${sessionId} at ${at} into ${fork.session}: its next message runs on that history.`,
      );
    } catch (error) {
      this.#notice(
        error instanceof ApiError && error.code ? `${error.code}: ${error.message}` : String(error),
      );
    }
  }

  async #decide(
    operationId: string,
    decision: 'approve' | 'deny',
    note: string,
    inputDigest: string,
  ): Promise<void> {
    this.#sending.add(operationId);
    try {
      await this.#api?.call(`/api/operations/${encodeURIComponent(operationId)}/decision`, {
        method: 'POST',
        body: { decision, inputDigest, ...(note ? { note } : {}) },
      });
      this.#notice('');
    } catch (error) {
      this.#notice(
        error instanceof ApiError && error.code ? `${error.code}: ${error.message}` : String(error),
      );
      this.#failed(operationId);
    }
  }

  /**
   * The request about `operationId` failed: its buttons come back. (One that succeeded
   * keeps them disabled until its fact arrives and draws the card decided.)
   */
  #failed(operationId: string): void {
    this.#sending.delete(operationId);
    for (const id of this.#timeline.order) this.#dirty.add(id);
    this.#schedule();
  }

  async #resolve(
    operationId: string,
    outcome: 'succeeded' | 'failed' | 'not_run',
    note: string,
    result: string,
  ): Promise<void> {
    this.#sending.add(operationId);
    try {
      await this.#api?.call(`/api/operations/${encodeURIComponent(operationId)}/resolution`, {
        method: 'POST',
        body: { outcome, note, ...(result ? { result } : {}) },
      });
      this.#notice(`Resolved ${operationId}: the model reads the outcome in the next turn.`);
      await this.#refreshSessions();
    } catch (error) {
      this.#notice(
        error instanceof ApiError && error.code ? `${error.code}: ${error.message}` : String(error),
      );
      this.#failed(operationId);
    }
  }

  async #send(sessionId: string, message: string, fromNewForm = false): Promise<void> {
    // A double click or a resend after a dropped connection carries the same key: the
    // server starts the turn once and answers every copy with it.
    const key = this.#submissions.keyFor(sessionId, message);
    try {
      await this.#api?.call(`/api/sessions/${encodeURIComponent(sessionId)}/turns`, {
        method: 'POST',
        body: { message },
        headers: { 'Idempotency-Key': key },
      });
      this.#submissions.accepted(key);
      byId<HTMLTextAreaElement>('message').value = '';
      byId('new-form').classList.add('hidden');
      this.#notice('');
      if (this.#selected !== sessionId) this.#select(sessionId);
      await this.#refreshSessions();
    } catch (error) {
      const text =
        error instanceof ApiError && error.code ? `${error.code}: ${error.message}` : String(error);
      if (fromNewForm) byId('new-error').textContent = text;
      else this.#notice(text);
    }
  }
}
