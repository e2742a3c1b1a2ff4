#!/usr/bin/env -S npx tsx
import { runProgram } from '@captionfarm/process/command-line';
import { readCliEnv } from './env.ts';
import { createProgram } from './program.ts';

const program = createProgram(readCliEnv());
const argv = process.argv.slice(2);
// Alone, `captionfarm` shows what it can do (on stdout, exit 0) rather than commander's error.
if (argv.length === 0) program.outputHelp();
// commander prints its own messages (and the help); parse errors exit 2 like our usage errors.
else runProgram(program, argv);
