// Tests import the console's server modules outside Next.js; `server-only` (which guards them from
// client bundles) would throw there, so vitest resolves it to this empty module.
export {};
