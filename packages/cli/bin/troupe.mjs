#!/usr/bin/env node
// The `troupe` command. The CLI is TypeScript run through tsx's loader, so there is no build step;
// `npx troupe …` works from the repository root (npm links workspace bins into node_modules/.bin).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2), process.env);
