import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { describeIf } from './skip';

// The browser of the page tests: Debian's Chromium driven by playwright-core (no browser
// download), launched the same way by every *.browser.test.ts, with screenshots in one folder.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = path.join(__dirname, '..', '..', 'test-output', 'screenshots');

/** `describe` when Chromium is there; outside CI a machine without it skips (listed at the end), CI installs it and must run it. */
export const describeWithChromium = describeIf(existsSync(CHROMIUM), 'needs-chromium', `no Chromium at ${CHROMIUM}`);

/** Chromium, headless and quiet (nothing it does on its own reaches the network), with the screenshot folder made. */
export function launchChromium(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
