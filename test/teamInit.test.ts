/**
 * `memcore init --team` (docs/team.md, "Starting") in a real git repository made in a temp folder:
 * what it creates, what it adds to .gitignore, what it says to commit, that a second run changes
 * nothing, and that team mode is on afterwards (remember writes a file git sees).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { inProcessFakeEmbedder } from './cliProcess.js';
import { tempDir } from './helpers.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

async function cli(cwd: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false }, { cwd });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('memcore init --team', () => {
  inProcessFakeEmbedder();

  it('creates memory/ with a README, ignores .memcore/ and memory.local/, says what to commit; again changes nothing', async () => {
    const repo = await tempDir('memcore-init-');
    git(repo, 'init', '-q', '-b', 'main');
    await writeFile(join(repo, '.gitignore'), 'node_modules'); // no final line break: kept as written
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'start');
    const sub = join(repo, 'src', 'app');
    await mkdir(sub, { recursive: true });

    // From a subfolder, with the database folder given there: the repository's root is found.
    const first = await cli(sub, 'init', '--team', '--json', '--db', join(repo, '.memcore'));
    expect(first.code).toBe(EXIT.ok);
    const r = JSON.parse(first.out) as { root: string; memoryDir: string; created: string[]; ignored: string[]; toCommit: string[] };
    expect(r).toMatchObject({
      memoryDir: 'memory',
      created: ['memory/', 'memory/README.md'],
      ignored: ['.memcore/', 'memory.local/'],
      toCommit: ['memory/README.md', '.gitignore'],
    });
    expect(await readFile(join(repo, '.gitignore'), 'utf8')).toMatch(/^node_modules\n# memcore: .*\n\.memcore\/\nmemory\.local\/\n$/);
    expect(await readFile(join(repo, 'memory', 'README.md'), 'utf8')).toMatch(/^# Team memory/);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe(' M .gitignore\n?? memory/README.md\n');

    // Again: nothing changed, nothing to commit.
    const text = await cli(repo, 'init', '--team');
    expect(text.code).toBe(EXIT.ok);
    expect(text.out).toMatch(/^team memory is set up already in memory\/ \(nothing changed\)$/m);
    expect(text.out).not.toMatch(/^commit:/m);
    const again = JSON.parse((await cli(repo, 'init', '--team', '--json')).out) as { created: string[]; ignored: string[] };
    expect(again).toMatchObject({ created: [], ignored: [] });
    expect(await readFile(join(repo, '.gitignore'), 'utf8')).toMatch(/^node_modules\n# memcore: .*\n\.memcore\/\nmemory\.local\/\n$/);

    // Team mode is on: remember writes a file to commit, a secret one a file git never sees.
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'memory: start team memory');
    const r1 = await cli(repo, 'remember', '--title', 'Retry webhooks', '--content', 'With backoff.', '--core', 'payments', '--json');
    expect(r1.code).toBe(EXIT.ok);
    expect((JSON.parse(r1.out) as { file: string }).file).toMatch(/^memory\/payments\/.+\.md$/);
    const r2 = await cli(repo, 'remember', '--title', 'Key', '--content', 'sk_INITSECRET', '--sensitivity', 'secret', '--json');
    expect((JSON.parse(r2.out) as { file: string }).file).toMatch(/^memory\.local\/default\/.+\.md$/);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toMatch(/^\?\? memory\/payments\/[^\n]+\.md\n$/);
  }, 120_000);

  it('refuses without --team (2), outside git (4), and when memory is a file (3)', async () => {
    const plain = await tempDir('memcore-init-plain-');
    expect((await cli(plain, 'init')).code).toBe(EXIT.usage);
    expect((await cli(plain, 'init', '--team', 'extra')).code).toBe(EXIT.usage);
    const outside = await cli(plain, 'init', '--team', '--json');
    expect(outside.code).toBe(EXIT.notFound);
    expect(JSON.parse(outside.out)).toMatchObject({
      error: { code: 'NOT_FOUND', message: expect.stringMatching(/not in a git repository/) },
    });

    git(plain, 'init', '-q');
    await writeFile(join(plain, 'memory'), 'a file, not a folder\n');
    const blocked = await cli(plain, 'init', '--team');
    expect(blocked.code).toBe(EXIT.invalid);
    expect(blocked.err).toMatch(/memory is a file/);
    expect(git(plain, 'status', '--porcelain', '--untracked-files=all')).toBe('?? memory\n'); // nothing written
  });
});
