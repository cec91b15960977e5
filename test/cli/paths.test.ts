import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkInputFile,
  checkOutputDirectory,
  checkOutputFile,
  checkStateFile,
  openOutputFile,
  readJsonFile,
} from '../../src/cli/paths.js';
import { PorterError } from '../../src/errors/porter-error.js';

let dir: string;
let input: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-paths-'));
  input = join(dir, 'input.csv');
  await writeFile(input, 'username\nx\n');
  await mkdir(join(dir, 'sub'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The error a check ends with: its code, exit code and message. */
async function refusal(
  check: Promise<unknown>,
): Promise<{ code: string; exit: number; message: string }> {
  const error = await check.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PorterError);
  const porterError = error as PorterError;
  return { code: porterError.code, exit: porterError.exitCode, message: porterError.message };
}

describe('files to read', () => {
  it('missing is 66, a directory is 64, a file passes', async () => {
    expect(await refusal(checkInputFile(join(dir, 'nope.csv'), 'input file'))).toMatchObject({
      code: 'PORTER_NOT_FOUND',
      exit: 66,
      message: expect.stringMatching(/^input file .*nope\.csv: cannot read it \(ENOENT\)$/),
    });
    expect(await refusal(checkInputFile(join(dir, 'sub'), '--map'))).toMatchObject({
      code: 'PORTER_USAGE',
      exit: 64,
      message: expect.stringMatching(/is a directory/),
    });
    await expect(checkInputFile(input, 'input file')).resolves.toBeUndefined();
  });

  it('a JSON file that is not JSON is PORTER_MAPPING_INVALID (65)', async () => {
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ "columns": ');
    expect(await refusal(readJsonFile(broken, '--map'))).toMatchObject({
      code: 'PORTER_MAPPING_INVALID',
      exit: 65,
      message: expect.stringMatching(/^--map .*broken\.json: not valid JSON/),
    });
    const good = join(dir, 'good.json');
    await writeFile(good, '{"ignore":["x"]}');
    expect(await readJsonFile(good, '--map')).toEqual({ ignore: ['x'] });
  });
});

describe('files to write', () => {
  it('a directory is 64, a missing directory 66, a new file in an existing one passes', async () => {
    expect(await refusal(checkOutputFile(join(dir, 'sub'), '--report'))).toMatchObject({
      code: 'PORTER_USAGE',
      message: expect.stringMatching(/is a directory; name a file/),
    });
    expect(await refusal(checkOutputFile(join(dir, 'gone', 'r.csv'), '--report'))).toMatchObject({
      code: 'PORTER_NOT_FOUND',
      exit: 66,
      message: expect.stringMatching(/directory .*gone does not exist/),
    });
    expect(await refusal(checkOutputFile(join(input, 'r.csv'), '--report'))).toMatchObject({
      exit: 66,
    });
    await expect(checkOutputFile(join(dir, 'new.csv'), '--report')).resolves.toBeUndefined();
  });

  it('a file that exists needs force; an input is never an output, however it is named', async () => {
    const old = join(dir, 'old.csv');
    await writeFile(old, 'old');
    expect(await refusal(checkOutputFile(old, '--out'))).toMatchObject({
      code: 'PORTER_USAGE',
      message: expect.stringMatching(/exists; pass --force/),
    });
    await expect(checkOutputFile(old, '--out', { force: true })).resolves.toBeUndefined();
    const link = join(dir, 'link-to-input.csv');
    await symlink(input, link);
    for (const path of [input, link, join(dir, 'sub', '..', 'input.csv')]) {
      expect(
        await refusal(checkOutputFile(path, '--report', { force: true, inputs: [input] })),
      ).toMatchObject({
        code: 'PORTER_USAGE',
        message: expect.stringMatching(/is the input file/),
      });
    }
    expect(
      await refusal(checkOutputFile(input, '--report', { force: true, inputs: [link] })),
    ).toMatchObject({ message: expect.stringMatching(/is the input file/) });
    expect(await readFile(input, 'utf8')).toBe('username\nx\n');
  });

  it('opening refuses a file that appeared since the check, unless forced', async () => {
    const late = join(dir, 'late.csv');
    await writeFile(late, 'someone else');
    expect(await refusal(openOutputFile(late, '--out'))).toMatchObject({ code: 'PORTER_USAGE' });
    const out = await openOutputFile(late, '--out', true);
    out.end('mine');
    await finished(out);
    expect(await readFile(late, 'utf8')).toBe('mine');
  });

  it('an output directory may be missing (it is made) but not a file; a state file needs its directory', async () => {
    await expect(checkOutputDirectory(join(dir, 'made-later'), '--out')).resolves.toBeUndefined();
    await expect(checkOutputDirectory(join(dir, 'sub'), '--out')).resolves.toBeUndefined();
    expect(await refusal(checkOutputDirectory(input, '--out'))).toMatchObject({
      code: 'PORTER_USAGE',
      message: expect.stringMatching(/is a file; name a directory/),
    });
    await expect(checkStateFile(input, '--data')).resolves.toBeUndefined();
    await expect(checkStateFile(join(dir, 'state.ndjson'), '--data')).resolves.toBeUndefined();
    expect(await refusal(checkStateFile(join(dir, 'sub'), '--data'))).toMatchObject({ exit: 64 });
    expect(await refusal(checkStateFile(join(dir, 'gone', 's'), '--data'))).toMatchObject({
      exit: 66,
    });
  });
});
