// Runs once before the browser tests: fail fast, with the fix, when Chromium or the console is missing.
import { assertChromiumInstalled } from "./browser";
import { assertConsoleReachable } from "./console-url";

export default async function globalSetup(): Promise<void> {
  assertChromiumInstalled();
  await assertConsoleReachable();
}
