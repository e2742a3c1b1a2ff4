#!/usr/bin/env node
// The `captionfarm` command (`npx captionfarm ...` in the repository, or a global install). The CLI
// and the workspace packages it imports are TypeScript sources: tsx's loader runs them in this
// process, so Ctrl-C and SIGTERM reach the CLI itself (burn cancels its job, agent drains).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
