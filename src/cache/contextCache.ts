import { LRUCache } from 'lru-cache';
import type { SearchRecipe } from '../recipe/searchRecipe.js';
import { throwIfAborted } from '../model/errors.js';
import { optionNames } from '../model/options.js';
import type { ContextBundle } from '../model/types.js';
import { DEFAULTS } from '../config/defaults.js';

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  throwIfAborted(signal);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      try {
        throwIfAborted(signal);
      } catch (e) {
        reject(e);
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export interface ContextCacheOptions {
  /** Bundles kept at most. Default 500. */
  max?: number;
  /** Milliseconds a bundle stays valid. Default 5 minutes. 0 disables the cache. */
  ttlMs?: number;
}

export const CACHE_OPTIONS = optionNames<ContextCacheOptions>()(['max', 'ttlMs']);

/**
 * TTL LRU of context bundles. Keys carry the store generation, so any write — from this engine,
 * another engine on the folder or another process — makes older bundles unreachable. Identical
 * calls that arrive while one is computing share it.
 */
export class ContextCache {
  private readonly bundles: LRUCache<string, ContextBundle> | undefined;
  private readonly inflight = new Map<string, Promise<ContextBundle>>();

  constructor(options: ContextCacheOptions = {}) {
    const ttl = options.ttlMs ?? DEFAULTS.cache.ttlMs;
    if (ttl > 0) this.bundles = new LRUCache({ max: options.max ?? DEFAULTS.cache.max, ttl });
  }

  /**
   * A key from the normalised task (case and white space folded) and the recipe that shapes the
   * answer: equal recipes share a bundle however their options were written (withOverrides makes
   * them canonical, keys sorted, so plain JSON is stable).
   */
  static key(task: string, recipe: SearchRecipe, generation: number): string {
    const normalised = task.trim().replace(/\s+/g, ' ').toLowerCase();
    return `${generation}\u0000${normalised}\u0000${JSON.stringify(recipe)}`;
  }

  /**
   * The cached bundle, the computation already under way for the key, or a new one. A caller
   * whose own signal fires stops waiting at once; when the shared computation was aborted by
   * another caller's signal, the others compute again.
   */
  async getOrCompute(key: string, compute: (signal?: AbortSignal) => Promise<ContextBundle>, signal?: AbortSignal): Promise<ContextBundle> {
    const started = performance.now();
    const hit = this.bundles?.get(key);
    if (hit) return { ...hit, cacheHit: true, timings: { cache: performance.now() - started } };
    const pending = this.inflight.get(key);
    if (pending) {
      try {
        return await raceAbort(pending, signal);
      } catch (e) {
        if ((e as Error).name === 'AbortError' && !signal?.aborted) return this.getOrCompute(key, compute, signal);
        throw e;
      }
    }
    const work = compute(signal)
      .then((bundle) => {
        // A bundle answered without a part that failed is not kept: the next call tries it again.
        if (!bundle.degraded) this.bundles?.set(key, bundle);
        return bundle;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, work);
    return work;
  }

  clear(): void {
    this.bundles?.clear();
  }
}
