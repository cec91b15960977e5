/** The `porter` command: a thin adapter that parses arguments and calls the core. */
import { Command, CommanderError } from 'commander';
import { ERROR_CODES } from '../errors/codes.js';
import { isPorterError } from '../errors/porter-error.js';
import { runAuditedCli } from './audit-hooks.js';
import { registerCommands } from './commands/index.js';
import { safeSuggestion } from './suggestions.js';
import { PORTER_VERSION } from '../version.js';

/** One line on standard error: what went wrong and its code, never a stack trace. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

const program = new Command()
  .name('porter')
  .description(
    'Bulk import/export of users, groups and ACLs through the admin interface.\n' +
      'Commands that work on an admin server take --target NAME, one of `porter targets` ' +
      '(PORTER_TARGETS_FILE names them). Without --target they use the target "default": ' +
      "the targets file's, else ADMIN_BASE_URL, else (with no targets file) the sandbox on " +
      'http://127.0.0.1:8080; with none of these, a command that needs a target is refused.',
  )
  .version(PORTER_VERSION)
  .configureOutput({
    // a wrong argument is one line with its code, like every other error
    outputError: (text, write) =>
      write(
        `porter: ${oneLine(safeSuggestion(text.replace(/^error: /, '')))} (see --help) [PORTER_USAGE]\n`,
      ),
  })
  .exitOverride();

await registerCommands(program, process.argv);

try {
  await runAuditedCli(program, () => program.parseAsync(process.argv));
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : ERROR_CODES.PORTER_USAGE.exitCode;
  } else if (isPorterError(error)) {
    console.error(`porter: ${oneLine(error.message)} [${error.code}]`);
    process.exitCode = error.exitCode;
  } else {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`porter: ${oneLine(message)} [PORTER_INTERNAL]`);
    // the stack is for whoever debugs porter, on request
    if (/^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '') && error instanceof Error) {
      console.error(error.stack);
    }
    process.exitCode = ERROR_CODES.PORTER_INTERNAL.exitCode;
  }
}
