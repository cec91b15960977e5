/**
 * The console's sign-in with OpenID Connect, against a real provider (oidc-provider) started
 * here, in headless Chromium: the authorisation code flow with PKCE, the role from a group
 * claim, a viewer refused an import, the four-eyes refusal of a held sync its approver started,
 * and sign-out ending the session. The principal is the issuer's and the subject's, the email only
 * shown; the sign-in is bound to the browser that started it (a callback opened elsewhere is
 * refused, and nothing is stored for it in Redis); a session's role is asked of the provider
 * again (every request here: PORTER_OIDC_RECHECK_MINUTES=0), and lost with the user's group.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
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
  leaver: ['staff', 'porter-approvers'],
  mover: ['staff', 'porter-approvers'],
};
/** Email addresses a user changed; by default `<sub>@example.com`. */
const EMAILS: Record<string, string> = {};

let issuerServer: Server;
let pipeline: Pipeline;
let app: FastifyInstance;
let browser: Browser;
let baseUrl: string;
let issuer: string;

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
  issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
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
      claims: () => ({
        sub,
        email: EMAILS[sub] ?? `${sub}@example.com`,
        groups: GROUPS[sub] ?? [],
      }),
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
      PORTER_OIDC_RECHECK_MINUTES: '0',
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

/**
 * Signs in at the provider and stops before the callback: its URL, as the provider sends the
 * browser there (the browser's request for it is caught, through the DevTools protocol, which
 * sees a redirect's next request as well, and failed).
 */
async function callbackOf(user: string): Promise<{ page: Page; url: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const devtools = await context.newCDPSession(page);
  let url: string | undefined;
  devtools.on('Fetch.requestPaused', (paused) => {
    url = paused.request.url;
    void devtools.send('Fetch.failRequest', {
      requestId: paused.requestId,
      errorReason: 'Aborted',
    });
  });
  await devtools.send('Fetch.enable', { patterns: [{ urlPattern: '*/v1/session/callback*' }] });
  await page.goto(`${baseUrl}/console/`);
  await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
  await page.locator('input[name=login]').fill(user);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await expect.poll(() => url, { timeout: 30_000 }).toBeDefined();
  await devtools.send('Fetch.disable');
  await devtools.detach();
  return { page, url: url! };
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
    await expect.poll(() => page.locator('#who').textContent()).toBe('vic@example.com (viewer)');
    const cookies = await page.context().cookies(baseUrl);
    const session = cookies.find((cookie) => cookie.name === 'porter_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });

    await page.goto(`${baseUrl}/console/#/imports/new`);
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv(['username', 'email'], [['viewer.try', 'try@example.com']])),
    });
    await page
      .getByText(/this needs the operator role; oidc:vic@127\.0\.0\.1:\d+ has viewer/)
      .waitFor();
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
      name: `oidc:ann@${new URL(issuer).host}`,
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
    expect(held.info.startedBy).toBe(`oidc:ann@${new URL(issuer).host}`);

    const page = await signInAs('ann');
    await expect.poll(() => page.locator('#who').textContent()).toBe('ann@example.com (approver)');
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

  it('a callback opened in another browser is refused; the one that started the sign-in takes it', async () => {
    const { page, url } = await callbackOf('vic');
    const elsewhere = await (await browser.newContext()).newPage();
    const refused = await elsewhere.goto(url);
    expect(refused?.status()).toBe(401);
    await elsewhere.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
    expect(await sessionCookie(elsewhere)).toBeUndefined();
    // the browser that asked signs in with the same callback
    await page.goto(url);
    await expect.poll(() => page.locator('#who').textContent()).toBe('vic@example.com (viewer)');
    expect(await sessionCookie(page)).toBeDefined();
  });

  it('starting a sign-in stores nothing in Redis: it waits in its own browser', async () => {
    const { redis, env } = pipeline.context;
    const before = await redis.keys(`${env.PORTER_PREFIX}:*`);
    expect(before.filter((key) => key.includes('oidc'))).toEqual([]);
    for (let attempt = 0; attempt < 20; attempt++) {
      const started = await fetch(`${baseUrl}/v1/session/oidc`, { redirect: 'manual' });
      expect(started.status).toBe(302);
      const cookie = started.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(
        /^porter_oidc=[^;]+; Path=\/v1\/session\/callback; Max-Age=600; HttpOnly; SameSite=Lax/,
      );
    }
    // no key came for it (the old way kept each sign-in's state under `oidc-pending`)
    const after = await redis.keys(`${env.PORTER_PREFIX}:*`);
    expect(after.filter((key) => !before.includes(key) && key.includes('oidc'))).toEqual([]);
  });

  it('the principal is the subject, not its email; a session loses its role with the group', async () => {
    const page = await signInAs('leaver');
    await expect
      .poll(() => page.locator('#who').textContent())
      .toBe('leaver@example.com (approver)');
    const cookie = (await sessionCookie(page))!;
    const session = async (): Promise<Response> =>
      fetch(`${baseUrl}/v1/session`, { headers: { cookie } });
    const name = `oidc:leaver@${new URL(issuer).host}`;
    expect(await (await session()).json()).toMatchObject({ name, role: 'approver' });

    // the user changes their email and leaves the approvers: the next request knows
    EMAILS.leaver = 'someone.else@example.com';
    GROUPS.leaver = ['staff'];
    expect(await (await session()).json()).toMatchObject({
      name,
      display: 'someone.else@example.com',
      role: 'viewer',
    });
    // and with no group left that maps to a role, the session ends
    GROUPS.leaver = ['elsewhere'];
    expect((await session()).status).toBe(401);
    GROUPS.leaver = ['staff'];
    expect((await session()).status).toBe(401);
  });

  it('a request that meets a re-check in progress waits for it, and never answers the old role', async () => {
    const page = await signInAs('mover');
    await expect
      .poll(() => page.locator('#who').textContent())
      .toBe('mover@example.com (approver)');
    const cookie = (await sessionCookie(page))!;
    await page.close();
    const sessionId = decodeURIComponent(cookie.replace(/^porter_session=/, ''));
    const { redis, env } = pipeline.context;
    const hashed = createHash('sha256').update(sessionId).digest('hex');
    const claim = `${env.PORTER_PREFIX}:session:${hashed}:recheck`;
    // another process is re-checking this session (it holds the claim) when the user leaves
    // the approvers; taken once the page's last request has ended its own re-check
    await expect.poll(() => redis.set(claim, '1', 'EX', 30, 'NX'), { timeout: 15_000 }).toBe('OK');
    GROUPS.mover = ['staff'];
    // the request's attempt to take the claim is seen, and only then is the claim given back
    const monitor = await new Redis(env.REDIS_URL).monitor();
    const tried = new Promise<void>((resolve) =>
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (args[0]?.toLowerCase() === 'set' && args[1] === claim) resolve();
      }),
    );
    try {
      const pending = fetch(`${baseUrl}/v1/session`, { headers: { cookie } });
      await tried;
      await redis.del(claim);
      // it waited for the re-check in progress, then asked the provider itself
      expect(((await (await pending).json()) as { role: string }).role).toBe('viewer');
    } finally {
      monitor.disconnect();
    }
  });
});
