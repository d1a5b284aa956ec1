/**
 * Group commit, the engine's side: the writes queued together (AccessGate.grouped) are prepared
 * one after another, in the order they came, each against the committed stores, and their upserts
 * committed as one (Stores.openGroup, WriteGroup). A write that fails while others of its group
 * came first may have failed for want of theirs (an entry one of them creates), so it and every
 * write after it run again as the next group; the first write of a group fails for good. A write
 * that is not an upsert a group can merge (a delete, feedback, a sync) commits alone.
 */
import type { EarlyEmbedding, QueuedWrite } from './accessGate.js';
import { embedForWrite, type Embedder } from '../embed/embedder.js';
import type { Stores } from '../store/stores.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export async function runInGroups(stores: () => Stores, embedder: () => Embedder, writes: readonly QueuedWrite[]): Promise<void> {
  let rest = writes;
  while (rest.length > 0) {
    const s = stores();
    const group = s.openGroup();
    await embedAhead(s, group.embedded, embedder(), rest);
    const answers: Promise<void>[] = [];
    let next = 0;
    for (; next < rest.length; next++) {
      const write = rest[next]!;
      const offered = group.nextOffer();
      let outcome: Outcome | undefined;
      const settled = write.work().then(
        (value) => void (outcome = { ok: true, value }),
        (error: unknown) => void (outcome = { ok: false, error }),
      );
      const how = await Promise.race([offered, settled.then(() => 'settled' as const)]);
      if (how === 'settled') {
        if (!outcome!.ok && next > 0) break; // again, first of the next group
        answer(write, outcome!);
        continue;
      }
      answers.push(settled.then(() => answer(write, outcome!)));
      if (how === 'alone') {
        // Committed by itself, at once: what comes after it waits until it is done.
        await settled;
        next++;
        break;
      }
    }
    await s.commitGroup(group);
    await Promise.all(answers);
    rest = rest.slice(next);
  }
}

/**
 * The texts the group's writes will embed: those whose embedding started when their write was
 * queued (a remember's, EarlyEmbeddings) taken as they come; the others found or embedded in one
 * go (vectorsFor): each write's preparation would otherwise do it per text (a LanceDB query, a
 * model call, a LanceDB write). Best effort: a write whose text is not here (or if this fails)
 * embeds its own, and reports its own error.
 */
async function embedAhead(
  stores: Stores,
  into: Map<string, Float32Array>,
  embedder: Embedder,
  writes: readonly QueuedWrite[],
): Promise<void> {
  // The texts embedded since their writes were queued, by the model the folder still has.
  const early = new Set<string>();
  for (const { texts, embedding } of writes) {
    if (!texts || embedding?.model !== embedder) continue;
    const vectors = await embedding.vectors;
    if (vectors?.length === texts.length) texts.forEach((t, i) => (early.add(t), into.set(t, vectors[i]!)));
  }
  const rest = writes.filter((w) => w.texts?.some((t) => !early.has(t)));
  const texts = [...new Set(rest.flatMap((w) => w.texts ?? []))].filter((t) => !early.has(t));
  if (rest.length < 2 || texts.length < 2) return;
  try {
    for (const [text, vector] of await vectorsFor(stores, embedder, texts)) into.set(text, vector);
  } catch {
    // each write embeds its own text
  }
}

/**
 * The texts' vectors: those the embedding cache holds (unless the model says not to cache), the
 * rest embedded in one call, off the caller's thread where the model can (embedForWrite), and
 * cached in the background (a put the next read of the cache waits for).
 */
async function vectorsFor(stores: Stores, embedder: Embedder, texts: string[]): Promise<Map<string, Float32Array>> {
  const useCache = embedder.cacheVectors !== false;
  const vectors = useCache ? await stores.embeddingCache.get(texts) : new Map<string, Float32Array>();
  const missing = texts.filter((t) => !vectors.has(t));
  const fresh = missing.length > 0 ? await embedForWrite(embedder, missing) : [];
  if (fresh.length !== missing.length) throw new Error(`the model gave ${fresh.length} vectors for ${missing.length} texts`);
  missing.forEach((text, i) => vectors.set(text, fresh[i]!));
  if (useCache) void stores.embeddingCache.put(missing.map((text, i) => ({ text, vector: fresh[i]! }))); // never rejects
  return vectors;
}

/**
 * Embeds the texts of writes from the moment they are queued, while they wait for the writes
 * before them (bench:load: a group's embedding was about half of its turn, and the writes queued
 * behind waited for it). One call at a time, taking every text queued since the last one, so
 * writes that arrive together are embedded in one call, as their group would have; a text the
 * embedding cache holds is not embedded again.
 */
export class EarlyEmbeddings {
  private queued: { texts: readonly string[]; model: Embedder; settle: (vectors: Float32Array[] | undefined) => void }[] = [];
  private running = false;

  constructor(
    private readonly stores: () => Stores,
    private readonly model: () => Embedder,
  ) {}

  embed(texts: readonly string[]): EarlyEmbedding {
    const model = this.model();
    const vectors = new Promise<Float32Array[] | undefined>((settle) => this.queued.push({ texts, model, settle }));
    // After the current task: the writes queued in the same one share the call.
    if (!this.running && this.queued.length === 1) queueMicrotask(() => void this.next());
    return { model, vectors };
  }

  private async next(): Promise<void> {
    if (this.running || this.queued.length === 0) return;
    this.running = true;
    const model = this.model();
    const batch = this.queued.splice(0);
    // A write queued before a reembed swapped the model embeds in its group, with the new one.
    for (const q of batch) if (q.model !== model) q.settle(undefined);
    const mine = batch.filter((q) => q.model === model);
    try {
      const byText = await vectorsFor(this.stores(), model, [...new Set(mine.flatMap((q) => q.texts))]);
      for (const q of mine) {
        const own = q.texts.map((t) => byText.get(t));
        q.settle(own.every((v) => v !== undefined) ? (own as Float32Array[]) : undefined);
      }
    } catch {
      for (const q of mine) q.settle(undefined); // its group embeds it, and reports the error
    } finally {
      this.running = false;
      void this.next();
    }
  }
}

function answer(write: QueuedWrite, outcome: Outcome): void {
  if (outcome.ok) write.resolve(outcome.value);
  else write.reject(outcome.error);
}
