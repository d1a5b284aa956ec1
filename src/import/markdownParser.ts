/**
 * Parses markdown on a worker thread with a deadline. micromark's time grows with the square of a
 * nested list's length (8,000 two-level items: 15 s here), so one file can stall an import for
 * minutes; off the main thread it can be stopped, reported and skipped, and parsing overlaps the
 * embedding of the files before it.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Root } from 'mdast';
import { MarkdownError } from './markdownSections.js';

/** A CommonJS worker, evaluated from source, that loads the parser from the paths it is given. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const ready = Promise.all(workerData.modules.map((m) => import(pathToFileURL(m).href))).then(([u, parse, frontmatter, gfm]) =>
  u.unified().use(parse.default).use(frontmatter.default, ['yaml']).use(gfm.default));
ready.then(() => parentPort.postMessage({ loaded: true }), () => parentPort.postMessage({ loaded: true }));
parentPort.on('message', async ({ id, text }) => {
  try {
    parentPort.postMessage({ id, tree: (await ready).parse(text) });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

/** Time one file may take to parse before it is skipped (documents of 1 MB parse in ~4 s). */
export const DEFAULT_PARSE_TIMEOUT_MS = 30_000;

export class MarkdownParser {
  private worker: Worker | undefined;
  /** Resolves when the worker has loaded the parser: a file's deadline runs from then, not from a loaded machine's module loading. */
  private loaded: Promise<void> = Promise.resolve();
  private nextId = 0;

  constructor(private readonly timeoutMs = DEFAULT_PARSE_TIMEOUT_MS) {}

  private start(): Worker {
    const require = createRequire(import.meta.url);
    const modules = ['unified', 'remark-parse', 'remark-frontmatter', 'remark-gfm'].map((m) => require.resolve(m));
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { modules } });
    worker.unref();
    this.loaded = new Promise<void>((resolve) => {
      const onLoaded = (m: { loaded?: boolean }) => {
        if (!m.loaded) return;
        worker.off('message', onLoaded);
        resolve();
      };
      worker.on('message', onLoaded);
      // A worker that dies while loading fails its first parse with the error.
      worker.once('error', () => resolve());
      worker.once('exit', () => resolve());
    });
    return worker;
  }

  /** The syntax tree of `text`; `file` names it in errors. */
  async parse(file: string, text: string): Promise<Root> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    worker.ref();
    await this.loaded;
    return new Promise<Root>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.unref();
      };
      const onMessage = (m: { id: number; tree?: Root; error?: string }) => {
        if (m.id !== id) return;
        done();
        if (m.error !== undefined) reject(new MarkdownError(`${file}: cannot be parsed as markdown (${m.error})`));
        else resolve(m.tree!);
      };
      const onError = (e: Error) => {
        done();
        this.worker = undefined;
        reject(new MarkdownError(`${file}: the markdown parser stopped (${e.message})`));
      };
      const timer = setTimeout(() => {
        done();
        // The parse cannot be interrupted: the worker goes, and the next file starts a new one.
        void worker.terminate();
        this.worker = undefined;
        reject(new MarkdownError(`${file}: took longer than ${this.timeoutMs / 1000} s to parse (very long nested lists?); skipped`));
      }, this.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage({ id, text });
    });
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
