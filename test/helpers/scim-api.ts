/**
 * `porter api` over real HTTP on a pipeline against the sandbox, as SCIM tests use it: the
 * pipeline (its context, sandbox and results), the app listening on a free port, and `scim(…)`
 * sending a request to `/scim/v2/{target}` with the API's token.
 */
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline, type PipelineOptions } from './pipeline.js';
import { scimRequest, type ScimAnswer } from './scim-request.js';

export interface ScimApi {
  pipeline: Pipeline;
  app: FastifyInstance;
  baseUrl: string;
  /** One SCIM request to the target's endpoint (`path` after `/scim/v2/{target}`). */
  scim(method: string, path: string, body?: unknown): Promise<ScimAnswer>;
  close(): Promise<void>;
}

export async function startScimApi(
  token: string,
  options: PipelineOptions & { target?: string } = {},
): Promise<ScimApi> {
  const { target = 'default', ...pipelineOptions } = options;
  const pipeline = await startPipeline({ workers: false, ...pipelineOptions });
  const app = await buildApiApp({ context: pipeline.context, token });
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    pipeline,
    app,
    baseUrl,
    scim: (method, path, body) =>
      scimRequest(`${baseUrl}/scim/v2/${target}${path}`, token, method, body),
    close: async () => {
      await app.close();
      await pipeline.close();
    },
  };
}
