import type { Command } from 'commander';

type Register = (program: Command) => void;

/** Each command's module, loaded only when that command runs: a start loads what it uses. */
const COMMANDS: Record<string, () => Promise<Register>> = {
  sandbox: async () => (await import('./sandbox.js')).registerSandboxCommand,
  import: async () => (await import('./import.js')).registerImportCommand,
  watch: async () => (await import('./watch.js')).registerWatchCommand,
  status: async () => (await import('./status.js')).registerStatusCommands,
  list: async () => (await import('./list.js')).registerListCommand,
  export: async () => (await import('./export.js')).registerExportCommand,
  schedule: async () => (await import('./schedule.js')).registerScheduleCommands,
  worker: async () => (await import('./worker.js')).registerWorkerCommand,
  api: async () => (await import('./api.js')).registerApiCommand,
  dev: async () => (await import('./dev.js')).registerDevCommand,
  migrate: async () => (await import('./migrate.js')).registerMigrateCommand,
  diff: async () => (await import('./diff.js')).registerDiffCommand,
  sync: async () => (await import('./sync.js')).registerSyncCommands,
  undo: async () => (await import('./undo.js')).registerUndoCommand,
  targets: async () => (await import('./targets.js')).registerTargetsCommand,
  sources: async () => (await import('./sources.js')).registerSourcesCommand,
  map: async () => (await import('./map.js')).registerMapCommand,
  tokens: async () => (await import('./tokens.js')).registerTokensCommand,
  audit: async () => (await import('./audit.js')).registerAuditCommand,
  notify: async () => (await import('./notify.js')).registerNotifyCommand,
};

/** The module that registers each command name (status.ts holds several). */
const MODULE_OF: Record<string, string> = {
  report: 'status',
  cancel: 'status',
  resume: 'status',
  retry: 'status',
  apply: 'status',
  approve: 'sync',
};

/**
 * Adds the subcommands to the program: only the one named on the command line when it is known,
 * every one otherwise (help, or a name to complain about).
 */
export async function registerCommands(program: Command, argv: readonly string[]): Promise<void> {
  const name = argv.find((arg, index) => index >= 2 && !arg.startsWith('-'));
  const module = name === undefined ? undefined : (MODULE_OF[name] ?? name);
  const wanted = module !== undefined && module in COMMANDS ? [module] : Object.keys(COMMANDS);
  for (const register of await Promise.all(wanted.map((key) => COMMANDS[key]!()))) {
    register(program);
  }
}
