/**
 * The console's Notifications page: the channels without their secrets, a test message sent from
 * it and delivered, its delivery listed with its attempts, and a redelivery with the same
 * webhook-id; the failed filter leaves the delivered ones out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';
import {
  notifyEnv,
  signedWebhook,
  type ChannelsDir,
  type Receiver,
} from '../notify/notify-fixture.js';

let harness: ConsoleHarness;
let receiver: Receiver;
let dir: ChannelsDir;
let secret: string;

beforeAll(async () => {
  let path: string;
  ({ receiver, dir, secret, path } = await signedWebhook(['sync.held']));
  harness = await startConsoleHarness({ env: notifyEnv(path) });
});

afterAll(async () => {
  await harness?.close();
  await receiver?.close();
  await dir?.close();
});

describe('the Notifications page', () => {
  it('sends a test, lists its delivery, and redelivers it with the same webhook-id', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'Notifications' }).click();
    await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
    const channels = page.getByRole('region', { name: 'Channels' });
    await channels.waitFor();
    const text = await channels.textContent();
    expect(text).toContain('webhook');
    expect(text).toContain('sync.held');
    expect(text).not.toContain(secret);

    await page.getByRole('button', { name: 'Send a test to ops' }).click();
    await page.getByText(/Test message to ops queued: evt_/).waitFor();
    await eventually(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return page.getByRole('region', { name: 'Deliveries, newest first' }).textContent();
    }).toContain('delivered');
    expect(receiver.requests).toHaveLength(1);
    const id = receiver.requests[0]!.headers['webhook-id'] as string;

    await page.getByRole('button', { name: `Redeliver ${id}` }).click();
    await page.getByText(`Delivery ${id} queued again.`).waitFor();
    await eventually(() => receiver.requests.length).toBe(2);
    expect(receiver.requests[1]!.headers['webhook-id']).toBe(id);

    await page.getByLabel('Only failed (given up or retrying)').check();
    await page.getByText('No deliveries.').waitFor();
    expect(harness.problems).toEqual([]);
  });
});
