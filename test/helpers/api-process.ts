/** A real `porter api` process on a free port, for start-up and crash tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';

export interface ApiProcess {
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  /** Resolves with the API's base URL once it listens; rejects when it exits first. */
  listening: Promise<string>;
  output(): string;
}

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts `porter api` on a free port; the environment given is added to this process's. */
export async function spawnApi(env: Record<string, string | undefined>): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn('node', ['bin/porter.js', 'api', '--port', String(port)], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      // the console line is the last of the start-up lines
      const match = /porter API listening on (http:\/\/\S+)[\s\S]*\nconsole at .*\n/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => reject(new Error(`porter api exited (${code}): ${output}`)));
  });
  listening.catch(() => {});
  return { child, exited, listening, output: () => output };
}
