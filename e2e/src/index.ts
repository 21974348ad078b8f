export { chromiumPath, CHROMIUM_ARGS } from "./browser";
export { baseUrl, assertConsoleReachable } from "./console-url";
export { test, expect, signedIn, screenshot, DEMO_PASSWORD } from "./fixtures";
