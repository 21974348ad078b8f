export { launchBrowser, chromiumPath, CHROMIUM_ARGS } from "./browser";
export { baseUrl, assertConsoleReachable } from "./console-url";
