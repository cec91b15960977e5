import type { Command } from 'commander';
import { registerApiCommand } from './api.js';
import { registerDevCommand } from './dev.js';
import { registerExportCommand } from './export.js';
import { registerImportCommand } from './import.js';
import { registerSandboxCommand } from './sandbox.js';
import { registerScheduleCommands } from './schedule.js';
import { registerStatusCommands } from './status.js';
import { registerWorkerCommand } from './worker.js';

/** Adds every subcommand to the program. */
export function registerCommands(program: Command): void {
  registerSandboxCommand(program);
  registerImportCommand(program);
  registerStatusCommands(program);
  registerExportCommand(program);
  registerScheduleCommands(program);
  registerWorkerCommand(program);
  registerApiCommand(program);
  registerDevCommand(program);
}
