import type { Command } from 'commander';
import { bundleDiffSource, diffDirectories, diffRows, liveDiffSource } from '../../app/diff.js';
import { RESOURCE_NAMES } from '../../admin/resources.js';
import type { DiffResult, DiffRow } from '../../diff/run-diff.js';
import { PorterError } from '../../errors/porter-error.js';
import { checkInputFile, checkOutputFilesIn } from '../paths.js';

/** The files a diff writes into its --out directory. */
const DIFF_FILES = ['diff.csv', 'diff.json'];
import { withContext } from '../with-context.js';
import { targetOption } from '../options.js';

interface DiffCommandOptions {
  live?: boolean;
  from?: string;
  to?: string;
  out?: string;
  json?: boolean;
  force?: boolean;
}

/** The counts per resource, as a small table. */
/** One difference on one line: resource, key, field, then A → B. */
export function diffLine(row: DiffRow): string {
  return `${row.resource}  ${row.key}  ${row.field}: ${row.a === '' ? '(none)' : row.a} → ${row.b === '' ? '(none)' : row.b}`;
}

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
      'Compare two sides by natural key, each a bundle or a live target: porter diff A.json B.json, porter diff A.json --to NEW, porter diff --from OLD --to NEW; exit 0 when equal, 2 when different',
    )
    .argument('[a]', 'bundle A (or --from TARGET)')
    .argument('[b]', 'bundle B (or --to TARGET)')
    .option('--from <target>', 'side A: this target, read live in bulk', targetOption('--from'))
    .option('--to <target>', 'side B: this target, read live in bulk', targetOption('--to'))
    .option('--live', 'side B: the target `default` (the same as --to default)')
    .option(
      '--out <dir>',
      'write diff.csv and diff.json into this directory (without it the differences are printed)',
    )
    .option('--force', 'overwrite diff.csv and diff.json when the --out directory holds them')
    .option('--json', 'print the counts (and, without --out, the differences) as JSON')
    .action(
      async (
        first: string | undefined,
        second: string | undefined,
        options: DiffCommandOptions,
      ) => {
        const to = options.to ?? (options.live ? 'default' : undefined);
        // the bundles named fill the sides that no target fills, A first
        const files = [first, second].filter((file): file is string => file !== undefined);
        const a = options.from === undefined ? files.shift() : undefined;
        const b = to === undefined ? files.shift() : undefined;
        if (
          files.length > 0 ||
          (a === undefined && options.from === undefined) ||
          (b === undefined && to === undefined)
        ) {
          throw new PorterError(
            'PORTER_USAGE',
            'name each side once: bundle A or --from TARGET, and bundle B or --to TARGET',
          );
        }
        if (a !== undefined) await checkInputFile(a, 'bundle A');
        if (b !== undefined) await checkInputFile(b, 'bundle B');
        const out = options.out;
        if (out === undefined && options.force === true) {
          throw new PorterError(
            'PORTER_USAGE',
            '--force goes with --out: nothing is written without it',
          );
        }
        // a diff of earlier is never overwritten unasked
        if (out !== undefined) {
          await checkOutputFilesIn(out, DIFF_FILES, '--out', options.force === true);
        }
        await withContext(async (context) => {
          const sideA =
            a !== undefined ? bundleDiffSource(a) : liveDiffSource(context, options.from);
          const sideB = b !== undefined ? bundleDiffSource(b) : liveDiffSource(context, to);
          if (out === undefined) {
            // nothing written: the comparison is printed, each difference as it is found
            // JSON streams too: the differences as found, then the counts
            if (options.json) process.stdout.write('{"differences": [');
            let first = true;
            const result = await diffRows(context, sideA, sideB, (row) => {
              if (!options.json) return console.log(diffLine(row));
              process.stdout.write(`${first ? '\n' : ',\n'}  ${JSON.stringify(row)}`);
              first = false;
            });
            if (options.json) {
              process.stdout.write(
                `${first ? '' : '\n'}], "counts": ${JSON.stringify(result.counts)}}\n`,
              );
            } else {
              console.log(diffTable(result));
            }
            console.error(result.equal ? 'equal' : `${result.rows} differences`);
            process.exitCode = result.equal ? 0 : 2;
            return;
          }
          const result = await diffDirectories(context, sideA, sideB, out);
          if (options.json) console.log(JSON.stringify(result.counts, null, 2));
          else console.log(diffTable(result));
          console.error(
            result.equal
              ? 'equal'
              : `${result.rows} differences written to ${result.files.join(' and ')}`,
          );
          process.exitCode = result.equal ? 0 : 2;
        });
      },
    );
}
