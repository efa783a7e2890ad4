import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './launch-chromium.ts';
import { echoCall, type Harness, startHarness, TOKEN } from './server-harness.ts';

describe('"Fork from here" in the web timeline, in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    ({ browser } = await launchChromium());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  async function signIn(h: Harness): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (error) => {
      throw error;
    });
    await page.goto(`${h.server.url}/`);
    await page.fill('#token', TOKEN);
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#app:not(.hidden)');
    return page;
  }

  it('forks before a step of an ended turn, shows the new session, and its first message runs on the prefix without re-running its effect', async () => {
    await using h = await startHarness();
    h.provider.script(
      echoCall('call-1', 42),
      { text: 'done', finishReason: 'stop' },
      { text: 'forked answer', finishReason: 'stop' },
    );
    const started = await h.api('/api/sessions/s-web/turns', {
      method: 'POST',
      json: { message: 'echo 42' },
    });
    const { invocation } = (await started.json()) as { invocation: { invocationId: string } };
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');

    const page = await signIn(h);
    await page.click('[data-session="s-web"]');
    await page.waitForSelector('.row.ended.completed');
    const steps = page.locator('[data-kind="model_requested"] button.fork');
    await expect.poll(() => steps.count()).toBe(2);
    expect(
      await page.locator('.invocation > header button.fork').count(),
      'the ended invocation forks at its end',
    ).toBe(1);
    await steps.nth(1).click();
    await page.waitForSelector('[data-kind="session_forked"]');
    const forked = decodeURIComponent(new URL(page.url()).hash.replace('#session=', ''));
    expect(forked).not.toBe('s-web');
    expect(await page.textContent('#session-title')).toBe(forked);
    expect(await page.textContent('[data-kind="session_forked"]')).toContain(
      `step ${invocation.invocationId}/2`,
    );
    expect(
      await page.locator('[data-kind="session_forked"] button.fork').count(),
      'a fork fact is no boundary',
    ).toBe(0);

    await page.waitForSelector('#compose[data-state="open"]');
    await page.fill('#message', 'answer differently');
    await page.click('#compose button[type=submit]');
    await page.waitForSelector('.row.ended.completed');
    await h.runtime.engine.drain();
    const fact = (await h.events()).find(({ event }) => event.invocation.sessionId === forked)?.event.fact;
    expect(fact).toMatchObject({ kind: 'session_forked', step: `${invocation.invocationId}/2` });
    const messages = h.provider.requests[2]!.messages as { role: string; content?: unknown }[];
    expect(messages.map((message) => message.role).filter((role) => role !== 'system')).toEqual([
      'user',
      'assistant',
      'tool',
      'user',
    ]);
    expect(h.effect.started, 'the prefix’s echo ran once, before the fork').toEqual(['{"value":42}']);
    await page.close();
  }, 60_000);
});
