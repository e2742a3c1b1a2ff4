import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (scripts/setup installs it), or CAPTIONFARM_CHROMIUM; headless, no GPU, no network of its own. */
export function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CAPTIONFARM_CHROMIUM ?? '/usr/bin/chromium';
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-gpu'] });
}
