// Headless Chromium for page tests: Debian's `chromium` (CHROMIUM_PATH, else `chromium` on the
// PATH), driven by playwright-core — never a downloaded browser. Without one a suite is skipped
// with the reason printed, or, with SIGNALYARD_REQUIRE_BROWSER=1 (CI), fails. The inspector's and
// the web-chat example's page tests use it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { describe, it } from 'vitest';

const REQUIRED = process.env.SIGNALYARD_REQUIRE_BROWSER === '1';

function findChromium(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given !== undefined && given !== '') return existsSync(given) ? given : undefined;
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const path = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (path !== '') return path;
    } catch {
      // not on the PATH
    }
  }
  return undefined;
}

const executablePath = findChromium();

/** Launches headless Chromium. */
export function launchBrowser(): Promise<Browser> {
  if (executablePath === undefined)
    return Promise.reject(new Error('No Chromium: use describeBrowser around the tests'));
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
}

/** `describe` for tests that need Chromium: skipped with a reason, or failing under SIGNALYARD_REQUIRE_BROWSER=1. */
export function describeBrowser(name: string, fn: () => void): void {
  if (executablePath !== undefined) {
    describe(name, fn);
  } else if (REQUIRED) {
    describe(name, () => {
      it('needs Chromium (SIGNALYARD_REQUIRE_BROWSER=1)', () => {
        throw new Error(
          'SIGNALYARD_REQUIRE_BROWSER=1 but no Chromium was found: apt-get install -y chromium, or set CHROMIUM_PATH',
        );
      });
    });
  } else {
    console.warn(
      `SKIPPED "${name}": no Chromium (apt-get install -y chromium, or set CHROMIUM_PATH). SIGNALYARD_REQUIRE_BROWSER=1 makes this a failure.`,
    );
    describe.skip(name, fn);
  }
}
