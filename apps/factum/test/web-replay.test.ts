import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './launch-chromium.ts';
import { screenshotDir } from './screenshot-dir.ts';
import { echoCall, startHarness, TOKEN } from './server-harness.ts';

const screenshots = screenshotDir();
const SCREENSHOTS = screenshots.path;

describe('the replay report in the web timeline, in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    ({ browser } = await launchChromium());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    screenshots.dispose();
  });

  it('Verify replay shows a session that replays as recorded, and one whose request differs with both facts side by side', async () => {
    await using h = await startHarness();
    h.provider.script(echoCall('call-1', 42), { text: 'done', finishReason: 'stop' });
    const started = await h.api('/api/sessions/s-same/turns', {
      method: 'POST',
      json: { message: 'echo 42' },
    });
    expect(started.status).toBe(202);
    await h.waitForFact((fact) => fact.kind === 'invocation_ended');
    // A session recorded by another build: its request digest is not the one this code makes.
    const planted: Invocation = {
      sessionId: 's-planted',
      turnId: 't',
      runId: 'r',
      invocationId: 'invocation-planted',
    };
    const facts: Fact[] = [
      {
        kind: 'invocation_opened',
        configuration: { cwd: '/workspace', toolMode: 'direct' },
        input: { kind: 'message', content: 'hi', sourceMessages: [] },
      },
      {
        kind: 'model_requested',
        stepId: 'invocation-planted/1',
        modelId: 'scripted',
        purpose: 'main',
        source: { scope: { kind: 'session', id: 's-planted' }, highWater: 0, digest: 'x' },
        inputDigest: 'sha256:planted-by-an-older-build',
        routeIdentity: `openai_chat_completions ${h.provider.baseUrl} scripted`,
      },
      {
        kind: 'model_completed',
        stepId: 'invocation-planted/1',
        output: {
          parts: [{ kind: 'text', text: 'hello' }],
          finishReason: 'stop',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        },
      },
      { kind: 'invocation_ended', outcome: { kind: 'completed' } },
    ];
    for (const fact of facts)
      await h.runtime.log.append(EventWrite.plain(RuntimeEvent.create(planted, fact)));
    const effects = h.effect.started.length;
    const plantedAt = (await h.events()).find(
      (stored) =>
        stored.event.invocation.invocationId === 'invocation-planted' &&
        stored.event.fact.kind === 'model_requested',
    )!.sequence;

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (error) => {
      throw error;
    });
    await page.goto(`${h.server.url}/#token=${TOKEN}`);
    await page.waitForSelector('#app:not(.hidden)');
    expect(await page.isVisible('#replay'), 'no session selected, nothing to replay').toBe(false);

    await page.click('[data-session="s-same"]');
    await page.click('#replay');
    await page.waitForSelector('.replay-summary');
    expect(await page.textContent('.replay-summary')).toContain('1 invocations, 1 same, 0 diverged');
    expect(await page.getAttribute('.replay-invocation', 'data-status')).toBe('same');
    expect(await page.locator('.replay-divergence').count()).toBe(0);

    await page.click('[data-session="s-planted"]');
    expect(await page.isVisible('#replay-report'), 'the other session’s report is gone').toBe(false);
    await page.click('#replay');
    const divergence = page.locator('.replay-divergence[data-kind="request"]');
    await divergence.waitFor();
    expect(await page.textContent('.replay-summary')).toContain('1 diverged');
    expect(await divergence.locator('.replay-where').textContent()).toBe(
      `request at fact 0, recorded sequence ${plantedAt}`,
    );
    const recorded = await divergence.locator('[data-side="recorded"] pre').textContent();
    const replayed = await divergence.locator('[data-side="replayed"] pre').textContent();
    expect(recorded).toContain('sha256:planted-by-an-older-build');
    expect(replayed).toContain('"kind": "model_requested"');
    expect(replayed).not.toContain('planted-by-an-older-build');
    const [left, right] = await Promise.all(
      ['recorded', 'replayed'].map((side) => divergence.locator(`[data-side="${side}"]`).boundingBox()),
    );
    expect(right!.x, 'the two sides stand side by side').toBeGreaterThan(left!.x + left!.width - 1);
    expect(Math.abs(right!.y - left!.y)).toBeLessThan(2);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'replay-report.png'), fullPage: true });
    expect(h.effect.started, 'a replay runs no effect').toHaveLength(effects);
    await page.close();
  }, 120_000);
});
