/** `porter map test`: a mapping file tried on the first rows of a file, nothing stored or sent. */
import { checkEncoding, ENCODING_OPTION_TEXT } from '../../ingest/text-encoding.js';
import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { AdminClient } from '../../admin/client.js';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import { loadEnv } from '../../config/env.js';
import { checkTargetAllowed } from '../../auth/target-limits.js';
import { usableTarget } from '../../targets/job-target.js';
import { loadTargets } from '../../targets/targets.js';
import { formatMapTest, testMapping } from '../../mapping/map-test.js';
import { readMappingFile } from '../../mapping/read-mapping-file.js';
import { oneOf, positiveInteger } from '../options.js';
import { checkInputFile, readJsonFile } from '../paths.js';

interface MapTestValues {
  map: string;
  resource: ResourceName;
  rows: number;
  target?: string;
  format: 'text' | 'json';
  delimiter?: string;
  listSeparator?: string;
  encoding?: string;
}

/** The records of a target's resource, for `$unique`: read once, streamed, through one connection. */
function targetDirectory(name: string, resource: ResourceName) {
  return async function* (): AsyncGenerator<Record<string, unknown>> {
    const target = usableTarget(loadTargets(loadEnv()).require(name));
    // a token's limits hold here as in an import (`--token`, PORTER_TOKEN)
    checkTargetAllowed(target.name);
    const client = new AdminClient({ ...target.client!, connections: 1 });
    try {
      for await (const batch of client.streamBatches(resource)) {
        yield* batch as Array<Record<string, unknown>>;
      }
    } finally {
      await client.close();
    }
  };
}

export function registerMapCommand(program: Command): void {
  const map = program.command('map').description('try mapping files (docs/mapping.md)');
  map
    .command('test')
    .description(
      'print the first rows of FILE through a mapping: each input, and field by field what it ' +
        'gives, or why it is skipped or fails; nothing is stored or sent',
    )
    .argument('<file>', 'CSV, JSON or NDJSON file')
    .requiredOption('--map <file>', 'mapping file (JSON)')
    .option(
      '--resource <resource>',
      `resource: ${RESOURCE_NAMES.join(', ')}`,
      oneOf('--resource', RESOURCE_NAMES),
      'users',
    )
    .option('--rows <n>', 'rows to show', positiveInteger('--rows'), 20)
    .option(
      '--target <name>',
      "read the target's names so $unique answers as the import would (as `porter targets` lists them)",
    )
    .option(
      '--token <token>',
      "act as this API token (default: PORTER_TOKEN): --target then reads only a target the token's limits allow",
    )
    .option('--delimiter <char>', 'CSV delimiter: , ; tab or | (detected when absent)')
    .option(
      '--list-separator <char>',
      "separator of lists inside one cell (default: the mapping's, else |)",
    )
    .option('--encoding <name>', ENCODING_OPTION_TEXT)
    .option(
      '--format <format>',
      'text or json',
      oneOf('--format', ['text', 'json'] as const),
      'text',
    )
    .action(async (file: string, values: MapTestValues) => {
      await checkInputFile(file, 'FILE');
      const mapping = await readMappingFile(
        values.map,
        await readJsonFile(values.map, '--map'),
        values.resource,
      );
      const result = await testMapping(createReadStream(file), {
        resource: values.resource,
        mapping,
        rows: values.rows,
        fileName: file,
        delimiter: values.delimiter === 'tab' ? '\t' : values.delimiter,
        // as porter import: the flag, else the mapping's, else |
        listSeparator: values.listSeparator ?? mapping.listSeparator,
        encoding: checkEncoding(values.encoding),
        directory:
          values.target === undefined ? undefined : targetDirectory(values.target, values.resource),
      });
      process.stdout.write(
        values.format === 'json' ? `${JSON.stringify(result, null, 2)}\n` : formatMapTest(result),
      );
      // a sample row that fails makes the command fail, as its import would report it
      if (result.rows.some((row) => row.status === 'failed')) process.exitCode = 2;
    });
}
