import type { Command } from 'commander';
import { bundleDiffSource, diffDirectories, liveDiffSource } from '../../app/diff.js';
import { RESOURCE_NAMES } from '../../admin/resources.js';
import type { DiffResult } from '../../diff/run-diff.js';
import { PorterError } from '../../errors/porter-error.js';
import { checkInputFile, checkOutputDirectory } from '../paths.js';
import { withContext } from '../with-context.js';

interface DiffCommandOptions {
  live?: boolean;
  out?: string;
  json?: boolean;
}

/** The counts per resource, as a small table. */
export function diffTable(result: DiffResult): string {
  const lines = [
    `${'resource'.padEnd(9)} ${'only in A'.padStart(10)} ${'only in B'.padStart(10)} ${'different'.padStart(10)} ${'equal'.padStart(10)}`,
  ];
  for (const resource of RESOURCE_NAMES) {
    const count = result.counts[resource];
    lines.push(
      `${resource.padEnd(9)} ${String(count.onlyA).padStart(10)} ${String(count.onlyB).padStart(10)} ${String(count.different).padStart(10)} ${String(count.equal).padStart(10)}`,
    );
  }
  return lines.join('\n');
}

export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      'Compare two bundles (or a bundle and the target, --live) by natural key; exit 0 when equal, 2 when different',
    )
    .argument('<a>', 'bundle A')
    .argument('[b]', 'bundle B (or --live)')
    .option('--live', 'compare A with the target (ADMIN_BASE_URL), read in bulk')
    .option('--out <dir>', 'where diff.csv and diff.json go', 'porter-diff')
    .option('--json', 'print the counts as JSON')
    .action(async (a: string, b: string | undefined, options: DiffCommandOptions) => {
      if ((b === undefined) === !options.live) {
        throw new PorterError('PORTER_USAGE', 'name bundle B, or pass --live (not both)');
      }
      await checkInputFile(a, 'bundle A');
      if (b !== undefined) await checkInputFile(b, 'bundle B');
      const out = options.out ?? 'porter-diff';
      await checkOutputDirectory(out, '--out');
      await withContext(async (context) => {
        const result = await diffDirectories(
          context,
          bundleDiffSource(a),
          b === undefined ? liveDiffSource(context) : bundleDiffSource(b),
          out,
        );
        if (options.json) console.log(JSON.stringify(result.counts, null, 2));
        else console.log(diffTable(result));
        console.error(
          result.equal
            ? 'equal'
            : `${result.rows} differences written to ${result.files.join(' and ')}`,
        );
        process.exitCode = result.equal ? 0 : 2;
      });
    });
}
