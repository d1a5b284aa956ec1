/**
 * The code channel: import-code's code search index over a real git repository of TypeScript,
 * Python and Go files made here, findCode, the bundle's code references, `search --mode code`.
 * Real LanceDB and Kuzu in temp folders; the word-hash embedder.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { codeQueryTerms, isSecondaryCode } from '../src/retrieve/score.js';
import { splitIdentifiers } from '../src/text/analyze.js';
import { importSpecifiers } from '../src/import/importSpecifiers.js';
import { formatLocalization, runCodeLocalization } from '../src/eval/codeLocalization.js';
import { capturedIo, gitIn, tempDir, withEngine, wordHashEmbedder } from './helpers.js';

const FILES: Record<string, string> = {
  'src/auth/refresh.ts': `import { signToken } from './sign.js';

/** Issues a new refresh token and revokes the one presented, so a stolen token works once. */
export function rotateRefreshToken(presented: string): string {
  return signToken(presented + ':next');
}
`,
  'src/auth/sign.ts': `/** Signs claims with the current key. */
export function signToken(claims: string): string {
  return claims;
}
`,
  'src/auth/refresh.test.ts': `import { rotateRefreshToken } from './refresh.js';
it('rotates the refresh token', () => rotateRefreshToken('refresh token rotation'));
`,
  'src/http/cors.ts': `export function corsHeaders(origin: string) {
  return { 'access-control-allow-origin': origin };
}
`,
  'tools/retry_policy.py': `"""Backoff for outgoing calls."""
from .clock import sleep_for


def parse_retry_after(header_value):
    """Reads a Retry-After header: seconds or an HTTP date."""
    return int(header_value)
`,
  'tools/clock.py': `def sleep_for(seconds):
    return seconds
`,
  'cmd/flags/parse_flags.go': `package flags

// ParsePersistentFlags reads the flags every subcommand inherits.
func ParsePersistentFlags(args []string) []string {
	return args
}
`,
};

async function fixtureRepo(): Promise<string> {
  const dir = join(await tempDir(), 'repo');
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  gitIn(dir, 'init', '-q', '-b', 'main');
  gitIn(dir, 'add', '.');
  gitIn(dir, 'commit', '-q', '-m', 'fixture');
  return dir;
}

describe('code channel: words of code', () => {
  it('splits camelCase identifiers and weighs the first line of a task more', () => {
    expect(splitIdentifiers('rotateRefreshToken HTTPServer')).toBe('rotateRefreshToken rotate Refresh Token HTTPServer HTTP Server');
    const terms = new Map(codeQueryTerms('fix(cors): headers\n\nheaders headers token').map((t) => [t.word, t.weight]));
    expect(terms.get('cors')).toBe(2);
    expect(terms.get('headers')).toBeCloseTo(2 * (1 + Math.log(3)));
    expect(terms.get('token')).toBe(1);
    // code's abbreviations of the task's words, at half their weight
    const spelled = new Map(codeQueryTerms('check the request parameters').map((t) => [t.word, t.weight]));
    expect(spelled.get('req')).toBe(1);
    expect(spelled.get('params')).toBe(1);
    expect(spelled.get('parameters')).toBe(2);
  });

  it('tells tests, examples and generated copies from the code a change is made in', () => {
    expect(isSecondaryCode('src/auth/refresh.test.ts')).toBe(true);
    expect(isSecondaryCode('tests/test_core.py')).toBe(true);
    expect(isSecondaryCode('command_test.go')).toBe(true);
    expect(isSecondaryCode('deno_dist/middleware/cors.ts')).toBe(true);
    expect(isSecondaryCode('doc/man_docs.go')).toBe(false);
    expect(isSecondaryCode('src/auth/refresh.ts')).toBe(false);
  });

  it('reads imports of TypeScript, Python and Go', () => {
    expect(importSpecifiers('typescript', `import { a } from './a.js';\nconst b = require("../b");`)).toEqual(['./a.js', '../b']);
    expect(importSpecifiers('python', 'from .clock import x\nimport os, click.core\n')).toEqual(['.clock', 'os', 'click.core']);
    expect(importSpecifiers('go', 'import (\n\t"fmt"\n\t"github.com/x/y/doc"\n)\n')).toEqual(['fmt', 'github.com/x/y/doc']);
  });
});

describe('code channel: findCode over an imported repository', () => {
  it('records Python and Go files as file-level locations and ranks files by the task, each with why', async () => {
    const repo = await fixtureRepo();
    await withEngine(await tempDir(), async (m) => {
      const report = await m.importCode(repo, { codebase: 'app' });
      expect(report.files.read).toBe(Object.keys(FILES).length);
      const goFile = await m.findByCodeReference({ filePath: 'cmd/flags/parse_flags.go' });
      expect(goFile).toEqual([]); // no entry references it yet, but the location exists:
      const exported = await m.exportMemory();
      const paths = exported.code_locations!.map((c) => `${c.file_path}${c.symbol ? `#${c.symbol}` : ''}`);
      expect(paths).toEqual(
        expect.arrayContaining(['tools/retry_policy.py', 'cmd/flags/parse_flags.go', 'src/auth/refresh.ts#rotateRefreshToken']),
      );

      // camelCase identifiers and the symbol's doc comment, against the task's words; the test file after the code
      const rotation = await m.findCode('rotate the refresh token after use');
      expect(rotation[0]!.code.filePath).toBe('src/auth/refresh.ts');
      expect(rotation[0]!.code.symbol).toBe('rotateRefreshToken');
      expect(rotation[0]!.why).toContain('code-search');
      const order = rotation.map((h) => h.code.filePath);
      expect(order.indexOf('src/auth/refresh.test.ts')).toBeGreaterThan(0);
      // what the best file imports comes with it
      const signed = rotation.find((h) => h.code.filePath === 'src/auth/sign.ts');
      expect(signed?.why).toContain('imported by src/auth/refresh.ts');

      // snake_case and doc comments of Python; a Go file by its path and text
      expect((await m.findCode('Retry-After header parsing'))[0]!.code.filePath).toBe('tools/retry_policy.py');
      expect((await m.findCode('persistent flags of subcommands'))[0]!.code.filePath).toBe('cmd/flags/parse_flags.go');
      expect(await m.findCode('cors', { codebases: ['other'] })).toEqual([]);
      expect(await m.findCode('rotate refresh token', { limit: 1 })).toHaveLength(1);
    });
  });

  it('follows the repository: a removed file is no longer found, a changed one is found by its new words', async () => {
    const repo = await fixtureRepo();
    await withEngine(await tempDir(), async (m) => {
      await m.importCode(repo, { codebase: 'app' });
      await rm(join(repo, 'src/http/cors.ts'));
      await writeFile(join(repo, 'tools/clock.py'), 'def monotonic_deadline(budget):\n    return budget\n');
      const again = await m.importCode(repo, { codebase: 'app' });
      expect(again.files.removed).toBe(1);
      expect((await m.findCode('cors access control origin')).map((h) => h.code.filePath)).not.toContain('src/http/cors.ts');
      expect((await m.findCode('monotonic deadline budget'))[0]!.code.filePath).toBe('tools/clock.py');
    });
  });

  it('puts the code in the bundle: searched code and code the entries reference, inside the token budget', async () => {
    const repo = await fixtureRepo();
    await withEngine(await tempDir(), async (m) => {
      await m.remember({
        core: 'auth',
        id: 'lesson-signing',
        title: 'Signing keys rotate monthly',
        content: 'Token signing goes through signToken in src/auth/sign.ts; never sign with a hard-coded key.',
      });
      await m.importCode(repo, { codebase: 'app' });
      const bundle = await m.buildTaskContext('rotate the refresh token after use');
      const refs = bundle.codeRefs.map((r) => r.code.filePath);
      expect(refs[0]).toBe('src/auth/refresh.ts');
      expect(bundle.codeRefs[0]!.why).toContain('code-search');
      const signing = await m.buildTaskContext('signing keys for tokens');
      const sign = signing.codeRefs.find((r) => r.code.filePath === 'src/auth/sign.ts');
      expect(sign?.why).toContain('referenced by lesson-signing');
      expect(sign?.entryIds).toContain('lesson-signing');
      // a budget with no room left after the entries holds no code
      const tight = await m.buildTaskContext('rotate the refresh token after use', { maxTokens: 1 });
      expect(tight.codeRefs).toEqual([]);
    });
  });

  it('refuses bad input with a clear error', async () => {
    await withEngine(await tempDir(), async (m) => {
      await expect(m.findCode('')).rejects.toThrow(/non-empty text/);
      await expect(m.findCode('x', { limit: 0 })).rejects.toThrow(/limit must be an integer from 1 to 200/);
      await expect(m.findCode('x', { codebases: [''] })).rejects.toThrow(/codebases/);
      await expect(m.findCode('x', { codebases: 'app' as never })).rejects.toThrow(/codebases must be a list/);
      await expect(m.findCode('x', { nope: 1 } as never)).rejects.toThrow(/nope/);
      expect(await m.findCode('anything at all')).toEqual([]);
    });
  });

  it('says which file is damaged when the code search index cannot be read, and how to rebuild it', async () => {
    const db = await tempDir();
    await withEngine(db, async (m) => {
      await writeFile(join(db, 'code-search.json'), '{"files": [{"path": 3}]}');
      await expect(m.findCode('anything')).rejects.toThrow(
        /code-search\.json is not a code search index .*run `memcore import-code` again/,
      );
    });
  });
});

describe('memcore search --mode code', () => {
  it('lists the code for a text, as JSON too, and refuses options of the entry searches', async () => {
    const repo = await fixtureRepo();
    const db = join(await tempDir(), 'store');
    const { io, out, err } = capturedIo();
    expect(await main(['import-code', repo, '--codebase', 'app', '--db', db], io)).toBe(EXIT.ok);
    out.length = 0;
    expect(await main(['search', 'rotate the refresh token', '--mode', 'code', '--db', db], io)).toBe(EXIT.ok);
    expect(out.join('\n')).toMatch(/^ 1\. .* app:src\/auth\/refresh\.ts#rotateRefreshToken:4-6 .*code-search/);
    out.length = 0;
    expect(await main(['search', 'Retry-After header', '--mode', 'code', '--json', '--limit', '2', '--db', db], io)).toBe(EXIT.ok);
    const hits = JSON.parse(out.join('\n')) as { code: { filePath: string } }[];
    expect(hits).toHaveLength(2);
    expect(hits[0]!.code.filePath).toBe('tools/retry_policy.py');
    expect(await main(['search', 'x', '--mode', 'code', '--fusion', 'rrf', '--db', db], io)).toBe(EXIT.usage);
    expect(err.join('\n')).toMatch(/--fusion does not apply to --mode code/);
    expect(await main(['search', 'x', '--codebase', 'app', '--db', db], io)).toBe(EXIT.usage);
    expect(await main(['search', 'x', '--mode', 'code', '--limit', '0', '--db', db], io)).toBe(EXIT.invalid);
  });
});

describe('memcore eval code-localization', () => {
  it('checks out each base commit, imports it and scores the files findCode ranks against the gold', async () => {
    const repo = await fixtureRepo();
    const first = gitIn(repo, 'rev-parse', 'HEAD').trim();
    await writeFile(join(repo, 'src/http/compress.ts'), 'export function gzipBody(body: string) {\n  return body;\n}\n');
    gitIn(repo, 'add', '.');
    gitIn(repo, 'commit', '-q', '-m', 'compression');
    const second = gitIn(repo, 'rev-parse', 'HEAD').trim();
    const data = await tempDir();
    await mkdir(join(data, 'fixture'));
    const task = (id: string, base: string, text: string, gold: string[]) =>
      JSON.stringify({ id, repo: 'test/fixture', base_commit: base, task: text, gold_files: gold });
    await writeFile(
      join(data, 'fixture', 'tasks.jsonl'),
      [
        task('t1', first, 'fix(auth): rotate the refresh token once', ['src/auth/refresh.ts']),
        task('t2', second, 'gzip the body when compressing', ['src/http/compress.ts']),
        task('t3', first, 'parse the Retry-After header', ['tools/retry_policy.py', 'src/http/cors.ts']),
      ].join('\n'),
    );
    const report = await runCodeLocalization({
      gitDirs: { fixture: repo },
      data,
      ks: [1, 5],
      docs: false,
      misses: 1,
      engine: { embedder: wordHashEmbedder(), env: {} },
    });
    expect(report.perRepo.fixture).toMatchObject({ n: 3, accAny: { 1: 100, 5: 100 } });
    // t3's second gold file is about something else: it is not all in the top 1
    expect(report.overall.accAll[1]).toBeCloseTo(66.7);
    expect(report.misses).toEqual([]);
    expect(formatLocalization(report)).toMatch(/\| fixture \| 3 \| 100\.0 \/ 100\.0 \|/);
    // the clone is left as it was: no worktree stays behind
    expect(gitIn(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    await expect(runCodeLocalization({ gitDirs: {}, data })).rejects.toThrow(/--git-dir/);
    await expect(runCodeLocalization({ gitDirs: { nope: repo }, data })).rejects.toThrow(/no tasks for "nope"/);
  });
});
