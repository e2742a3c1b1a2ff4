#!/usr/bin/env node
// The `captionfarm-agent` command (`npx captionfarm-agent ...` after `npm install --workspace agent`).
// The agent and the workspace packages it imports are TypeScript sources: tsx's loader runs them in
// this process, so SIGTERM reaches the agent itself (the first drains, a second aborts).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
