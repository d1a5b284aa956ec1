import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeConfig, openMemory, resolveConfig } from '../src/index.js';
import { main } from '../src/cli/main.js';
import { tempDir } from './helpers.js';

describe('configuration', () => {
  it('options > env > config file > defaults, with the source of each', async () => {
    const cwd = await tempDir();
    await writeFile(
      join(cwd, 'memcore.config.yaml'),
      'embedder:\n  provider: openai\n  model: from-file\n  dimensions: 768\n  batchSize: 16\nllm:\n  model: chat-file\ncache:\n  ttlMs: 1000\n',
    );
    const r = resolveConfig({
      cwd,
      env: { MEMCORE_EMBED_MODEL: 'from-env', MEMCORE_EMBED_BATCH_SIZE: '32' },
      options: { embedder: { batchSize: 8 } },
    });
    expect(r.values).toMatchObject({
      db: '.memcore',
      embedder: { provider: 'openai', model: 'from-env', dimensions: 768, batchSize: 8 },
      llm: { model: 'chat-file' },
      cache: { ttlMs: 1000, max: 500 },
    });
    expect(r.sources).toMatchObject({
      db: 'default',
      'embedder.model': 'env',
      'embedder.batchSize': 'option',
      'embedder.dimensions': `file ${join(cwd, 'memcore.config.yaml')}`,
    });
    expect(r.file).toBe(join(cwd, 'memcore.config.yaml'));
  });

  it('prefers the config file in the database folder over the working directory', async () => {
    const cwd = await tempDir();
    await mkdir(join(cwd, 'db'));
    await writeFile(join(cwd, 'memcore.config.json'), JSON.stringify({ cache: { max: 1 } }));
    await writeFile(join(cwd, 'db', 'memcore.config.json'), JSON.stringify({ cache: { max: 2 } }));
    expect(resolveConfig({ cwd, env: {}, options: { db: 'db' } }).values).toMatchObject({ cache: { max: 2 } });
    expect(resolveConfig({ cwd, env: {} }).values).toMatchObject({ cache: { max: 1 } });
  });

  it('names the setting and its source when a value is bad or missing', async () => {
    const cwd = await tempDir();
    expect(() => resolveConfig({ cwd, env: { MEMCORE_EMBED_DIMENSIONS: 'many' } })).toThrow(
      'MEMCORE_EMBED_DIMENSIONS: embedder.dimensions must be a whole number ≥ 0, got "many"',
    );
    expect(() => resolveConfig({ cwd, env: { MEMCORE_EMBEDDER: 'magic' } })).toThrow(/embedder.provider must be one of local, openai/);
    expect(() => resolveConfig({ cwd, env: { MEMCORE_EMBEDDER: 'openai' } })).toThrow(
      /embedder.model is required when embedder.provider is openai \(set MEMCORE_EMBED_MODEL/,
    );
    expect(() => resolveConfig({ cwd, env: { MEMCORE_LLM_BASE_URL: 'ftp://x' } })).toThrow(/llm.baseURL must be an http\(s\) URL/);
    expect(() => resolveConfig({ cwd, env: { MEMCORE_EMBED_SEND_DIMENSIONS: 'maybe' } })).toThrow(/must be true or false/);
    expect(() => resolveConfig({ cwd, env: { MEMCORE_RESIDENT_MAX_ENTRIES: '-5' } })).toThrow(
      'MEMCORE_RESIDENT_MAX_ENTRIES: residentMaxEntries must be a whole number ≥ 0, got "-5"',
    );
    await expect(openMemory({ path: join(cwd, 'y'), env: {}, residentMaxEntries: 1.5 })).rejects.toThrow(
      'option: residentMaxEntries must be a whole number ≥ 0, got 1.5',
    );
    expect(resolveConfig({ cwd, env: { MEMCORE_RESIDENT_MAX_ENTRIES: '0' } }).values).toMatchObject({ residentMaxEntries: 0 });
    expect(resolveConfig({ cwd, env: {} }).values).toMatchObject({ residentMaxEntries: 1_000_000, scanMaxEntries: 2_000_000 });
    expect(resolveConfig({ cwd, env: { MEMCORE_SCAN_MAX_ENTRIES: '0' } }).values).toMatchObject({ scanMaxEntries: 0 });
    expect(resolveConfig({ cwd, env: {} }).values).toMatchObject({ scanThreadMinEntries: 32_768 });
    expect(resolveConfig({ cwd, env: { MEMCORE_SCAN_THREAD_MIN_ENTRIES: '0' } }).values).toMatchObject({ scanThreadMinEntries: 0 });
    expect(() => resolveConfig({ cwd, env: { MEMCORE_SCAN_THREAD_MIN_ENTRIES: 'many' } })).toThrow(/MEMCORE_SCAN_THREAD_MIN_ENTRIES/);
    await expect(openMemory({ path: join(cwd, 'z'), env: {}, scanMaxEntries: -1 })).rejects.toThrow(
      'option: scanMaxEntries must be a whole number ≥ 0, got -1',
    );
    await writeFile(join(cwd, 'memcore.config.json'), JSON.stringify({ embeder: { model: 'x' } }));
    expect(() => resolveConfig({ cwd, env: {} })).toThrow(/memcore.config.json: unknown setting "embeder.model"/);
    await writeFile(join(cwd, 'memcore.config.json'), '{ nope');
    expect(() => resolveConfig({ cwd, env: {} })).toThrow(/memcore.config.json: cannot be parsed/);
    await expect(openMemory({ path: join(cwd, 'x'), env: { MEMCORE_EMBEDDER: 'openai' }, cwd: await tempDir() })).rejects.toThrow(
      /embedder.model is required/,
    );
  });

  it('masks secrets', () => {
    const rows = describeConfig(
      resolveConfig({ env: { MEMCORE_EMBED_API_KEY: 'sk-1234567890abcdef', MEMCORE_LLM_API_KEY: 'short' }, cwd: '/nonexistent' }),
    );
    expect(rows.find((r) => r.key === 'embedder.apiKey')).toMatchObject({ value: 'sk-…ef', source: 'env' });
    expect(rows.find((r) => r.key === 'llm.apiKey')).toMatchObject({ value: '****' });
    expect(rows.find((r) => r.key === 'llm.model')).toMatchObject({ value: null, source: 'unset' });
  });

  it('memcore config prints the effective configuration', async () => {
    const db = await tempDir();
    await writeFile(join(db, 'memcore.config.json'), JSON.stringify({ llm: { model: 'm', apiKey: 'sk-secret-value-123' } }));
    const out: string[] = [];
    const code = await main(['config', '--db', db, '--json'], { out: (t) => out.push(t), err: () => undefined, isTTY: false });
    expect(code).toBe(0);
    const parsed = JSON.parse(out.join('')) as { file: string; settings: { key: string; value: unknown }[] };
    expect(parsed.file).toBe(join(db, 'memcore.config.json'));
    expect(parsed.settings.find((s) => s.key === 'llm.apiKey')!.value).toBe('sk-…23');
    expect(out.join('')).not.toContain('sk-secret-value-123');
  });
});
