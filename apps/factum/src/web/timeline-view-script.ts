/**
 * Browser code that renders the timeline model into DOM nodes. Every value from the
 * log goes in through `textContent`, never as HTML, so a fact cannot inject markup.
 */
export const TIMELINE_VIEW_SCRIPT = String.raw`
function h(tag, props, children) {
  var node = document.createElement(tag);
  if (props) {
    for (var name in props) {
      var value = props[name];
      if (value === undefined || value === null || value === false) continue;
      if (name === 'text') node.textContent = value;
      else if (name === 'class') node.className = value;
      else if (name.slice(0, 2) === 'on') node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value);
    }
  }
  (children || []).forEach(function (child) {
    if (child === null || child === undefined || child === false) return;
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  });
  return node;
}

function clock(timestamp) {
  var date = new Date(timestamp);
  function pad(n, w) { return String(n).padStart(w, '0'); }
  return pad(date.getHours(), 2) + ':' + pad(date.getMinutes(), 2) + ':' + pad(date.getSeconds(), 2) +
    '.' + pad(date.getMilliseconds(), 3);
}

function shortJson(value, limit) {
  var text = JSON.stringify(value, null, 2);
  if (text === undefined) return '';
  return text.length > limit ? text.slice(0, limit) + ' \u2026' : text;
}

function gutter(row, last) {
  var label = '#' + row.sequence + (last && last !== row.sequence ? '\u2013' + last : '');
  return h('div', { class: 'gutter' }, [h('span', { class: 'seq', text: label }), h('br'), clock(row.timestamp)]);
}

function statusBadge(status) {
  var labels = { open: 'open', running: 'running', completed: 'completed', failed: 'failed',
    cancelled: 'cancelled', paused: 'paused for handoff' };
  return h('span', { class: 'badge ' + status, text: labels[status] || status });
}

function renderOperation(timeline, op) {
  var fact = op.fact;
  var state = operationState(timeline, op);
  var origin = fact.call.origin.kind === 'provider' ? 'from step ' + fact.call.origin.stepId
    : fact.call.origin.kind.replace('_', ' ') + ' of ' + fact.call.origin.parentOperationId;
  var settlement;
  if (state === 'settled' || state === 'failed') {
    var done = op.settled || op.reconciled;
    var outcome = op.settled ? op.settled.outcome : op.reconciled.fact.decision;
    var detail = outcome.kind === 'succeeded' ? 'succeeded \u00b7 result ' + outcome.result.bytes + ' bytes stored'
      : 'failed \u00b7 ' + outcome.error.code + ': ' + outcome.error.message;
    settlement = [h('span', { class: 'badge t2', text: op.settled ? 'T2' : 'reconciled' }), h('span', { text: detail }),
      h('span', { class: 'kind', text: '#' + done.sequence })];
  } else if (state === 'in-flight') {
    settlement = [h('span', { class: 'badge warn', text: 'in flight' }),
      h('span', { text: 'dispatched; the effect is running and has not settled yet' })];
  } else {
    settlement = [h('span', { class: 'badge warn', text: '\u26a0 uncertain' }),
      h('span', { text: 'dispatched but never settled: the effect may or may not have happened' })];
  }
  var notes = op.notes.map(function (note) { return h('div', { text: '\u2022 ' + note.message + '  (#' + note.sequence + ')' }); });
  var card = h('div', { class: 'op ' + state, 'data-operation': fact.operationId, 'data-state': state }, [
    h('div', { class: 'dispatch' }, [
      h('div', { class: 'line' }, [h('span', { class: 'badge t1', text: 'T1' }), h('span', { class: 'tool', text: fact.call.name }),
        h('span', { class: 'kind', text: fact.operationId + ' \u00b7 ' + origin })]),
      h('pre', { class: 'json', text: shortJson(fact.call.input, 600) }),
      notes.length ? h('div', { class: 'notes' }, notes) : null,
    ]),
    h('div', { class: 'settlement' }, settlement),
  ]);
  return h('div', { class: 'row', 'data-sequence': op.sequence, 'data-kind': 'tool_dispatched' }, [gutter(op), h('div', {}, [card])]);
}

function renderStream(row) {
  return h('div', { class: 'row stream' + (row.done ? '' : ' streaming'), 'data-sequence': row.sequence, 'data-kind': 'model_observed' }, [
    gutter(row, row.last),
    h('div', {}, [
      h('div', { class: 'line' }, [h('span', { class: 'badge', text: 'model' }),
        h('span', { class: 'kind', text: (row.done ? 'streamed' : 'streaming') + ' \u00b7 step ' + row.stepId })]),
      row.reasoning ? h('div', { class: 'reasoning', text: row.reasoning }) : null,
      row.text ? h('div', { class: 'text', text: row.text }) : null,
      row.toolDeltas ? h('div', { class: 'kind', text: row.toolDeltas + ' tool-call pieces streamed' }) : null,
    ]),
  ]);
}

function renderLink(row) {
  var target = row.target;
  var name = target ? target.fact.call.name : row.fact.operationId;
  var what = row.fact.kind === 'tool_settled' ? 'T2 of #' + (target ? target.sequence : '?') + ' ' + name + ': ' + row.fact.outcome.kind
    : row.fact.kind === 'tool_notified' ? 'note from #' + (target ? target.sequence : '?') + ' ' + name + ': ' + row.fact.message
    : 'reconciled #' + (target ? target.sequence : '?') + ' ' + name + ' (' + row.fact.policy + '): ' + row.fact.decision.kind;
  return h('div', { class: 'row quiet', 'data-sequence': row.sequence, 'data-kind': row.fact.kind }, [
    gutter(row), h('div', { class: 'line' }, [h('span', { text: '\u21b3 ' + what })]),
  ]);
}

function describeFact(fact) {
  switch (fact.kind) {
    case 'invocation_opened': {
      var input = fact.input;
      var head = input.kind === 'message' ? 'user: ' + input.content
        : input.kind === 'continuation' ? 'continues run ' + input.source.invocation.runId
        : 'resumes handoff ' + input.pause.intent.handoffId;
      var config = fact.configuration ? ' \u00b7 ' + fact.configuration.toolMode + ' tools' : '';
      return { title: 'opened', body: head, meta: config };
    }
    case 'model_requested':
      return { title: 'model request', meta: fact.stepId + ' \u00b7 ' + fact.modelId + ' \u00b7 prompt from #' + fact.source.highWater, quiet: true };
    case 'model_completed': {
      var calls = fact.output.parts.filter(function (p) { return p.kind === 'tool_call'; })
        .map(function (p) { return p.call.name; });
      var text = fact.output.parts.filter(function (p) { return p.kind === 'text'; }).map(function (p) { return p.text; }).join('');
      var usage = fact.output.usage;
      return { title: 'model answered', body: text, meta: fact.output.finishReason + ' \u00b7 ' + usage.inputTokens + ' in / ' +
        usage.outputTokens + ' out' + (calls.length ? ' \u00b7 calls ' + calls.join(', ') : '') };
    }
    case 'invocation_ended': {
      var outcome = fact.outcome;
      var body = outcome.kind === 'failed' ? outcome.error.code + ': ' + outcome.error.message
        : outcome.kind === 'cancelled' ? 'by ' + outcome.source
        : outcome.kind === 'handoff_paused' ? 'successor run ' + outcome.pause.intent.successorRunId + ' (handoff ' + outcome.pause.intent.handoffId + ')'
        : '';
      return { title: 'ended', meta: 'invocation ended', body: body, ended: terminalStatus(outcome) };
    }
    default:
      return { title: fact.kind.replace('_', ' '), body: shortJson(fact, 400) };
  }
}

function renderFact(row) {
  var fact = row.fact;
  if (fact.kind === 'tool_rejected') {
    return h('div', { class: 'row rejected', 'data-sequence': row.sequence, 'data-kind': fact.kind }, [gutter(row), h('div', {}, [
      h('div', { class: 'line' }, [h('span', { class: 'badge bad', text: 'rejected' }), h('span', { class: 'tool mono', text: fact.name }),
        h('span', { class: 'kind', text: fact.operationId })]),
      h('div', { class: 'why', text: rejectionSentence(fact.reason) }),
      h('pre', { class: 'json', text: shortJson(fact.input, 400) }),
    ])]);
  }
  var d = describeFact(fact);
  if (fact.kind === 'model_completed' && row.streamed) d.body = '';
  var classes = 'row' + (d.quiet ? ' quiet' : '') + (d.ended ? ' ended ' + d.ended : '');
  return h('div', { class: classes, 'data-sequence': row.sequence, 'data-kind': fact.kind }, [gutter(row), h('div', {}, [
    h('div', { class: 'line' }, [d.ended ? statusBadge(d.ended) : h('span', { class: 'badge', text: d.title }),
      d.meta ? h('span', { class: 'kind', text: d.meta }) : null]),
    d.body ? h('pre', { text: d.body }) : null,
  ])]);
}

function renderSection(timeline, section, actions) {
  var inv = section.invocation;
  var live = section.status === 'open' && !timeline.notLive.has(inv.invocationId);
  var status = live ? 'running' : section.status === 'open' ? 'open' : section.status;
  var rows = section.rows.map(function (row) {
    if (row.kind === 'operation') return renderOperation(timeline, row);
    if (row.kind === 'stream') return renderStream(row);
    if (row.kind === 'link') return renderLink(row);
    return renderFact(row);
  });
  return h('section', { class: 'invocation', 'data-invocation': inv.invocationId }, [
    h('header', {}, [statusBadge(status), h('code', { text: inv.invocationId }),
      h('span', { class: 'meta', text: inv.turnId + ' \u00b7 ' + inv.runId }), h('span', { class: 'spacer' }),
      live ? h('button', { class: 'danger', type: 'button', text: 'Cancel', onclick: function () { actions.cancel(inv.invocationId); } }) : null]),
  ].concat(rows));
}
`;
