/** `porter list`: recent imports, newest first, a page at a time. */
import type { Command } from 'commander';
import type { ImportInfo } from '../../model/import.js';
import { importKind, linkFrom, linksOn, plansOnly } from '../../model/import-story.js';
import { positiveInteger } from '../options.js';
import { withContext } from '../with-context.js';

interface ListOptions {
  limit: number;
  cursor?: string;
  source?: string;
  target?: string;
  json?: boolean;
}

const COLUMNS = [
  'id',
  'state',
  'target',
  'by',
  'resource',
  'mode',
  'records',
  'ok',
  'failed',
  'skipped',
  'unproc',
  'story',
  'created',
];

/** One row of the table: what a person scanning recent imports looks for. */
function row(info: ImportInfo): string[] {
  const { succeeded, failed, skipped, unprocessed, planned } = info.counts;
  // an undo, a retry, the writing of an approved sync: said beside the mode it ran in
  const kind = importKind(info);
  const plain = kind === 'import' || kind === 'sync' || kind === 'dry run';
  const mode = `${info.options.mode}${plain ? (info.options.dryRun ? ' (dry run)' : '') : ` (${kind})`}`;
  const story = [linkFrom(info), ...linksOn(info)].filter((link) => link !== undefined);
  return [
    info.id,
    info.state,
    info.options.target ?? 'default',
    // who started it: a person, a token (an identity provider's, for SCIM's changes)
    info.startedBy ?? '-',
    info.options.resource,
    mode,
    `${info.done}/${info.receivedAt === undefined ? '?' : info.total}`,
    String(plansOnly(info) ? planned : succeeded),
    String(failed),
    String(skipped),
    String(unprocessed),
    story.length > 0 ? story.join('; ') : '-',
    info.createdAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
  ];
}

/** Rows as columns padded to their widest cell. */
export function formatTable(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_cell, column) =>
    Math.max(...rows.map((cells) => cells[column]!.length)),
  );
  return rows
    .map((cells) =>
      cells
        .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  '),
    )
    .join('\n');
}

export function registerListCommand(program: Command): void {
  program
    .command('list')
    .description('List recent imports, newest first, with their state and counts')
    .option('--limit <n>', 'imports per page (at most 1000)', positiveInteger('--limit'), 20)
    .option('--cursor <cursor>', 'start after the page that gave this cursor (its "next")')
    .option(
      '--source <source>',
      'only imports from this source: scim (what SCIM changed, and its held plans), a directory source, a file name',
    )
    .option('--target <name>', 'only imports of this target')
    .option('--json', 'print {"imports": [...], "next": cursor} as JSON')
    .action(async (options: ListOptions) => {
      await withContext(async (context) => {
        const page = await context.store.listPage({
          limit: Math.min(options.limit, 1000),
          cursor: options.cursor,
          source: options.source,
          target: options.target,
        });
        const filters =
          (options.source === undefined ? '' : ` --source ${JSON.stringify(options.source)}`) +
          (options.target === undefined ? '' : ` --target ${JSON.stringify(options.target)}`);
        if (options.json) {
          console.log(JSON.stringify(page, null, 2));
          return;
        }
        if (page.imports.length === 0) {
          console.log(
            page.next
              ? `none on this page: porter list${filters} --cursor ${page.next}`
              : options.cursor
                ? 'no more imports'
                : 'no imports yet',
          );
          return;
        }
        console.log(formatTable([COLUMNS, ...page.imports.map(row)]));
        // ok: succeeded records (planned ones for a dry run or a held sync)
        if (page.next)
          console.log(
            `\nmore: porter list --limit ${options.limit}${filters} --cursor ${page.next}`,
          );
      });
    });
}
