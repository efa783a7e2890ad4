// What the scripted model answers in one turn of a torture child. Every tool call
// carries a key unique in the log, which is how the ledger names the operation.

/** @typedef {import('@factum/model/testing').ScriptedReply} ScriptedReply */
/** @typedef {'direct' | 'stream' | 'code' | 'handoff' | 'invalid' | 'approval'} TurnKind */

/** @type {readonly TurnKind[]} */
export const TURN_KINDS = ['direct', 'direct', 'stream', 'code', 'code', 'handoff', 'invalid', 'approval'];

/**
 * @param {import('./random.js').Random} random
 * @returns {ScriptedReply}
 */
function finalText(random) {
  const pieces = Array.from({ length: random.int(1, 6) }, (_, i) => `piece ${i} `);
  return { text: pieces, finishReason: 'stop', chunkDelayMs: random.int(0, 2) };
}

/**
 * Splits a JSON text into pieces, so arguments stream in several deltas.
 * @param {import('./random.js').Random} random
 * @param {string} text
 */
function pieces(random, text) {
  const cut = random.int(1, Math.max(1, text.length - 1));
  return [text.slice(0, cut), text.slice(cut)];
}

/**
 * What the model answers after a parked run was continued: usually a final text, at times
 * the same transfer again with another amount (it needs its own approval).
 * @param {import('./random.js').Random} random
 * @param {string} keyBase the parked turn's
 * @returns {ScriptedReply[]}
 */
export function continuationReplies(random, keyBase) {
  if (random.next() < 0.8) return [finalText(random)];
  const again = { key: `${keyBase}.1`, amount: 1_000_002 };
  return [
    {
      toolCalls: [{ id: 'call-1', name: 'transfer', arguments: JSON.stringify(again) }],
      finishReason: 'tool_calls',
    },
  ];
}

/**
 * A direct call's tool: mostly `charge`, then `note`, and now and then the read-only
 * `probe`, whose dispatch rides with its settlement beside the others' waited-for ones.
 * @param {number} draw
 */
function pickDirect(draw) {
  if (draw < 0.6) return 'charge';
  return draw < 0.85 ? 'note' : 'probe';
}

/**
 * The replies of one turn, in the order its model requests will take them.
 * @param {import('./random.js').Random} random
 * @param {TurnKind} kind
 * @param {string} keyBase unique per turn
 * @returns {ScriptedReply[]}
 */
export function turnReplies(random, kind, keyBase) {
  switch (kind) {
    case 'stream':
      return [finalText(random)];
    case 'direct':
    case 'handoff': {
      const calls = Array.from({ length: random.int(1, 3) }, (_, i) => ({
        id: `call-${i}`,
        name: pickDirect(random.next()),
        arguments: pieces(random, JSON.stringify({ key: `${keyBase}.${i}`, amount: i })),
      }));
      return [
        { toolCalls: calls, finishReason: 'tool_calls', chunkDelayMs: random.int(0, 1) },
        finalText(random),
      ];
    }
    case 'approval': {
      // A call needing none, a transfer that parks the run, and a second call with the
      // transfer's call id and another amount (rejected as a repeat, never run). The
      // continuation's model tries the same transfer with another amount: that call
      // needs its own approval, and parks the continuation in turn.
      const transfer = { key: `${keyBase}.1`, amount: random.int(1, 1000) };
      const calls = [
        { id: 'call-0', name: 'charge', arguments: JSON.stringify({ key: `${keyBase}.0`, amount: 0 }) },
        { id: 'call-1', name: 'transfer', arguments: pieces(random, JSON.stringify(transfer)) },
        { id: 'call-1', name: 'transfer', arguments: JSON.stringify({ ...transfer, amount: 1_000_001 }) },
      ];
      return [{ toolCalls: calls, finishReason: 'tool_calls', chunkDelayMs: random.int(0, 1) }];
    }
    case 'invalid': {
      // Inputs the schema refuses, arguments that are not JSON, a tool that does not exist.
      const calls = [
        { id: 'call-0', name: 'charge', arguments: JSON.stringify({ amount: -1 }) },
        { id: 'call-1', name: 'charge', arguments: '{"key": ' },
        { id: 'call-2', name: 'vanish', arguments: JSON.stringify({ key: `${keyBase}.2` }) },
        { id: 'call-3', name: 'note', arguments: JSON.stringify({ key: `${keyBase}.3` }) },
      ];
      return [{ toolCalls: calls, finishReason: 'tool_calls' }, finalText(random)];
    }
    case 'code': {
      const keys = Array.from({ length: random.int(1, 4) }, (_, i) => `${keyBase}.${i}`);
      const source = [
        `const keys = ${JSON.stringify(keys)};`,
        'let n = 0;',
        'for (const key of keys) {',
        '  await tools.probe({});',
        `  await tools.${random.next() < 0.8 ? 'charge' : 'note'}({ key });`,
        '  n += 1;',
        "  notify('charged ' + n);",
        '}',
        'try { await tools.charge({ wrong: true }); } catch (error) { n += 100; }',
        `let spin = 0; for (let i = 0; i < ${random.int(0, 20_000)}; i++) spin += i;`,
        "text('done ' + n);",
      ].join('\n');
      return [
        {
          toolCalls: [{ id: 'call-0', name: 'exec', arguments: { code: source } }],
          finishReason: 'tool_calls',
        },
        finalText(random),
      ];
    }
    default:
      return /** @type {never} */ (kind);
  }
}
