import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { startHarness } from './server-harness.ts';

describe('the web timeline’s assets', () => {
  it('are served without a token, under a strict content security policy, and the script parses', async () => {
    await using h = await startHarness();
    const page = await h.api('/', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html, 'no inline script: the policy would block it').not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).toContain('/assets/timeline.js');

    const script = await h.api('/assets/timeline.js', { token: null });
    expect(script.headers.get('content-type')).toContain('text/javascript');
    const source = await script.text();
    expect(
      () => new Script(source, { filename: 'timeline.js' }),
      'the browser code is valid JavaScript',
    ).not.toThrow();
    expect(source).not.toContain('innerHTML');
    const style = await h.api('/assets/timeline.css', { token: null });
    expect(style.headers.get('content-type')).toContain('text/css');
    expect(await style.text()).toContain('.op.uncertain');
  });
});
