import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import { type EventLog, recoverInvocations } from '@factum/event-log';
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './launch-chromium.ts';
import { screenshotDir } from './screenshot-dir.ts';
import { type Harness, startHarness, TOKEN } from './server-harness.ts';

const screenshots = screenshotDir();
const SCREENSHOTS = screenshots.path;

/** A session whose process died mid-effect, then recovered: one uncertain operation, one interrupted call. */
async function writeCrashedSession(log: EventLog): Promise<void> {
  const invocation: Invocation = {
    sessionId: 's-crashed',
    turnId: 'turn-c',
    runId: 'run-c',
    invocationId: 'invocation-crashed',
  };
  const facts: Fact[] = [
    {
      kind: 'invocation_opened',
      configuration: { cwd: '/workspace', toolMode: 'direct' },
      input: { kind: 'message', content: 'charge the card, then email the receipt', sourceMessages: [] },
    },
    {
      kind: 'model_completed',
      stepId: 'step-1',
      output: {
        parts: [
          { kind: 'tool_call', call: { id: 'call-a', name: 'charge_card', input: { amount: 42 } } },
          { kind: 'tool_call', call: { id: 'call-b', name: 'send_email', input: { to: 'a@example.com' } } },
        ],
        finishReason: 'tool_calls',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      },
    },
    {
      kind: 'tool_dispatched',
      operationId: 'step-1:call-a',
      call: {
        id: 'call-a',
        name: 'charge_card',
        input: { amount: 42 },
        origin: { kind: 'provider', stepId: 'step-1' },
      },
      source: { kind: 'mcp', server: 'payments' },
    },
  ];
  for (const fact of facts) await log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
  await recoverInvocations(log);
}

describe('the web timeline in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    ({ browser } = await launchChromium());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    screenshots.dispose();
  });

  async function signIn(h: Harness): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (error) => {
      throw error;
    });
    await page.goto(`${h.server.url}/`);
    await page.fill('#token', 'not-the-token');
    await page.click('#login-form button[type=submit]');
    await expect.poll(() => page.textContent('#login-error')).toContain('refused');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'login.png') });
    await page.fill('#token', TOKEN);
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#app:not(.hidden)');
    return page;
  }

  it('shows a turn’s facts live: T1 joined to its T2, the rejection highlighted, the model text streamed', async () => {
    await using h = await startHarness();
    h.effect.hold();
    h.provider.script(
      {
        toolCalls: [
          { id: 'call-1', name: 'echo', arguments: { value: 42 } },
          { id: 'call-2', name: 'missing_tool', arguments: { path: 'x' } },
        ],
        finishReason: 'tool_calls',
        hold: true,
      },
      {
        text: ['The echo ', 'returned 42; ', 'missing_tool does not exist.'],
        finishReason: 'stop',
        hold: true,
      },
    );
    const started = await h.api('/api/sessions/s-web/turns', {
      method: 'POST',
      json: { message: 'echo 42, then call missing_tool' },
    });
    expect(started.status).toBe(202);
    await h.provider.requestArrived(0);

    const page = await signIn(h);
    await page.click('[data-session="s-web"]');
    await page.waitForSelector('[data-kind="model_requested"]');
    await page.waitForSelector('#compose[data-state="busy"]');
    expect(await page.textContent('#compose-reason'), 'the composer says why it is off').toContain(
      'Busy: a turn is running',
    );
    expect(await page.isDisabled('#message')).toBe(true);
    expect(await page.locator('[data-kind="tool_dispatched"]').count(), 'nothing dispatched yet').toBe(0);

    h.provider.release(0);
    const card = page.locator('[data-kind="tool_dispatched"] .op');
    await card.waitFor();
    expect(await card.getAttribute('data-state'), 'T1 durable, effect running').toBe('in-flight');
    const rejected = page.locator('.row.rejected');
    h.effect.release();
    await page.waitForSelector('[data-kind="tool_dispatched"] .op[data-state="settled"]');
    const settled = await card.textContent();
    expect(settled).toContain('T1');
    expect(settled).toContain('echo');
    expect(settled, 'the settlement sits on the dispatch’s card').toMatch(/T2\s*succeeded/);
    await rejected.waitFor();
    expect(await rejected.textContent()).toContain('did not run: no tool of this name is available');
    // Measured in the page until it holds: a re-render can detach the row being measured,
    // and a detached row has no computed style. A row never highlighted times out here.
    const highlight = 'rgb(253, 240, 239)';
    const backgroundOfRejected = `(() => {
      const row = document.querySelector('.row.rejected');
      return row === null ? null : getComputedStyle(row).backgroundColor;
    })()`;
    const held = await page
      .waitForFunction(`${backgroundOfRejected} === '${highlight}'`, undefined, { timeout: 10_000 })
      .then(
        () => true,
        () => false,
      );
    // On a timeout, what the row shows instead.
    expect(held ? highlight : await page.evaluate(backgroundOfRejected), 'highlighted').toBe(highlight);

    await h.provider.requestArrived(1);
    h.provider.release(1);
    await page.waitForSelector('.row.ended.completed');
    expect(await page.locator('.row.stream .text').textContent()).toBe(
      'The echo returned 42; missing_tool does not exist.',
    );
    const sequences = await page
      .locator('[data-sequence]')
      .evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute('data-sequence'))));
    expect(sequences, 'rows in sequence order').toEqual([...sequences].sort((a, b) => a - b));
    const joined = await page
      .locator('[data-joined]')
      .evaluateAll((nodes) =>
        nodes.flatMap((node) =>
          (node.getAttribute('data-joined') ?? '').split(' ').filter(Boolean).map(Number),
        ),
      );
    const shown = [...sequences, ...joined];
    expect(new Set(shown).size, 'one row per fact: no fact is shown twice').toBe(shown.length);
    expect(await page.locator('[data-kind="tool_settled"]').count(), 'the T2 has no row of its own').toBe(0);
    const logged = (await h.events()).filter((stored) => stored.event.fact.kind !== 'model_observed');
    for (const stored of logged)
      expect(shown, `fact #${stored.sequence} is shown`).toContain(stored.sequence);

    await page.click('[data-kind="tool_dispatched"] .result-toggle');
    const result = page.locator('[data-kind="tool_dispatched"] .op .result');
    await result.waitFor();
    expect(JSON.parse((await result.textContent()) ?? ''), 'the stored result, expanded in place').toEqual({
      echoed: { value: 42 },
    });
    await page.waitForSelector('#compose[data-state="open"]');
    expect(await page.isDisabled('#message')).toBe(false);
    await page.screenshot({ path: join(SCREENSHOTS, 'timeline-live.png'), fullPage: true });
    if (screenshots.kept) console.info(`web-timeline: screenshots in ${SCREENSHOTS}`);
  });

  it('highlights an operation left uncertain by a crash, and the call recovery rejected', async () => {
    await using h = await startHarness();
    await writeCrashedSession(h.runtime.log);
    const page = await signIn(h);
    await page.click('[data-session="s-crashed"]');
    const uncertain = page.locator('.op.uncertain');
    await uncertain.waitFor();
    expect(await uncertain.textContent()).toContain('never settled');
    expect(await uncertain.textContent()).toContain('charge_card');
    // The card names the MCP server the tool came from, as the log recorded it.
    expect(await uncertain.locator('.badge.source').textContent()).toBe('MCP payments');
    expect(await page.locator('.row.rejected').textContent()).toContain(
      'the process stopped before this call was dispatched',
    );
    await page.waitForSelector('.row.ended.failed');
    expect(await page.locator('[data-session="s-crashed"]').textContent()).toMatch(
      /1 unsettled[\s\S]*1 rejected/,
    );
    await page.waitForSelector('#compose[data-state="uncertain"]');
    expect(await page.textContent('#compose-reason')).toContain('factum recover --apply');
    expect(await page.isDisabled('#compose button[type=submit]')).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'timeline-uncertain.png'), fullPage: true });
  });

  it('starts a session from the New form (no browser prompt) and signs in from a login URL', async () => {
    await using h = await startHarness();
    h.provider.script({ text: 'Hello from the new session.', finishReason: 'stop' });
    const page = await browser.newPage();
    page.on('dialog', (dialog) => {
      throw new Error(`a browser dialog opened: ${dialog.message()}`);
    });
    await page.goto(`${h.server.url}/#token=${TOKEN}`);
    await page.waitForSelector('#app:not(.hidden)');
    expect(await page.evaluate('location.href'), 'the token leaves the address bar').not.toContain(TOKEN);
    await page.click('#new-session');
    await page.waitForSelector('#new-form:not(.hidden)');
    await page.fill('#new-session-id', 's-from-form');
    await page.fill('#new-message', 'say hello');
    await page.click('#new-form button[type=submit]');
    await page.waitForSelector('[data-session="s-from-form"].selected');
    await page.waitForSelector('.row.ended.completed');
    expect(await page.locator('[data-kind="invocation_opened"]').textContent()).toContain('user: say hello');
    expect(await page.isHidden('#new-form')).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'timeline-new-session.png'), fullPage: true });
  });

  it('a double click on Send starts one turn: the composer sends one idempotency key per message', async () => {
    await using h = await startHarness();
    const [reply] = h.provider.script({ text: 'Sent once.', finishReason: 'stop', hold: true });
    const page = await browser.newPage();
    const answers: { status: number; replayed: string | null; key: string | null }[] = [];
    page.on('response', (response) => {
      if (!response.url().endsWith('/turns')) return;
      answers.push({
        status: response.status(),
        replayed: response.headers()['idempotent-replayed'] ?? null,
        key: response.request().headers()['idempotency-key'] ?? null,
      });
    });
    await page.goto(`${h.server.url}/#token=${TOKEN}`);
    await page.waitForSelector('#app:not(.hidden)');
    await page.click('#new-session');
    await page.fill('#new-session-id', 's-double');
    await page.fill('#new-message', 'send the invoice to Bob');
    await page.dblclick('#new-form button[type=submit]');
    await reply!.arrived();
    await expect.poll(() => answers.length).toBe(2);
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
    expect(answers[0]!.key).toMatch(/^web-/);
    expect(answers[1]!.key, 'both clicks carry the same key').toBe(answers[0]!.key);
    expect(answers.filter((answer) => answer.replayed === 'true')).toHaveLength(1);
    expect(await page.textContent('#new-error')).toBe('');
    reply!.release();
    await page.waitForSelector('.row.ended.completed');
    const opened = (await h.events()).filter((stored) => stored.event.fact.kind === 'invocation_opened');
    expect(opened).toHaveLength(1);
    expect(h.provider.requests).toHaveLength(1);
  });

  it('a pending approval card shows the call, its input and reason; Approve and Deny (with a note) continue the turn', async () => {
    await using h = await startHarness({ requireApproval: ['echo'] });
    h.provider.script(
      {
        toolCalls: [
          { id: 'call-1', name: 'echo', arguments: { value: 'approve me' } },
          { id: 'call-2', name: 'echo', arguments: { value: 'deny me' } },
          { id: 'call-3', name: 'echo', arguments: { value: 'me too' } },
        ],
        finishReason: 'tool_calls',
      },
      { text: 'Two echoed, one denied.', finishReason: 'stop' },
    );
    const page = await signIn(h);
    expect(
      (await h.api('/api/sessions/s-approval/turns', { method: 'POST', json: { message: 'echo twice' } }))
        .status,
    ).toBe(202);
    await page.click('[data-session="s-approval"]');
    const pending = page.locator('.approval[data-state="pending"]');
    await expect.poll(() => pending.count()).toBe(3);
    const first = pending.first();
    expect(await first.textContent()).toContain('echo');
    expect(await first.textContent()).toContain('approve me');
    expect(await first.textContent()).toContain('needs approval');
    await page.waitForSelector('#compose[data-state="awaiting_approval"]');
    await page.screenshot({ path: join(SCREENSHOTS, 'timeline-approval.png'), fullPage: true });
    expect(h.effect.started).toEqual([]);

    // The decisions' requests pass through here, so one can be held on its way.
    const requests: Route[] = [];
    await page.route('**/api/operations/*/decision', (route) => void requests.push(route));
    const nth = async (count: number) => {
      await expect.poll(() => requests.length).toBe(count);
      return requests[count - 1]!;
    };
    const card = (value: string) => page.locator('.approval', { hasText: value });

    // The note is typed before another card's decision arrives: the section is drawn
    // again for that fact, and the note must survive it (and go with the denial).
    const deny = card('deny me');
    await deny.locator('.approval-note').fill('not this one');
    await card('approve me').locator('button.approve').click();
    await (await nth(1)).continue();
    await page.waitForSelector('.approval[data-state="approved"]');
    expect(await deny.locator('.approval-note').inputValue()).toBe('not this one');

    // A denial on its way stays disabled when the section is drawn again meanwhile (the
    // third card's decision redraws it): a second click would send a second decision.
    const denyButton = await deny.locator('button.deny').elementHandle();
    await deny.locator('button.deny').click();
    const denying = await nth(2);
    await card('me too').locator('button.approve').click();
    await (await nth(3)).continue();
    await page.waitForFunction((button) => !button?.isConnected, denyButton);
    await expect.poll(() => page.locator('.approval[data-state="approved"]').count()).toBe(2);
    expect(await deny.locator('button.deny').isDisabled()).toBe(true);
    expect(await deny.locator('button.approve').isDisabled()).toBe(true);
    await denying.continue();
    await page.waitForSelector('.approval[data-state="denied"]');
    expect(await page.locator('.approval[data-state="denied"]').textContent()).toContain(
      'by web: not this one',
    );
    await page.waitForSelector('.row.ended.completed');
    expect(await page.locator('.row.rejected').textContent()).toContain(
      'did not run: a person denied this call: not this one',
    );
    expect(h.effect.started, 'only the approved inputs ran, once each').toEqual([
      JSON.stringify({ value: 'approve me' }),
      JSON.stringify({ value: 'me too' }),
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, 'timeline-approval-decided.png'), fullPage: true });
  });

  it('Resolve on an uncertain operation records the person’s outcome and unblocks the composer', async () => {
    await using h = await startHarness();
    await writeCrashedSession(h.runtime.log);
    const page = await signIn(h);
    await page.click('[data-session="s-crashed"]');
    const uncertain = page.locator('.op.uncertain');
    await uncertain.waitFor();
    await uncertain.locator('.resolve-outcome').selectOption('not_run');
    await uncertain.locator('.resolve-button').click();
    expect(
      await h.events().then((events) => events.some((e) => e.event.fact.kind === 'tool_reconciled')),
    ).toBe(false);
    await uncertain.locator('.resolve-note').fill('the card was never charged');
    await uncertain.locator('.resolve-button').click();
    await page.waitForSelector('.op[data-state="failed"] .resolved-by');
    expect(await page.locator('.op .resolved-by').textContent()).toContain(
      'resolved by web: the card was never charged',
    );
    await page.waitForSelector('#compose[data-state="open"]');
    const reconciled = await h.waitForFact((fact) => fact.kind === 'tool_reconciled');
    expect(reconciled.event.fact).toMatchObject({ policy: 'operator', decision: { kind: 'not_run' } });
  });
});
