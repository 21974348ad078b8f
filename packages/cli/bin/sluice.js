#!/usr/bin/env node
// The `sluice` command. The workspace runs TypeScript sources directly (no build step), via tsx.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
