/**
 * Runs the real `porter` command on a pseudo-terminal, as an operator at a keyboard does, through
 * util-linux `script`: the command sees a terminal on its standard input and error, prints its
 * question there, and gets `answer` typed (with Enter) once the question is shown.
 */
import { spawn } from 'node:child_process';

export interface TerminalResult {
  code: number | null;
  /** Everything the terminal showed: standard output and error together, and the echo of the answer. */
  screen: string;
  /** Whether the question was shown (and so the answer typed). */
  asked: boolean;
}

/** Quotes one argument for `sh -c`. */
function quoted(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

export async function runPorterOnTerminal(
  args: string[],
  env: Record<string, string>,
  answer: string,
  question = '[y/N]',
): Promise<TerminalResult> {
  const command = ['node', 'bin/porter.js', ...args].map(quoted).join(' ');
  // -q: no "Script started" lines; -e: exit with the command's code; /dev/null: no typescript file
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    env: { ...process.env, LOG_LEVEL: 'error', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  let asked = false;
  const onOutput = (chunk: Buffer): void => {
    screen += chunk.toString();
    if (!asked && screen.includes(question)) {
      asked = true;
      child.stdin.write(`${answer}\r`);
    }
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  });
  return { code, screen, asked };
}
