/** The `porter` command: a thin adapter that parses arguments and calls the core. */
import { Command, CommanderError } from 'commander';
import { isPorterError } from '../errors/porter-error.js';
import { registerCommands } from './commands/index.js';
import { PORTER_VERSION } from '../version.js';

const program = new Command()
  .name('porter')
  .description(
    'Bulk import/export of users, groups and ACLs through the admin interface.\n' +
      'Every command targets the sandbox on http://127.0.0.1:8080 unless ADMIN_BASE_URL is set.',
  )
  .version(PORTER_VERSION)
  .showHelpAfterError()
  .exitOverride();

registerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 64;
  } else if (isPorterError(error)) {
    console.error(`porter: ${error.message} [${error.code}]`);
    process.exitCode = error.exitCode;
  } else {
    console.error(
      `porter: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    process.exitCode = 1;
  }
}
