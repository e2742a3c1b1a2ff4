import { Command } from 'commander';
import { defineAgentCommand } from './command.ts';
import { configureTree, runProgram } from '@captionfarm/process/command-line';

// `captionfarm-agent`: the agent on its own, for a machine that installed only this package
// (`npm install --workspace agent`); the same options as `captionfarm agent`.
runProgram(configureTree(defineAgentCommand(new Command('captionfarm-agent'))), process.argv.slice(2));
