#!/usr/bin/env node
// The package's bin. The sources are TypeScript; tsx (a root devDependency) compiles them on load.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = main(process.argv.slice(2));
