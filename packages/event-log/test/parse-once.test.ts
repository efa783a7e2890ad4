import { canonicalJson, chainLink, EventWrite, FactParseError, RuntimeEvent } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog, stagedForm } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { bounds, facts, invocation, write } from './support/facts.ts';

/** A `tool_dispatched` whose JSON input is the caller's own object. */
function dispatchWith(input: Record<string, unknown>, operationId = 's:c') {
  return RuntimeEvent.create(invocation(), {
    kind: 'tool_dispatched',
    operationId,
    call: { id: operationId, name: 'echo', input: input as never, origin: { kind: 'provider', stepId: 's' } },
  });
}

async function refusal(promise: Promise<unknown>): Promise<AppendRefusedError> {
  const error = await promise.catch((caught: unknown) => caught);
  if (!AppendRefusedError.isInstance(error)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

// Events made by `RuntimeEvent.create` are parsed once, there; the log checks again only
// what their caller could still change, and parses everything else in full.
describe.each(testStores())('events parsed once ($name)', (stores) => {
  it('a look-alike of a created event is parsed in full: a forged field is refused, nothing written', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    await log.append(write(invocation(), facts.opened()));
    const good = dispatchWith({ ok: true });
    // The same fields on an object `create` did not make: a copy, then a forged one.
    const forged = structuredClone(good) as { fact: { call: { origin: { stepId: unknown } } } };
    forged.fact.call.origin.stepId = '';
    const error = await refusal(log.append(EventWrite.plain(forged as unknown as RuntimeEvent)));
    expect(error.code).toBe('invalid_write');
    expect(error.message).toContain('fact.call.origin.stepId');
    expect(FactParseError.isInstance(error.cause)).toBe(true);
    const unknownKey = { ...structuredClone(good), extra: 'x' } as unknown as RuntimeEvent;
    expect((await refusal(log.append(EventWrite.plain(unknownKey)))).code).toBe('invalid_write');
    expect((await log.prefix(bounds)).highWater).toBe(1);
    // An exact copy parses, and is stored like the original.
    await log.append(EventWrite.plain(structuredClone(good)));
    expect((await log.prefix(bounds)).highWater).toBe(2);
  });

  it('a tool input changed by its caller after create is checked again and refused alone in its batch', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    await log.append(write(invocation(), facts.opened()));
    const input: Record<string, unknown> = { path: '/tmp/a' };
    const changed = dispatchWith(input, 's:c1');
    input.size = Number.NaN;
    const results = await Promise.allSettled([
      log.append(EventWrite.plain(changed)),
      log.append(EventWrite.plain(dispatchWith({ path: '/tmp/b' }, 's:c2'))),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled']);
    const error = (results[0] as PromiseRejectedResult).reason as AppendRefusedError;
    expect(AppendRefusedError.isInstance(error) && error.code).toBe('invalid_write');
    expect(error.message).toContain('fact.call.input');
    const stored = (await log.prefix(bounds)).events.map((event) => event.event.fact);
    expect(stored.map((fact) => ('operationId' in fact ? fact.operationId : fact.kind))).toEqual([
      'invocation_opened',
      's:c2',
    ]);
    // Put right again, the same event is accepted: nothing of it had been recorded.
    delete input.size;
    await log.append(EventWrite.plain(changed));
    expect(await log.verifyChain()).toMatchObject({ ok: true, events: 3 });
  });

  it('the envelope of a created event cannot change after its parse: what is stored is what was parsed', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const opened = RuntimeEvent.create(invocation(), facts.opened());
    expect(() => {
      (opened.invocation as { sessionId: string }).sessionId = '';
    }).toThrow(TypeError);
    expect(() => {
      (opened as { fact: unknown }).fact = { kind: 'bogus' };
    }).toThrow(TypeError);
    await log.append(EventWrite.plain(opened));
    const [stored] = (await log.prefix(bounds)).events;
    expect(stored?.event).toEqual(RuntimeEvent.parse(structuredClone(opened)));
  });

  it('the staged form of a committed event is the body the log stores and its digest, made once', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    const opened = RuntimeEvent.create(invocation(), facts.opened());
    expect(stagedForm(opened)).toBeUndefined();
    await log.append(EventWrite.plain(opened));
    const input: Record<string, unknown> = { path: '/tmp/a' };
    const dispatched = dispatchWith(input);
    await log.append(EventWrite.plain(dispatched));
    const staged = stagedForm(dispatched)!;
    // A change the caller makes after the commit reaches neither the log nor the form.
    input.path = '/tmp/changed';
    const read = (await log.prefix(bounds)).events.map((event) => event.event);
    expect(JSON.parse(staged.body)).toEqual(read[1]);
    expect(staged.body).not.toContain('/tmp/changed');
    expect(staged.bytes).toBe(Buffer.byteLength(staged.body));
    const head = await log.sessionHead(invocation().sessionId);
    const first = stagedForm(opened)!;
    expect(first.body).toBe(canonicalJson(read[0]));
    expect(head.digest).toBe(chainLink(chainLink(undefined, first.digest), staged.digest));
  });
});
