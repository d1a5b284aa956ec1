/**
 * The parts of .ci/readme-check that read the docs, on the docs as they are: the full check (a
 * fresh clone, every block run) is in .ci/run; this fails fast in `npm test` on what it would
 * refuse before running anything.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { blocksOf, npxMemcore } from '../.ci/readmeCheck.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (f: string) => readFileSync(join(root, f), 'utf8');

describe('readme-check', () => {
  it('reads the markers above a block, and refuses one it does not know, naming the line', () => {
    const text = [
      '# t',
      '```sh',
      'memcore stats',
      '```',
      '<!-- readme-check: in project -->',
      '',
      '```sh',
      'memcore import .',
      '```',
      '<!-- readme-check: skip (a server that runs until stopped) -->',
      '```sh',
      'memcore serve',
      '```',
    ].join('\n');
    expect(blocksOf('X.md', text)).toEqual([
      { file: 'X.md', line: 2, lang: 'sh', text: 'memcore stats', where: 'clone' },
      { file: 'X.md', line: 7, lang: 'sh', text: 'memcore import .', where: 'project' },
      { file: 'X.md', line: 11, lang: 'sh', text: 'memcore serve', where: 'clone', skip: 'a server that runs until stopped' },
    ]);
    expect(() => blocksOf('X.md', '<!-- readme-check: skipp -->\n```sh\nx\n```')).toThrow(/X\.md:1: unknown readme-check marker "skipp"/);
    expect(() => blocksOf('X.md', 'a\n```sh\nx\n')).toThrow(/X\.md:2: a code block that is never closed/);
  });

  it('finds every npx memcore, in a block or in prose, as file:line', () => {
    expect(npxMemcore([['A.md', 'ok: memcore stats\nrun `npx memcore mcp`\n  npx --yes memcore ui\nnpx tsx x.ts']])).toEqual([
      'A.md:2: run `npx memcore mcp`',
      'A.md:3: npx --yes memcore ui',
    ]);
  });

  it('passes its reading of README.md and docs/ as they are: no npx memcore, every marker known, sh blocks to run', () => {
    const docs = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    expect(npxMemcore(docs.map((f) => [f, read(f)]))).toEqual([]);
    const blocks = ['README.md', 'docs/agents.md'].flatMap((f) => blocksOf(f, read(f)));
    const run = blocks.filter((b) => b.lang === 'sh' && !b.skip);
    expect(run.length).toBeGreaterThanOrEqual(4);
    // Skips stay few, each with its reason.
    expect(blocks.filter((b) => b.skip).length).toBeLessThanOrEqual(4);
    const configs = blocks.filter((b) => b.lang === 'json' && b.text.includes('mcpServers'));
    expect(configs.map((b) => JSON.parse(b.text) as unknown)).toContainEqual({
      mcpServers: { memcore: { command: 'memcore', args: ['mcp'] } },
    });
  });
});
