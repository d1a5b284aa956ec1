/**
 * Group commit, the engine's side: the writes queued together (AccessGate.grouped) are prepared
 * one after another, in the order they came, each against the committed stores, and their upserts
 * committed as one (Stores.openGroup, WriteGroup). A write that fails while others of its group
 * came first may have failed for want of theirs (an entry one of them creates), so it and every
 * write after it run again as the next group; the first write of a group fails for good. A write
 * that is not an upsert a group can merge (a delete, feedback, a sync) commits alone.
 */
import type { QueuedWrite } from './accessGate.js';
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
 * The texts the group's writes will embed, read from the embedding cache in one query and the
 * rest embedded in one call of the model and cached in one write: each write's preparation would
 * do all three per text (a LanceDB query, a model call, a LanceDB write). Best effort: a write
 * whose text is not here (or if this fails) embeds its own, and reports its own error.
 */
async function embedAhead(
  stores: Stores,
  into: Map<string, Float32Array>,
  embedder: Embedder,
  writes: readonly QueuedWrite[],
): Promise<void> {
  const texts = [...new Set(writes.flatMap((w) => w.texts ?? []))];
  if (writes.length < 2 || texts.length < 2) return;
  try {
    const useCache = embedder.cacheVectors !== false;
    const cached = useCache ? await stores.embeddingCache.get(texts) : new Map<string, Float32Array>();
    const missing = texts.filter((t) => !cached.has(t));
    const vectors = missing.length > 0 ? await embedForWrite(embedder, missing) : [];
    if (vectors.length !== missing.length) return;
    if (useCache) await stores.embeddingCache.put(missing.map((text, i) => ({ text, vector: vectors[i]! })));
    for (const [text, vector] of cached) into.set(text, vector);
    missing.forEach((text, i) => into.set(text, vectors[i]!));
  } catch {
    // each write embeds its own text
  }
}

function answer(write: QueuedWrite, outcome: Outcome): void {
  if (outcome.ok) write.resolve(outcome.value);
  else write.reject(outcome.error);
}
