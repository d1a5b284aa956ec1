/**
 * Decision records as teams write them (test/fixtures/adr: MADR 2 list items, MADR 3/4 front
 * matter, Nygard/adr-tools status sections, log4brains date-prefixed names): the status decides
 * what is in effect, the record's date becomes created_at, the successor gets a SUPERSEDES edge.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openMemory, type MemoryEngine } from '../src/index.js';
import type { EntryRecord } from '../src/model/memoryFile.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/adr', import.meta.url));

interface Imported {
  m: MemoryEngine;
  /** Every entry by title, in effect or not. */
  all: Map<string, EntryRecord>;
  supersedes: string[];
  inEffect: (asOf?: Date) => Promise<string[]>;
}

async function importFixture(name: string, fn: (x: Imported) => Promise<void>): Promise<void> {
  const dir = join(await tempDir(), name);
  await cp(join(FIXTURES, name), dir, { recursive: true });
  const m = await openMemory({ path: join(dir, '.memcore'), embedder: wordHashEmbedder(), env: {} });
  try {
    const report = await m.importMarkdown([dir]);
    expect(report.failed).toEqual([]);
    const exported = await m.exportMemory();
    const all = new Map(exported.entries!.map((e) => [e.title, e]));
    const title = new Map(exported.entries!.map((e) => [e.id, e.title]));
    const supersedes = (exported.relations ?? [])
      .filter((r) => r.type === 'SUPERSEDES')
      .map((r) => `${title.get(r.from)} -> ${title.get(r.to)}`)
      .sort();
    const inEffect = async (asOf?: Date) =>
      (await m.listEntries(asOf ? { asOf } : {})).map((e) => e.title).sort((a, b) => a.localeCompare(b));
    await fn({ m, all, supersedes, inEffect });
  } finally {
    await m.close();
  }
}

const day = (d: string) => new Date(`${d}T00:00:00.000Z`).getTime();
const createdAt = (e: EntryRecord | undefined) => (e?.created_at === undefined ? undefined : new Date(e.created_at).getTime());

describe('decision records: status, date and supersession in each format', () => {
  it('MADR 2: `* Status:` and `* Date:` list items, links by file name, rejected and deprecated records', async () => {
    await importFixture('madr', async ({ all, supersedes, inEffect }) => {
      expect(supersedes).toEqual(['Keep sessions in Redis -> Store sessions in process memory']);
      const old = all.get('Store sessions in process memory')!;
      expect(old.tags).toContain('status:superseded');
      expect(createdAt(old)).toBe(day('2019-04-02'));
      expect(all.get('Keep sessions in Redis')!.tags).toContain('status:accepted');
      expect(all.get('Answer in XML as well as JSON')!.tags).toContain('status:rejected');
      expect(all.get('Write logs as JSON lines')!.tags).toContain('status:deprecated');
      // Only the accepted record is in effect now.
      expect(await inEffect()).toEqual(['Keep sessions in Redis']);
      // Before its successor was decided, the superseded record was in effect; a rejected one never was.
      expect(await inEffect(new Date('2020-01-01'))).toEqual(['Store sessions in process memory']);
    });
  });

  it('MADR 3/4 front matter: `status: superseded by ADR-0002` and `date:`', async () => {
    await importFixture('madr-front-matter', async ({ all, supersedes, inEffect }) => {
      expect(supersedes).toEqual(['Move orders to PostgreSQL 16 -> Use PostgreSQL for orders']);
      expect(all.get('Use PostgreSQL for orders')!.tags).toEqual(['status:superseded']);
      expect(createdAt(all.get('Move orders to PostgreSQL 16'))).toBe(day('2023-05-17'));
      expect(all.get('Event-source the order history')!.tags).toEqual(['status:proposed']);
      expect(await inEffect()).toEqual(['Event-source the order history', 'Move orders to PostgreSQL 16']);
      expect(await inEffect(new Date('2022-06-01'))).toEqual(['Use PostgreSQL for orders']);
    });
  });

  it('Nygard / adr-tools: a `## Status` section, "Superceded by [3. …](0003-….md)", a Date line under the title', async () => {
    await importFixture('nygard', async ({ all, supersedes, inEffect }) => {
      expect(supersedes).toEqual(['3. Deploy with Kubernetes -> 2. Deploy with Ansible']);
      expect(all.get('2. Deploy with Ansible')!.tags).toEqual(['status:superseded']);
      expect(all.get('1. Record architecture decisions')!.tags).toEqual(['status:accepted']);
      expect(createdAt(all.get('2. Deploy with Ansible'))).toBe(day('2018-03-01'));
      expect(createdAt(all.get('3. Deploy with Kubernetes'))).toBe(day('2019-11-20'));
      expect(await inEffect()).toEqual(['1. Record architecture decisions', '3. Deploy with Kubernetes']);
      expect(await inEffect(new Date('2019-01-01'))).toEqual(['1. Record architecture decisions', '2. Deploy with Ansible']);
    });
  });

  it('log4brains: date-prefixed names, links by slug, Tags lines; the index is a document, the template is not imported', async () => {
    await importFixture('log4brains', async ({ all, supersedes, inEffect }) => {
      expect(supersedes).toEqual(['Identify records by their slug -> Identify records by their number']);
      expect(createdAt(all.get('Identify records by their number'))).toBe(day('2020-09-26'));
      // No Date line: the date in the file name.
      expect(createdAt(all.get('Identify records by their slug'))).toBe(day('2020-10-16'));
      expect(createdAt(all.get('Write the docs in MDX'))).toBe(day('2021-03-01'));
      expect(all.get('Identify records by their slug')!.tags).toEqual(['records', 'naming', 'status:accepted']);
      expect(all.get('Write the docs in MDX')!).toMatchObject({ tags: ['docs', 'status:draft'], entry_type: 'decision' });
      expect(all.get('Decision log')!.entry_type).toBe('fact');
      expect([...all.keys()].some((t) => t.includes('[title]'))).toBe(false);
      expect(await inEffect()).toEqual(['Decision log', 'Identify records by their slug', 'Write the docs in MDX']);
    });
  });
});
