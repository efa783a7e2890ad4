import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

const SYSTEM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A headless Chromium: the system's when there is one, else the one `@sparticuz/chromium`
 * ships in the registry (unpacked to the temp directory on first use), so the browser
 * tests run on any machine that can install the workspace. `FACTUM_CHROMIUM=registry`
 * forces the registry's build.
 */
export async function launchChromium(): Promise<{ browser: Browser; source: 'system' | 'registry' }> {
  if (existsSync(SYSTEM_CHROMIUM) && process.env.FACTUM_CHROMIUM !== 'registry') {
    return {
      browser: await chromium.launch({ executablePath: SYSTEM_CHROMIUM, args: SYSTEM_ARGS }),
      source: 'system',
    };
  }
  const { default: packaged } = await import('@sparticuz/chromium');
  const executablePath = await packaged.executablePath();
  return {
    browser: await chromium.launch({ executablePath, args: packaged.args, headless: true }),
    source: 'registry',
  };
}
