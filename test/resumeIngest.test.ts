/**
 * An ingest or import killed midway resumes where it stopped: embeddings are saved to the cache a
 * slice (256 texts) at a time, so a re-run embeds only what the killed run had not finished. The
 * writer is a real `memcore ingest` / `memcore import` process, the model a real HTTP server
 * speaking the OpenAI API.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdir, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddingsReply, startFakeOpenAI, type FakeOpenAI } from './openaiServer.js';
import { tempDir } from './helpers.js';
import { nodeArgs } from './cliProcess.js';

let server: FakeOpenAI | undefined;
afterAll(async () => server?.close());

/** 1,000 entries as a memory file, or as 100 markdown documents of 10 sections. */
async function thousandEntries(dir: string, command: 'ingest' | 'import'): Promise<string> {
  if (command === 'ingest') {
    const file = join(dir, 'memory.json');
    await writeFile(
      file,
      JSON.stringify({
        core_id: 'c',
        entries: Array.from({ length: 1000 }, (_, i) => ({
          id: `e${i}`,
          title: `Entry ${i}`,
          content: `Text number ${i} of the resumable ingest.`,
        })),
      }),
    );
    return file;
  }
  const docs = join(dir, 'docs');
  await mkdir(docs);
  for (let d = 0; d < 100; d++) {
    await writeFile(
      join(docs, `doc-${d}.md`),
      Array.from({ length: 10 }, (_, s) => `## Section ${d}.${s}\n\nText number ${d * 10 + s} of the resumable import.\n`).join('\n'),
    );
  }
  return docs;
}

describe('a killed ingest or import', () => {
  it.each(['ingest', 'import'] as const)(
    '%s resumes without embedding again the slices it had finished, and the stores agree',
    async (command) => {
      server ??= await startFakeOpenAI(8);
      const dir = await tempDir();
      const file = await thousandEntries(dir, command);
      const env = {
        ...process.env,
        MEMCORE_EMBEDDER: 'openai',
        MEMCORE_EMBED_BASE_URL: server.baseURL,
        MEMCORE_EMBED_MODEL: 'fake',
        MEMCORE_EMBED_DIMENSIONS: '8',
      };
      const ingest = (onSpawn?: (kill: () => void) => void) =>
        new Promise<{ code: number | null; signal: string | null; stdout: string }>((resolve) => {
          const child = spawn(process.execPath, nodeArgs([command, file, '--db', join(dir, 'db'), '--json']), {
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let stdout = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          onSpawn?.(() => child.kill('SIGKILL'));
          child.once('exit', (code, signal) => resolve({ code, signal, stdout }));
        });

      // First run: the model answers 600 texts, then stops answering; the process is killed there.
      let answered = 0;
      const held: ServerResponse[] = [];
      let killNow: (() => void) | undefined;
      server.respond = (body, _n, res) => {
        const input = body.input as string[];
        if (answered >= 600) {
          held.push(res);
          killNow?.();
          return;
        }
        answered += input.length;
        embeddingsReply(res, input, 8);
      };
      const killed = await ingest((kill) => (killNow = kill));
      expect(killed.signal).toBe('SIGKILL');
      for (const res of held) res.destroy();
      expect(answered).toBeGreaterThanOrEqual(600);

      // Second run: only what no finished slice holds goes to the model.
      let sent = 0;
      server.respond = (body, _n, res) => {
        sent += (body.input as string[]).length;
        embeddingsReply(res, body.input as string[], 8);
      };
      const resumed = await ingest();
      expect(resumed.code).toBe(0);
      type Report = { entries: { added: number }; embedded: number; fromCache: number };
      const parsed = JSON.parse(resumed.stdout) as Report | Report[];
      const report = Array.isArray(parsed) ? parsed[0] : parsed;
      expect(report!.entries.added).toBe(1000);
      // 512 texts were saved in two finished slices before the kill (the third was cut off).
      expect(report!.fromCache).toBeGreaterThanOrEqual(512);
      expect(report!.embedded).toBe(1000 - report!.fromCache);
      expect(sent).toBe(report!.embedded);

      const doctor = await promisify(execFile)(process.execPath, nodeArgs(['doctor', '--db', join(dir, 'db'), '--json']), {
        env,
      });
      expect(JSON.parse(doctor.stdout)).toMatchObject({ healthy: true });
    },
  );
});
