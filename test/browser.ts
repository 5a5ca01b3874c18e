import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's headless chromium, driven by playwright-core (no browser download), or undefined
 * when it is not installed; with COEVOLVE_REQUIRE_BROWSER set (CI installs it) a missing
 * browser fails instead.
 */
export async function launchBrowser(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.COEVOLVE_REQUIRE_BROWSER) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
    return undefined;
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] }); // playwright gives each launch a fresh profile
}
