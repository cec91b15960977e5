/**
 * The console's sign-in with OpenID Connect, against a real provider (oidc-provider) started
 * here, in headless Chromium: the authorisation code flow with PKCE, the role from a group
 * claim, a viewer refused an import, the four-eyes refusal of a held sync its approver started,
 * and sign-out ending the session.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import Provider from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAs } from '../../src/auth/acting.js';
import { confirmationText } from '../../src/app/plan-approval.js';
import { securityOf } from '../../src/app/security.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { approveThroughDialog, launchChromium } from './harness.js';

const GROUPS: Record<string, string[]> = {
  vic: ['staff'],
  ann: ['staff', 'porter-approvers'],
  nobody: ['elsewhere'],
};

let issuerServer: Server;
let pipeline: Pipeline;
let app: FastifyInstance;
let browser: Browser;
let baseUrl: string;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  issuerServer = createServer();
  await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
  const apiPort = await freePort();
  baseUrl = `http://127.0.0.1:${apiPort}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'porter',
        client_secret: 'porter-client-secret-0123456789',
        redirect_uris: [`${baseUrl}/v1/session/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email'], groups: ['groups'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: `${sub}@example.com`, groups: GROUPS[sub] ?? [] }),
    }),
    // a first-party client: the scopes asked for are granted without a consent page
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope('openid email groups');
      await grant.save();
      return grant;
    },
  });
  issuerServer.on('request', provider.callback());
  pipeline = await startPipeline({
    env: {
      PORTER_OIDC_ISSUER: issuer,
      PORTER_OIDC_CLIENT_ID: 'porter',
      PORTER_OIDC_CLIENT_SECRET: 'porter-client-secret-0123456789',
      PORTER_OIDC_REDIRECT_URL: `${baseUrl}/v1/session/callback`,
      PORTER_OIDC_SCOPES: 'openid email groups',
      PORTER_OIDC_ROLE_MAP: 'staff=viewer,porter-approvers=approver',
      PORTER_OIDC_ALLOW_HTTP: 'true',
    },
  });
  app = await buildApiApp({ context: pipeline.context, token: 'oidc-test-api-token-0123456789' });
  await app.listen({ port: apiPort, host: '127.0.0.1' });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await pipeline?.close();
  issuerServer?.closeAllConnections();
  await new Promise((resolve) => issuerServer?.close(resolve));
});

async function signInAs(user: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${baseUrl}/console/`);
  await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
  await page.locator('input[name=login]').fill(user);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  return page;
}

async function sessionCookie(page: Page): Promise<string | undefined> {
  const cookies = await page.context().cookies(baseUrl);
  const found = cookies.find((cookie) => cookie.name === 'porter_session');
  return found ? `porter_session=${found.value}` : undefined;
}

describe('console: sign-in with OpenID Connect', () => {
  it('a viewer from the staff group signs in, is refused an import, and signs out', async () => {
    const page = await signInAs('vic');
    await page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor();
    await expect
      .poll(() => page.locator('#who').textContent())
      .toBe('oidc:vic@example.com (viewer)');
    const cookies = await page.context().cookies(baseUrl);
    const session = cookies.find((cookie) => cookie.name === 'porter_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });

    await page.goto(`${baseUrl}/console/#/imports/new`);
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv(['username', 'email'], [['viewer.try', 'try@example.com']])),
    });
    await page.getByText(/this needs the operator role; oidc:vic@example.com has viewer/).waitFor();
    expect(await pipeline.context.store.list()).toHaveLength(0);

    // a change through the session without the CSRF header is refused
    const cookie = await sessionCookie(page);
    const forged = await fetch(`${baseUrl}/v1/session/logout`, {
      method: 'POST',
      headers: { cookie: cookie! },
    });
    expect(forged.status).toBe(403);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    expect(await sessionCookie(page)).toBeUndefined();
    // the session is over on the server too
    expect((await fetch(`${baseUrl}/v1/session`, { headers: { cookie: cookie! } })).status).toBe(
      401,
    );
    const trail = await securityOf(pipeline.context).audit.read({ who: 'oidc:vic' });
    expect(trail.map((event) => event.action)).toEqual(
      expect.arrayContaining(['signin', 'signout']),
    );
  });

  it('an approver from its group cannot approve the held sync it started (four eyes)', async () => {
    // a held sync ann started: the sandbox's three users, and a file that keeps one
    await pipeline.run(
      csv(
        ['username', 'email'],
        [
          ['held.a', 'a@x'],
          ['held.b', 'b@x'],
          ['held.c', 'c@x'],
        ],
      ),
      { resource: 'users', mode: 'create' },
    );
    const principal = {
      name: 'oidc:ann@example.com',
      role: 'approver' as const,
      via: 'oidc' as const,
    };
    const held = await runAs({ principal, created: [] }, () =>
      pipeline.run(csv(['username', 'email'], [['held.a', 'a@x']]), {
        resource: 'users',
        mode: 'sync',
      }),
    );
    expect(held.info.state).toBe('held');
    expect(held.info.startedBy).toBe('oidc:ann@example.com');

    const page = await signInAs('ann');
    await expect
      .poll(() => page.locator('#who').textContent())
      .toBe('oidc:ann@example.com (approver)');
    await page.goto(`${baseUrl}/console/#/imports/${encodeURIComponent(held.info.id)}`);
    const counts = confirmationText((await pipeline.context.store.get(held.info.id))!);
    await approveThroughDialog(page, counts);
    await page.getByText(/another principal with the approver role must approve it/).waitFor();
    expect((await pipeline.context.store.get(held.info.id))?.state).toBe('held');
  });

  it('a user whose groups map to no role is refused, and the refusal is audited', async () => {
    const page = await signInAs('nobody');
    await page.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
    expect(await sessionCookie(page)).toBeUndefined();
    const [failed] = await securityOf(pipeline.context).audit.read({ action: 'signin.failed' });
    expect(failed).toMatchObject({ what: { via: 'oidc' }, result: { ok: false } });
    expect(String(failed!.what.reason)).toContain('no porter role');
  });
});
