/**
 * Memory in git, end to end: `npx tsx examples/team-memory.ts`. Makes a repository in a temp
 * folder and starts team memory in it (`memcore init --team`), remembers a lesson (a file appears, ready to commit), commits it,
 * edits it by hand (the next answer has the new text) and lists what the commit changed in memory.
 * Offline: the local model, no server. See docs/team.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatMemoryDiff, initTeamFolder, memoryDiff, openMemory } from '../src/index.js';

const repo = await mkdtemp(join(tmpdir(), 'memcore-team-example-'));
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Example', '-c', 'user.email=example@example.com', ...args], { cwd: repo, encoding: 'utf8' });
try {
  git('init', '-q', '-b', 'main');
  // memcore init --team: memory/ with a README, and .gitignore lines for .memcore/ and memory.local/.
  const { toCommit } = await initTeamFolder(join(repo, '.memcore'));
  git('add', ...toCommit);
  git('commit', '-qm', 'start');

  const memory = await openMemory({ path: join(repo, '.memcore') }); // team mode: memory/ is there
  const { id } = await memory.remember({
    title: 'Refunds are ledger entries',
    content: 'A refund is a compensating ledger entry; never update a balance directly.',
    core: 'payments',
    type: 'decision',
  });
  const file = join(repo, 'memory', 'payments', `${id}.md`);
  console.log(`git status:\n${git('status', '--short')}`);
  console.log(await readFile(file, 'utf8'));
  git('add', '-A');
  git('commit', '-qm', 'memory: refunds');

  await writeFile(file, (await readFile(file, 'utf8')).replace('never update', 'never, ever update'));
  const bundle = await memory.buildTaskContext('how do we record a refund?');
  console.log(`after a hand edit: ${bundle.entries.find((e) => e.entry.id === id)?.entry.content}\n`);

  const folder = await memory.memoryFolder();
  console.log(formatMemoryDiff(await memoryDiff(folder!, 'HEAD~1..HEAD')));
  await memory.close();
} finally {
  await rm(repo, { recursive: true, force: true });
}
