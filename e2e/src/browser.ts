// Debian's Chromium (Playwright's own browser download is not reachable from CI machines): its path and
// flags, used by playwright.config.ts for every test.
import { existsSync } from "node:fs";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
}

/** Fail before the first test with the fix, instead of Playwright's "browser not installed" advice. */
export function assertChromiumInstalled(): void {
  if (!existsSync(chromiumPath()))
    throw new Error(
      `No Chromium at ${chromiumPath()}: install it with \`apt-get install -y chromium\` ` +
        `or point CHROMIUM_PATH at a Chromium binary.`,
    );
}
