/**
 * /v1/imports/{id}/approve and /v1/imports/{id}/apply: GET says what carrying the plan out
 * writes (the counts, removals first, and the first records it deletes or locks); POST carries
 * it out, checking a `confirm` it is given against those counts.
 */
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { applyImport, approveImport, requireImport } from '../../app/imports.js';
import {
  checkConfirmation,
  previewPlan,
  PREVIEW_REMOVALS,
  type PlanCommand,
} from '../../app/plan-approval.js';
import { PorterError } from '../../errors/porter-error.js';
import { idParams } from '../schemas.js';
import { fieldsSchema } from '../strict-fields.js';
import { importSchema, withLinks } from './imports.js';

export interface PlanApprovalRoutesOptions {
  context: PorterContext;
}

const previewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    command: { type: 'string' },
    writes: {
      type: 'array',
      items: {
        type: 'object',
        properties: { action: { type: 'string' }, records: { type: 'integer' } },
      },
    },
    confirm: { type: 'string' },
    removals: { type: 'integer' },
    firstRemovals: { type: 'array', items: { type: 'object', additionalProperties: true } },
    // where the plan is written: its target's name and address (never a credential)
    target: {
      type: 'object',
      properties: { name: { type: 'string' }, url: { type: 'string' } },
    },
  },
} as const;

const COMMANDS: Record<PlanCommand, { what: string; run: typeof applyImport }> = {
  approve: {
    what: 'Approve a held sync: a new import writes its plan, each record only if the server still holds what it was planned against',
    run: approveImport,
  },
  apply: {
    what: 'Apply a finished dry run: a new import writes its planned records, each only if the server still holds what it was planned against',
    run: applyImport,
  },
};

export async function planApprovalRoutes(
  app: FastifyInstance,
  options: PlanApprovalRoutesOptions,
): Promise<void> {
  const { context } = options;
  for (const command of ['approve', 'apply'] as const) {
    const { what, run } = COMMANDS[command];
    app.get<{ Params: { id: string }; Querystring: { limit?: number } }>(
      `/v1/imports/:id/${command}`,
      {
        schema: {
          summary: `What POST /v1/imports/{id}/${command} would write: the counts, and the first records it deletes or locks`,
          description:
            '`writes` lists the records written per action, deletes and locks first; `target` names ' +
            'where (name and address); `confirm` is ' +
            `the text that names them ("lock 59, update 171"), which POST takes as its \`confirm\`.`,
          params: idParams,
          querystring: {
            type: 'object',
            properties: {
              limit: { type: 'integer', minimum: 0, maximum: 500, default: PREVIEW_REMOVALS },
            },
          },
          response: { 200: previewSchema },
        },
      },
      async (request) => {
        const plan = await requireImport(context, request.params.id);
        return previewPlan(context, plan, command, request.query.limit ?? PREVIEW_REMOVALS);
      },
    );

    app.post<{ Params: { id: string }; Querystring: { confirm?: string }; Body: unknown }>(
      `/v1/imports/:id/${command}`,
      {
        schema: {
          summary: what,
          description:
            '`confirm` (query parameter or JSON body), when given, must name what the plan ' +
            `writes as GET /v1/imports/{id}/${command} says ("lock 59, update 171"); else 409 ` +
            'and nothing is written. The console always sends it.',
          params: idParams,
          querystring: { type: 'object', properties: { confirm: { type: 'string' } } },
          body: fieldsSchema(['confirm'], { nullable: true }),
          response: { 202: importSchema },
        },
      },
      async (request, reply) => {
        const confirm = confirmOf(request.query.confirm, request.body);
        if (confirm !== undefined) {
          const plan = await requireImport(context, request.params.id);
          // the state first: an import that cannot be carried out says so, whatever was confirmed
          await previewPlan(context, plan, command, 0);
          checkConfirmation(plan, command, confirm);
        }
        const info = await run(context, request.params.id);
        return reply.status(202).send(withLinks(info));
      },
    );
  }
}

function confirmOf(query: string | undefined, body: unknown): string | undefined {
  const given =
    query ??
    (typeof body === 'object' && body !== null && 'confirm' in body
      ? (body as { confirm: unknown }).confirm
      : undefined);
  if (given === undefined || typeof given === 'string') return given;
  throw new PorterError(
    'PORTER_USAGE',
    'confirm: give the counts as text, e.g. "lock 59, update 171"',
    {
      details: { field: 'confirm' },
    },
  );
}
