/**
 * The documentation keeps up with the code: every environment variable, error code, command and
 * option is documented, every relative link of the README and docs/ leads somewhere, and each
 * docs page opens by saying what it covers.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerCommands } from '../../src/cli/commands/index.js';
import { envSchema } from '../../src/config/env.js';
import { ERROR_CODES } from '../../src/errors/codes.js';

/** Pages linked before they exist: they are written on other branches and arrive at merge. */
const PAGES_ON_THEIR_WAY: ReadonlySet<string> = new Set<string>();

/** The README stays a front page; the reference lives in docs/. */
const README_MAX_LINES = 300;

async function docsPages(): Promise<string[]> {
  const entries = await readdir('docs', { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative('.', join(entry.parentPath, entry.name)))
    .sort();
}

async function readAll(paths: readonly string[]): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const path of paths) texts.set(path, await readFile(path, 'utf8'));
  return texts;
}

/** The rows of the markdown tables in a text, as their first cell. */
function firstCells(text: string): Set<string> {
  const cells = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^\|\s*([^|]+?)\s*\|/.exec(line);
    if (match) cells.add(match[1]!);
  }
  return cells;
}

/** Text outside fenced code blocks, with inline code spans blanked out. */
function prose(text: string): string {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
}

/** GitHub's anchors of a page's headings (lower case, punctuation dropped, repeats numbered). */
function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const line of withoutCode.split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

interface CommandDoc {
  path: string;
  options: string[];
}

/** Every subcommand of `porter` (nested ones too), with the long names of its options. */
async function porterCommands(): Promise<CommandDoc[]> {
  const program = new Command().name('porter');
  await registerCommands(program, ['node', 'porter']);
  const found: CommandDoc[] = [];
  const walk = (command: Command, prefix: string): void => {
    for (const sub of command.commands) {
      const path = `${prefix} ${sub.name()}`;
      const options = sub.options.flatMap((option) => (option.long ? [option.long] : []));
      found.push({ path, options });
      walk(sub, path);
    }
  };
  walk(program, 'porter');
  return found;
}

describe('the documentation', () => {
  it('docs/configuration.md has a row for every environment variable', async () => {
    const rows = firstCells(await readFile('docs/configuration.md', 'utf8'));
    const missing = Object.keys(envSchema.shape).filter((name) => !rows.has(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('docs/error-codes.md has a row for every error code', async () => {
    const rows = firstCells(await readFile('docs/error-codes.md', 'utf8'));
    const missing = Object.keys(ERROR_CODES).filter((code) => !rows.has(`\`${code}\``));
    expect(missing).toEqual([]);
  });

  it('docs/exit-codes.md has a row for every exit status of the error table', async () => {
    const rows = firstCells(await readFile('docs/exit-codes.md', 'utf8'));
    const statuses = new Set(Object.values(ERROR_CODES).map((entry) => entry.exitCode));
    const missing = [0, ...statuses].filter((status) => !rows.has(`\`${status}\``));
    expect(missing).toEqual([]);
  });

  it('every command, and each of its options, is documented in docs/', async () => {
    const pages = [...(await readAll(await docsPages())).values()];
    const commands = await porterCommands();
    expect(commands.map((command) => command.path)).toEqual(
      expect.arrayContaining(['porter import', 'porter schedule add']),
    );
    const missing: string[] = [];
    for (const { path, options } of commands) {
      if (!pages.some((page) => page.includes(path))) missing.push(path);
      for (const option of options) {
        // an option several commands share (the import options, say) is described once
        const pattern = new RegExp(`${option}(?![\\w-])`);
        if (!pages.some((page) => pattern.test(page))) missing.push(`${path} ${option}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every relative link of README.md and docs/ leads to a file, and its anchor to a heading', async () => {
    const texts = await readAll(['README.md', ...(await docsPages())]);
    const broken: string[] = [];
    for (const [path, text] of texts) {
      for (const match of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
        const [file = '', anchor] = target.split('#', 2);
        const resolved = file === '' ? path : normalize(join(dirname(path), file));
        if (!existsSync(resolved)) {
          if (!PAGES_ON_THEIR_WAY.has(resolved)) broken.push(`${path}: ${target}`);
          continue;
        }
        if (anchor === undefined || !resolved.endsWith('.md')) continue;
        const targetText = texts.get(resolved) ?? (await readFile(resolved, 'utf8'));
        if (!anchors(targetText).has(anchor)) broken.push(`${path}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('links every docs page from the README', async () => {
    const readme = await readFile('README.md', 'utf8');
    const unlinked = (await docsPages()).filter((page) => !readme.includes(`](${page})`));
    expect(unlinked).toEqual([]);
  });

  it('each docs page opens with a title, then a sentence, not a table or a list', async () => {
    const wrong: string[] = [];
    for (const [path, text] of await readAll(await docsPages())) {
      const lines = text.split('\n').filter((line) => line.trim() !== '');
      const [title, opening = ''] = lines;
      if (!title?.startsWith('# ') || /^(#|\||```|[-*] |!\[|>)/.test(opening)) wrong.push(path);
    }
    expect(wrong).toEqual([]);
  });

  it('keeps the README a front page', async () => {
    const lines = (await readFile('README.md', 'utf8')).split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });
});

/** The `porter …` command lines of the code blocks of a text, continuation lines joined. */
function commandLines(text: string): string[] {
  const lines: string[] = [];
  for (const block of text.matchAll(/^(```|~~~)[^\n]*\n([\s\S]*?)^\1[^\n]*$/gm)) {
    const joined = block[2]!.replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) {
      const match = /(?:^|\s)(?:npx\s+|node\s+bin\/)?porter(?:\.js)?\s+([^#|]*)/.exec(line);
      if (match) lines.push(match[1]!.trim());
    }
  }
  return lines;
}

describe('the command lines shown in the docs', () => {
  it('use only options their command has', async () => {
    const commands = new Map((await porterCommands()).map((command) => [command.path, command]));
    const texts = await readAll(['README.md', ...(await docsPages())]);
    const wrong: string[] = [];
    for (const [path, text] of texts) {
      for (const line of commandLines(text)) {
        const words = line.split(/\s+/);
        // the longest command path the line starts with: `schedule add` before `schedule`
        let command: CommandDoc | undefined;
        for (let length = 1; length <= 2 && length <= words.length; length++) {
          command = commands.get(`porter ${words.slice(0, length).join(' ')}`) ?? command;
        }
        if (command === undefined) continue;
        for (const word of words) {
          const flag = /^(--[a-z][a-z-]*)/.exec(word)?.[1];
          if (flag === undefined || flag === '--help' || flag === '--version') continue;
          if (!command.options.includes(flag)) wrong.push(`${path}: ${command.path} ${flag}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
