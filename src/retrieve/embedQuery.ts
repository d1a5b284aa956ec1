import type { Embedder } from '../embed/embedder.js';
import { MemcoreError } from '../model/errors.js';

/**
 * The text's vector, or undefined with a note when the embedder fails (its server down, a
 * timeout) and `strict` is off: keywords, mentions and the graph still answer. An abort, or a
 * failure that is not the embedder's, is thrown.
 */
export async function embedOrExplain(
  embedder: Embedder,
  text: string,
  opts: { strict: boolean; signal?: AbortSignal; notes: string[] },
): Promise<Float32Array | undefined> {
  try {
    const [vector] = await embedder.embed([text], opts.signal);
    return vector;
  } catch (e) {
    if (opts.strict || !(e instanceof MemcoreError) || e.code !== 'EMBEDDING') throw e;
    opts.notes.push(`vectors unavailable, answered from keywords, mentions and the graph only: ${e.message}`);
    return undefined;
  }
}
