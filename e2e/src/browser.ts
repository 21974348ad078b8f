// Debian's Chromium driven by playwright-core (Playwright's own browser download is not reachable
// from CI machines). `launch` gives every run a fresh temporary profile and removes it afterwards.
import { chromium, type Browser } from "playwright-core";

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

export async function launchBrowser(): Promise<Browser> {
  try {
    return await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  } catch (err) {
    throw new Error(
      `Could not start Chromium at ${chromiumPath()}: install it with \`apt-get install -y chromium\` ` +
        `or point CHROMIUM_PATH at a Chromium binary.\n${(err as Error).message}`,
    );
  }
}
