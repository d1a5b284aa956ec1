/**
 * Secrets stay out of every read unless asked for: a table of every read path over a store where
 * public entries link to a secret one, checked for the secret's text and its id.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryEngine } from '../src/index.js';
import { tempDirForFile, withEngine } from './helpers.js';

const SECRET_TEXT = 'zqsecret vault root token hunter2';

async function fill(m: MemoryEngine): Promise<void> {
  await m.ingestDocument({
    core_id: 'ops',
    entries: [
      {
        id: 'deploy',
        title: 'Deploys read the vault token',
        content: 'The deploy job reads the vault token at start.',
        sensitivity: 'public',
        importance: 9,
      },
      { id: 'vault-root', title: 'Vault root token', content: SECRET_TEXT, sensitivity: 'secret', importance: 10, pinned: true },
      {
        id: 'rotation',
        title: 'Rotate the vault token monthly',
        content: 'Rotation of the vault token happens on the first Monday.',
        sensitivity: 'internal',
      },
      // Reached from the public entry only through the secret one.
      { id: 'audit', title: 'Audit retention', content: 'Audit logs are kept for ninety days.', sensitivity: 'public' },
    ],
    code_locations: [{ id: 'vault-client', codebase_id: 'infra', file_path: 'src/vault/client.ts', symbol: 'readRootToken' }],
    golden_paths: [{ id: 'gp-vault', name: 'Reading the vault token', concept: 'vault token', steps: [{ code: 'vault-client' }] }],
    relations: [
      { type: 'DEPENDS_ON', from: 'deploy', to: 'vault-root' },
      { type: 'RELATED', from: 'vault-root', to: 'rotation' },
      { type: 'RELATED', from: 'vault-root', to: 'audit' },
      { type: 'REFERENCES_CODE', from: 'vault-root', to: 'vault-client' },
      { type: 'IMPLEMENTS', from: 'vault-root', to: 'gp-vault' },
    ],
  });
}

describe('sensitivity on every read path', () => {
  it('leaves secret entries, their text and their ids out unless asked for', async () => {
    const dir = await tempDirForFile();
    await withEngine(dir, async (m) => {
      await fill(m);
      const q = 'vault root token';
      const paths: [string, () => Promise<unknown>][] = [
        ['semanticSearch', () => m.semanticSearch(q)],
        ['matryoshkaSearch', () => m.matryoshkaSearch(q)],
        ['keywordSearch', () => m.keywordSearch(q)],
        ['hybridSearch', () => m.hybridSearch(q, { mentions: true })],
        ['buildTaskContext', () => m.buildTaskContext(q, { depth: 2 })],
        [
          'buildTaskContext from the public entry',
          () => m.buildTaskContext('deploys read the vault token at start', { depth: 3, maxEntries: 20 }),
        ],
        ['findWithContext', () => m.findWithContext(q, { depth: 2 })],
        ['traverse', () => m.traverse('deploy', { depth: 3 })],
        ['getEntries', () => m.getEntries(['vault-root', 'deploy'])],
        ['entryDetails (a public entry)', () => m.entryDetails('deploy')],
        ['entryDetails (the secret)', () => m.entryDetails('vault-root')],
        ['findByCodeReference', () => m.findByCodeReference({ filePath: 'src/vault' })],
        ['findRelatedToCode', () => m.findRelatedToCode('src/vault', q)],
        ['listEntries', () => m.listEntries({ cores: ['ops'] })],
        ['coreMemory', () => m.coreMemory('ops')],
        ['entryGraph around the public entry', () => m.entryGraph({ focus: 'deploy', depth: 3 })],
        ['entryGraph of the core', () => m.entryGraph({ core: 'ops' })],
      ];
      for (const [name, read] of paths) {
        const seen = JSON.stringify(await read());
        expect(seen, name).not.toContain('zqsecret');
        expect(seen, name).not.toContain('vault-root');
      }
      await expect(m.traverse('vault-root')).rejects.toThrow('no entry with id "vault-root"');
      await expect(m.entryGraph({ focus: 'vault-root' })).rejects.toThrow('no entry with id "vault-root"');
      // Asked for, they are there.
      const all = { sensitivity: ['public', 'internal', 'secret'] as const };
      expect((await m.getEntries(['vault-root'], { sensitivity: [...all.sensitivity] })).map((e) => e.id)).toEqual(['vault-root']);
      expect((await m.traverse('deploy', { sensitivity: [...all.sensitivity] })).map((h) => h.entry.id)).toEqual([
        'vault-root',
        'audit',
        'rotation',
      ]);
      expect((await m.entryDetails('deploy', { sensitivity: [...all.sensitivity] }))!.links).toContainEqual({
        type: 'DEPENDS_ON',
        from: 'deploy',
        to: 'vault-root',
      });
      expect(
        (await m.findByCodeReference({ symbol: 'readRootToken' }, { sensitivity: [...all.sensitivity] })).map((h) => h.entry.id),
      ).toEqual(['vault-root']);
      expect((await m.keywordSearch('zqsecret', { sensitivity: [...all.sensitivity] })).map((h) => h.entry.id)).toEqual(['vault-root']);
      const graph = await m.entryGraph({ core: 'ops' }, { sensitivity: [...all.sensitivity] });
      expect(graph.nodes.map((n) => n.id).sort()).toEqual(['audit', 'deploy', 'rotation', 'vault-root']);
      expect(graph.edges).toContainEqual({ from: 'deploy', to: 'vault-root', type: 'DEPENDS_ON' });
    });
  });

  it('keeps a remembered entry from naming a secret it was linked to', async () => {
    const dir = await tempDirForFile();
    await withEngine(dir, async (m) => {
      await fill(m);
      const r = await m.remember({
        title: 'Vault outage runbook',
        content: 'When the Vault root token is refused, page the platform team.',
        core: 'ops',
        dependsOn: ['vault-root', 'rotation'],
      });
      expect(JSON.stringify(r.links)).not.toContain('vault-root');
      expect(r.links).toContainEqual({ type: 'DEPENDS_ON', from: r.id, to: 'rotation' });
    });
  });
});
