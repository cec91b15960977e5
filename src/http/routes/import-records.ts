/** /v1/imports/{id}/records: one page of an import's per-record results, as JSON. */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { requireImport } from '../../app/imports.js';
import type { PorterContext } from '../../app/context.js';
import { RECORD_ACTIONS, type RecordResult } from '../../model/import.js';
import { idParams } from '../schemas.js';
import { parseActions, parseStatuses } from '../status-filter.js';

export interface ImportRecordRoutesOptions {
  context: PorterContext;
}

/** Records one page holds at most. */
export const RECORDS_PAGE_MAX = 500;

export async function importRecordRoutes(
  app: FastifyInstance,
  options: ImportRecordRoutesOptions,
): Promise<void> {
  const { context } = options;

  app.get<{
    Params: { id: string };
    Querystring: {
      status?: string;
      action?: string;
      serverOnly?: boolean;
      after?: number;
      limit?: number;
    };
  }>(
    '/v1/imports/:id/records',
    {
      schema: {
        summary: 'One page of per-record results in input order, as JSON',
        description:
          'For screens: `after` is the last row of the previous page (0 for the first), `more` ' +
          'says whether a next page exists. `action` and `serverOnly` narrow the page: a plan ' +
          'awaiting approval is read locks and deletes first (`action=delete,lock`), then the ' +
          "rest; `serverOnly=true` gives a sync's records only on the server (after the file's). " +
          'Whole reports: GET /v1/imports/{id}/results.',
        params: idParams,
        querystring: {
          type: 'object',
          properties: {
            status: {
              type: 'string',
              description: 'comma-separated: succeeded, failed, skipped, unprocessed, planned',
            },
            action: {
              type: 'string',
              description: `comma-separated: ${RECORD_ACTIONS.join(', ')}`,
            },
            serverOnly: {
              type: 'boolean',
              description: "true: a sync's records only on the server; false: the file's records",
            },
            after: { type: 'integer', minimum: 0, default: 0 },
            limit: { type: 'integer', minimum: 1, maximum: RECORDS_PAGE_MAX, default: 100 },
          },
        },
      },
    },
    async (request) => {
      const status = parseStatuses(request.query.status);
      const actions = parseActions(request.query.action);
      const { serverOnly } = request.query;
      const after = request.query.after ?? 0;
      const limit = request.query.limit ?? 100;
      await requireImport(context, request.params.id);
      const records: RecordResult[] = [];
      let more = false;
      for await (const result of context.store.results(request.params.id, { status })) {
        if (result.row <= after) continue;
        if (actions && (result.action === undefined || !actions.includes(result.action))) continue;
        if (serverOnly !== undefined && (result.serverOnly === true) !== serverOnly) continue;
        if (records.length === limit) {
          more = true;
          break;
        }
        records.push(result);
      }
      return { records, more };
    },
  );
}
