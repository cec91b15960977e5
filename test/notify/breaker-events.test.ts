/**
 * The circuit breaker tells of an import it paused (the server fails most calls, with the
 * reason) and of the import running again once a probe is answered; the import ends as usual.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { notifyEnv, signedWebhook, type ChannelsDir, type Receiver } from './notify-fixture.js';

let pipeline: Pipeline;
let receiver: Receiver;
let dir: ChannelsDir;
let secret: string;

beforeAll(async () => {
  let path: string;
  ({ receiver, dir, secret, path } = await signedWebhook([
    'breaker.paused',
    'breaker.resumed',
    'import.finished',
  ]));
  pipeline = await startPipeline({
    sandbox: { faults: { failRate: 1 } },
    env: {
      ...notifyEnv(path),
      PORTER_MAX_ATTEMPTS: '50',
      PORTER_BREAKER_MIN_CALLS: '5',
      PORTER_BREAKER_THRESHOLD: '0.5',
      PORTER_BREAKER_COOLDOWN_MS: '300',
    },
  });
});

afterAll(async () => {
  await pipeline?.close();
  await receiver?.close();
  await dir?.close();
});

function types(): string[] {
  return receiver.requests.map(
    (request) =>
      (
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as {
          type: string;
        }
      ).type,
  );
}

describe('the circuit breaker', () => {
  it('tells of the pause with its reason, then of the import running again, then of its end', async () => {
    const submitted = await pipeline.submit(
      csv(
        ['username'],
        Array.from({ length: 200 }, (_, index) => [`breaker.${index + 1}`]),
      ),
      { resource: 'users', mode: 'create', batchSize: 50 },
    );
    await waitFor(() => (types().includes('breaker.paused') ? true : undefined), {
      what: 'breaker.paused',
    });
    const paused = JSON.parse(receiver.requests[0]!.body) as {
      data: { ids: Record<string, string>; why: string[]; action: string };
    };
    expect(paused.data.ids).toEqual({ importId: submitted.id });
    expect(paused.data.why[0]).toMatch(/the admin server failed \d+ of \d+ calls/);
    expect(paused.data.action).toContain(`porter resume ${submitted.id}`);

    pipeline.sandbox.setFaults({ failRate: 0 });
    const info = await pipeline.waitFinal(submitted.id);
    expect(info.state).toBe('completed');
    await waitFor(() => (types().includes('import.finished') ? true : undefined), {
      what: 'import.finished',
    });
    expect(
      types()
        .filter((type) => type !== 'breaker.paused')
        .sort(),
    ).toEqual(['breaker.resumed', 'import.finished']);
  });
});
