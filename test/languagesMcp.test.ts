/**
 * context_for_diff over MCP on a Go repository: `memcore mcp` spawned in the repository, driven by
 * the MCP SDK's Client; the store built by the CLI's import-code and ingest (fake OpenAI embedder
 * on 127.0.0.1, as in mcpServer.test.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect, it } from 'vitest';
import { cliWithFakeEmbedder, nodeArgs } from './cliProcess.js';
import { gitIn, tempDir } from './helpers.js';

const { memcore, env } = cliWithFakeEmbedder();

const GO = (value: number) => `package main\n\nfunc keep() int {\n\treturn 1\n}\n\nfunc edit() int {\n\treturn ${value}\n}\n`;

it('maps a Go change to its symbols and the entries on them through MCP', async () => {
  const dir = await tempDir();
  const repo = join(dir, 'repo');
  const db = join(dir, 'store');
  await mkdir(repo);
  await writeFile(join(repo, 'main.go'), GO(2));
  gitIn(repo, 'init', '-q', '-b', 'main');
  gitIn(repo, 'add', '.');
  gitIn(repo, 'commit', '-q', '-m', 'first');
  expect((await memcore(['import-code', repo, '--codebase', 'app', '--db', db])).code).toBe(0);
  const memory = join(dir, 'memory.yaml');
  await writeFile(
    memory,
    'core_id: app\nentries:\n  - { id: on-edit, title: edit must stay pure, content: edit returns a constant; callers cache it. }\n' +
      "relations:\n  - { type: REFERENCES_CODE, from: on-edit, to: 'app:main.go#edit' }\n",
  );
  expect((await memcore(['ingest', memory, '--db', db])).code).toBe(0);
  await writeFile(join(repo, 'main.go'), GO(20));
  gitIn(repo, 'commit', '-qam', 'second');

  // the server runs in the repository (git runs where the server is)
  const client = new Client({ name: 'memcore-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(['mcp', '--db', db]),
      env: env(),
      cwd: repo,
      stderr: 'pipe',
    }),
  );
  try {
    const result = (await client.callTool({ name: 'context_for_diff', arguments: { range: 'HEAD~1..HEAD', max_entries: 3 } })) as {
      isError?: boolean;
      structuredContent?: { changes: unknown[]; entries: { entry: { id: string } }[] };
    };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent!.changes).toEqual([{ path: 'main.go', oldPath: null, change: 'modified', symbols: ['edit'] }]);
    expect(result.structuredContent!.entries[0]!.entry.id).toBe('on-edit');
  } finally {
    await client.close();
  }
}, 240_000); // four CLI processes and a server: slow on a loaded 2-core machine
