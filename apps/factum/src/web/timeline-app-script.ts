/**
 * Browser code that wires the page: the token prompt (kept in sessionStorage), the
 * session list (polled), the selected session's live tail over EventSource (the token
 * rides as `?token=` there only, as EventSource cannot send headers), new turns and
 * cancels. Rendering is batched per animation frame, one invocation section at a time.
 */
export const TIMELINE_APP_SCRIPT = String.raw`
var TOKEN_KEY = 'factum.token';
var state = { token: sessionStorage.getItem(TOKEN_KEY), sessions: [], selected: null, source: null,
  timeline: createTimeline(), dirty: new Set(), frame: 0, poll: 0 };
function $(id) { return document.getElementById(id); }

function api(path, options) {
  options = options || {};
  var headers = { authorization: 'Bearer ' + state.token };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(path, { method: options.method || 'GET', headers: headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body) })
    .then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.status === 401) { signOut('The server refused the token: enter it again.'); }
        if (!response.ok) {
          var error = new Error((body.error && body.error.message) || response.statusText);
          error.code = body.error && body.error.code;
          throw error;
        }
        return body;
      });
    });
}

function plural(count, noun) { return count + ' ' + noun + (count === 1 ? '' : 's'); }

function setLive(text, kind) { var live = $('live'); live.textContent = text; live.className = 'live ' + (kind || ''); }
function notice(text) { $('notice').textContent = text || ''; }

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  if (state.source) state.source.close();
  clearInterval(state.poll);
  $('app').classList.add('hidden'); $('sign-out').classList.add('hidden');
  $('login').classList.remove('hidden');
  $('login-error').textContent = message || '';
  setLive('offline');
}

function showApp() {
  $('login').classList.add('hidden');
  $('app').classList.remove('hidden'); $('sign-out').classList.remove('hidden');
  refreshSessions();
  clearInterval(state.poll);
  state.poll = setInterval(refreshSessions, 2000);
  var wanted = new URLSearchParams(location.hash.slice(1)).get('session');
  if (wanted) select(wanted);
}

function refreshSessions() {
  if (!state.token) return Promise.resolve();
  return api('/api/sessions').then(function (body) {
    state.sessions = body.sessions;
    renderSessions();
  }).catch(function (error) { notice(error.message); });
}

function renderSessions() {
  var list = $('sessions');
  list.replaceChildren();
  if (state.sessions.length === 0) list.appendChild(h('div', { class: 'empty', text: 'No sessions yet. Start one with New.' }));
  state.sessions.forEach(function (session) {
    list.appendChild(h('button', { class: 'session' + (session.id === state.selected ? ' selected' : ''), type: 'button',
      'data-session': session.id, onclick: function () { select(session.id); } }, [
      h('span', { class: 'line' }, [statusBadge(session.status), h('span', { class: 'id', text: session.id })]),
      h('span', { class: 'title', text: session.title || '(no message)' }),
      h('span', { class: 'counts' }, [h('span', { text: plural(session.invocations, 'invocation') }), h('span', { text: plural(session.events, 'fact') }),
        session.unsettledOperations ? h('span', { class: 'warn', text: session.unsettledOperations + ' unsettled' }) : null,
        session.rejections ? h('span', { class: 'bad', text: session.rejections + ' rejected' }) : null]),
    ]));
  });
  var current = state.sessions.find(function (s) { return s.id === state.selected; });
  $('session-status').replaceChildren(current ? statusBadge(current.status) : '');
}

function select(sessionId) {
  if (state.source) state.source.close();
  state.selected = sessionId;
  state.timeline = createTimeline();
  history.replaceState(null, '', '#session=' + encodeURIComponent(sessionId));
  $('session-title').textContent = sessionId;
  $('compose').classList.remove('hidden');
  $('timeline').replaceChildren(h('div', { class: 'empty', text: 'Loading facts\u2026' }));
  notice('');
  renderSessions();
  loadDetail();
  var url = '/api/sessions/' + encodeURIComponent(sessionId) + '/events/stream?token=' + encodeURIComponent(state.token);
  var source = new EventSource(url);
  state.source = source;
  setLive('connecting', 'retry');
  source.addEventListener('ready', function () { setLive('live', 'on'); });
  source.addEventListener('fact', function (message) {
    var stored = JSON.parse(message.data);
    var changed = applyFact(state.timeline, stored);
    if (!changed) return;
    state.dirty.add(changed);
    var kind = stored.event.fact.kind;
    if (kind === 'invocation_opened' || kind === 'invocation_ended') { loadDetail(); refreshSessions(); }
    schedule();
  });
  source.onerror = function () { setLive(source.readyState === 2 ? 'disconnected' : 'reconnecting', 'retry'); };
}

/** Which open invocations no run on this server owns (crashed, or on another host): their open operations are uncertain. */
function loadDetail() {
  var id = state.selected;
  return api('/api/sessions/' + encodeURIComponent(id)).then(function (detail) {
    if (state.selected !== id) return;
    state.timeline.notLive = new Set(detail.invocations.filter(function (i) { return !i.live; })
      .map(function (i) { return i.invocation.invocationId; }));
    state.timeline.order.forEach(function (i) { state.dirty.add(i); });
    schedule();
  }).catch(function () { /* a session with no facts yet: the stream fills it */ });
}

function schedule() {
  if (state.frame) return;
  state.frame = requestAnimationFrame(render);
}

function render() {
  state.frame = 0;
  var main = $('main');
  var atBottom = main.scrollHeight - main.scrollTop - main.clientHeight < 80;
  var container = $('timeline');
  var empty = container.querySelector('.empty');
  if (empty && state.timeline.order.length) empty.remove();
  state.dirty.forEach(function (id) {
    var section = state.timeline.sections.get(id);
    var fresh = renderSection(state.timeline, section, { cancel: cancel });
    var existing = container.querySelector('section[data-invocation="' + CSS.escape(id) + '"]');
    if (existing) existing.replaceWith(fresh); else container.appendChild(fresh);
  });
  state.dirty.clear();
  if (atBottom) main.scrollTop = main.scrollHeight;
}

function cancel(invocationId) {
  api('/api/invocations/' + encodeURIComponent(invocationId) + '/cancel', { method: 'POST', body: {} })
    .then(function () { notice('Cancelling ' + invocationId + ': its in-flight effect finishes and settles first.'); })
    .catch(function (error) { notice(error.message); });
}

function send(sessionId, message) {
  return api('/api/sessions/' + encodeURIComponent(sessionId) + '/turns', { method: 'POST', body: { message: message } })
    .then(function () { $('message').value = ''; notice(''); if (state.selected !== sessionId) select(sessionId); refreshSessions(); })
    .catch(function (error) { notice((error.code ? error.code + ': ' : '') + error.message); });
}

document.addEventListener('DOMContentLoaded', function () {
  $('login-form').addEventListener('submit', function (event) {
    event.preventDefault();
    state.token = $('token').value.trim();
    api('/api/sessions').then(function () {
      sessionStorage.setItem(TOKEN_KEY, state.token);
      $('token').value = '';
      showApp();
    }).catch(function (error) { if (state.token) $('login-error').textContent = error.message; });
  });
  $('sign-out').addEventListener('click', function () { signOut(''); });
  $('compose').addEventListener('submit', function (event) {
    event.preventDefault();
    var message = $('message').value.trim();
    if (message && state.selected) send(state.selected, message);
  });
  $('new-session').addEventListener('click', function () {
    var message = prompt('First message of the new session');
    if (message) send('session-' + crypto.randomUUID().slice(0, 8), message);
  });
  if (state.token) showApp(); else signOut('');
});
`;
