import { chromium, type Browser } from 'playwright-core';
import { find } from './needs.js';

/**
 * Debian's headless chromium, driven by playwright-core (no browser download), or undefined
 * when it is not installed (tests then skip with `need(this, 'browser')`); with
 * COEVOLVE_REQUIRE_BROWSER set (CI installs it) a missing browser fails instead.
 */
export async function launchBrowser(): Promise<Browser | undefined> {
  const at = find('browser');
  if (!at) return undefined;
  return chromium.launch({
    executablePath: at,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  }); // playwright gives each launch a fresh profile
}
