import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { targetsFileSchema } from '../../src/targets/target-file.js';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
}

describe('docker-compose.yml', () => {
  it('describes a persistent, non-evicting redis, the sandbox, the API and workers', async () => {
    const compose = parse(await readFile('docker-compose.yml', 'utf8')) as {
      services: Record<string, Service>;
    };
    const { redis, sandbox, api, worker } = compose.services;
    expect(redis?.command).toEqual(
      expect.arrayContaining(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']),
    );
    expect(sandbox?.command?.[0]).toBe('sandbox');
    expect(sandbox?.command).toEqual(expect.arrayContaining(['--data']));
    expect(api?.command?.[0]).toBe('api');
    expect(api?.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(worker?.command?.[0]).toBe('worker');
    // the API serves the files the workers export: both see one volume; and one targets file
    const targetsMount = './targets.example.json:/etc/porter/targets.json:ro';
    expect(api?.volumes).toEqual(['exports:/exports', targetsMount]);
    expect(worker?.volumes).toEqual(['exports:/exports', targetsMount]);
    // the API and the workers start once Redis and their default target, the sandbox, answer
    expect(sandbox?.healthcheck?.test[0]).toBe('CMD');
    for (const service of [api, worker]) {
      expect(service?.depends_on).toEqual({
        redis: { condition: 'service_healthy' },
        sandbox: { condition: 'service_healthy' },
      });
    }
    // every service says whether it is alive; the API and the workers through their /healthz
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.healthcheck?.test[0], name).toBe('CMD');
    }
    expect(api?.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:3000/healthz');
    // each worker serves /metrics, /healthz and /readyz on its metrics port, reachable in the
    // compose network and, one host port per replica, from the host's loopback only
    expect(worker?.environment?.PORTER_METRICS_PORT).toBe('9464');
    expect(worker?.environment?.PORTER_METRICS_HOST).toBe('0.0.0.0');
    expect(worker?.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:9464/healthz');
    expect(worker?.ports).toEqual(['127.0.0.1:9464-9465:9464']);
    for (const service of Object.values(compose.services)) {
      for (const port of service.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
    }
    // no variable is required at parse time: `docker compose up redis sandbox` needs no token
    expect(await readFile('docker-compose.yml', 'utf8')).not.toMatch(/\$\{[A-Z_]+:\?/);
    // the targets file the API and the workers share names two targets, secrets by their source
    for (const service of [api, worker]) {
      expect(service?.environment?.PORTER_TARGETS_FILE).toBe('${PORTER_TARGETS_FILE:-}');
      expect(service?.environment?.NEW_DAM_KEY).toBe('${NEW_DAM_KEY:-}');
    }
    const targets = targetsFileSchema.parse(
      JSON.parse(await readFile('targets.example.json', 'utf8')),
    );
    expect(Object.keys(targets)).toEqual(['old', 'new']);
    expect(targets.new?.apiKey).toEqual({ env: 'NEW_DAM_KEY' });
    const dockerfile = await readFile('Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "bin\/porter\.js"\]/);
  });
});
