// The tools of a torture run. `charge` and `note` have an effect in the world (a ledger
// line, fsynced before they return); `charge` is reconciled by looking the effect up in
// the ledger, `note` never retries and stays uncertain. `probe` has no effect, and says
// so (`readOnly`: its dispatch rides with its settlement): it marks a moment inside a
// Code mode cell, or among a step's direct calls, where the child may die. `transfer` needs a person's
// approval for every call; its ledger line carries the amount, so the checks can tell
// that only the approved input ran.
import { RecoveryPolicy, ToolCatalog, ToolHandler } from '@factum/tools';
import { appendLedger, readLedger } from './ledger.js';

/** The tools whose effects the ledger counts. */
export const LEDGERED_TOOLS = ['charge', 'note', 'transfer'];

const keyed = {
  type: 'object',
  properties: { key: { type: 'string', minLength: 1 }, amount: { type: 'integer', minimum: 0 } },
  required: ['key'],
  additionalProperties: false,
};

/**
 * @typedef {import('./kill-switch.js').FailpointName} FailpointName
 * `stamp`, on a host of several: which host runs the effect of `key`, under which epoch;
 * each ledger line then carries them and the time the effect happened.
 * @param {{ ledger: string, failpoint?: (name: FailpointName) => void, stamp?: (key: string) => { host: string, epoch: number } }} options
 * @returns {ToolCatalog}
 */
export function tortureCatalog(options) {
  const failpoint = options.failpoint ?? (() => {});
  /** @param {string} key */
  const who = (key) => (options.stamp === undefined ? {} : { ...options.stamp(key), at: Date.now() });
  /** @type {import('@factum/agent-facts').ToolExecutor} */
  const transfer = {
    names: () => ['transfer'],
    async invoke(name, input) {
      const { key, amount } = /** @type {{ key: string, amount?: number }} */ (input);
      // T1 of an approved call is durable; the effect has not happened.
      failpoint('approval_t1');
      appendLedger(options.ledger, {
        key,
        tool: name,
        pid: process.pid,
        amount: amount ?? null,
        ...who(key),
      });
      // Mid-effect: the effect is in the world, the call has not returned, T2 not written.
      failpoint('approval_mid');
      failpoint('approval_t2');
      return { key, applied: true };
    },
  };
  /** @type {import('@factum/agent-facts').ToolExecutor} */
  const effect = {
    names: () => LEDGERED_TOOLS,
    async invoke(name, input) {
      const key = /** @type {{ key: string }} */ (input).key;
      failpoint('effect_start');
      appendLedger(options.ledger, { key, tool: name, pid: process.pid, ...who(key) });
      failpoint('effect_done');
      return { key, applied: true };
    },
  };
  /** @type {import('@factum/agent-facts').ToolExecutor} */
  const probe = {
    names: () => ['probe'],
    async invoke() {
      failpoint('cell');
      return { ok: true };
    },
  };
  const reconcile = RecoveryPolicy.reconcile(async (operation) => {
    const key = /** @type {{ key?: unknown }} */ (operation.input).key;
    const found = readLedger(options.ledger).entries.find((entry) => entry.key === key);
    // The process that ran the effect is dead: the ledger is the whole truth.
    return found
      ? { kind: 'succeeded', value: { key: found.key, applied: true, reconciled: true } }
      : { kind: 'failed', error: { code: 'not_applied', message: `no effect of ${String(key)} happened` } };
  });
  return new ToolCatalog([
    {
      definition: { name: 'charge', description: 'charges once per key', inputSchema: keyed },
      handler: ToolHandler.immediate(effect),
      nesting: 'nestable',
      semantics: 'parallel',
      recovery: reconcile,
    },
    {
      definition: { name: 'note', description: 'notes once per key', inputSchema: keyed },
      handler: ToolHandler.immediate(effect),
      nesting: 'nestable',
      semantics: 'exclusive',
    },
    {
      definition: { name: 'transfer', description: 'moves an amount once per key', inputSchema: keyed },
      handler: ToolHandler.immediate(transfer),
      nesting: 'nestable',
      semantics: 'exclusive',
      recovery: reconcile,
      approval: 'always',
    },
    {
      definition: { name: 'probe', description: 'does nothing', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(probe),
      nesting: 'nestable',
      semantics: 'parallel',
      readOnly: true,
    },
  ]);
}
