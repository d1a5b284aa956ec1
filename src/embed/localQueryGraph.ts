/**
 * One text through the local model (Universal Sentence Encoder lite on tfjs/WASM) the short way:
 * the vectors are the library's own, to the bit, for a fraction of its per-call work.
 *
 * Where the library's `embed` spends a lone query's time, beside the model's arithmetic: its graph
 * has two dynamic `Where` ops (the clip to 128 tokens and the padding mask), so it must run through
 * `executeAsync`, which works out the graph's execution order again on every call and reads both
 * masks back from WASM between ops. For one text both masks are known before the call (token
 * positions 0…n−1, clipped at 128), so they are fed where the graph consumes them and the rest of
 * the graph runs with the synchronous `execute`, whose plan tfjs compiles once and keeps. The same
 * kernels run on the same inputs, so the vector is unchanged (test/localQueryGraph.test.ts).
 * The tokenizer's lattice search is kept as it is, without its copy of the text's tail per position.
 */

/** The part of a tfjs tensor used here. */
export interface GraphTensor {
  dataSync(): ArrayLike<number>;
  dispose(): void;
}

/** The part of `@energetic-ai/core` (tfjs) used here. */
export interface GraphCore {
  tensor1d(values: Int32Array, dtype: 'int32'): GraphTensor;
  tensor2d(values: Int32Array, shape: [number, number], dtype: 'int32'): GraphTensor;
}

interface TrieNode {
  children: Record<string, TrieNode | undefined>;
  end: boolean;
  word: [string[], number, number];
}

/** The part of `@energetic-ai/embeddings`' EmbeddingsModel used here. */
export interface UseLiteModel {
  tokenizer: { encode(text: string): number[]; trie: { root: TrieNode }; vocabulary: [string, number][] };
  model: { execute(inputs: Record<string, GraphTensor>, outputs: string): GraphTensor; outputNodes: string[] };
  embed(texts: string[]): Promise<number[][]>;
}

const SCOPE = 'module_apply_default/Encoder_en/KonaTransformer/';
/** The first `Where`'s rows (token rows whose position is under the clip), as its Reshape passes them on. */
const CLIPPED_ROWS = `${SCOPE}ClipToMaxLength/Reshape`;
/** The second `Where`'s coordinates [text, position] of real tokens, as int32, and their positions alone. */
const TOKEN_COORDINATES = `${SCOPE}Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32`;
const TOKEN_POSITIONS = `${SCOPE}Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2`;
/** The graph's own clip (ClipToMaxLength/Less/y). */
export const MODEL_MAX_TOKENS = 128;
const SEPARATOR = '\u2581';

/**
 * The library's tokenizer (`Tokenizer.encode`, a SentencePiece-style best-score lattice), step for
 * step, but matching pieces from an offset instead of slicing the text's tail at every position.
 */
export function encodeTokens(model: UseLiteModel, text: string): number[] {
  const { vocabulary, trie } = model.tokenizer;
  const normalized = text.normalize('NFKC');
  const input = normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized;
  const symbols = Array.from(input);
  const n = symbols.length;
  const nodes: Record<number, { length: number; score: number; index: number }[]>[] = [];
  const words: number[] = [];
  const best: number[] = [];
  for (let i = 0; i <= n; i++) {
    nodes.push({});
    words.push(0);
    best.push(0);
  }
  for (let i = 0; i < n; i++) {
    // commonPrefixSearch(symbols.slice(i)): every vocabulary piece the text continues with at i.
    let found = false;
    let node = trie.root.children[symbols[i]!];
    for (let j = i; j < n && node; j++) {
      if (node.end) {
        found = true;
        add(nodes, i, node.word[0].length, node.word[1], node.word[2]);
      }
      node = node.children[symbols[j + 1]!];
    }
    if (!found) add(nodes, i, 1, 0, 0);
  }
  for (let endPos = 0; endPos <= n; endPos++) {
    for (const startPos in nodes[endPos]) {
      for (const piece of nodes[endPos]![startPos as unknown as number]!) {
        const score = piece.score + best[endPos - piece.length]!;
        if (best[endPos] === 0 || score >= best[endPos]!) {
          best[endPos] = score;
          words[endPos] = piece.index;
        }
      }
    }
  }
  const results: number[] = [];
  for (let at = words.length - 1; at > 0; at -= vocabulary[words[at]!]![0].length) results.push(words[at]!);
  // Consecutive unknown pieces (id 0) count once.
  const merged: number[] = [];
  let previousUnknown = false;
  for (const id of results) {
    if (!(previousUnknown && id === 0)) merged.push(id);
    previousUnknown = id === 0;
  }
  return merged.reverse();
}

function add(
  nodes: Record<number, { length: number; score: number; index: number }[]>[],
  start: number,
  length: number,
  score: number,
  index: number,
) {
  (nodes[start + length]![start] ??= []).push({ length, score, index });
}

/**
 * The vector of one text, or undefined for a text without tokens (the library's path answers that
 * one). Synchronous: the whole call is WASM work on the caller's thread.
 */
export function embedOneText(tf: GraphCore, model: UseLiteModel, text: string): ArrayLike<number> | undefined {
  const ids = encodeTokens(model, text);
  const n = ids.length;
  if (n === 0) return undefined;
  const kept = Math.min(n, MODEL_MAX_TOKENS);
  const rowPositions = new Int32Array(n * 2); // [text 0, position i] per token
  for (let i = 0; i < n; i++) rowPositions[2 * i + 1] = i;
  const positions = new Int32Array(kept);
  for (let i = 0; i < kept; i++) positions[i] = i;
  const inputs = {
    indices: tf.tensor2d(rowPositions, [n, 2], 'int32'),
    values: tf.tensor1d(Int32Array.from(ids), 'int32'),
    [CLIPPED_ROWS]: tf.tensor1d(positions, 'int32'),
    [TOKEN_POSITIONS]: tf.tensor1d(positions, 'int32'),
    [TOKEN_COORDINATES]: tf.tensor2d(rowPositions.subarray(0, kept * 2), [kept, 2], 'int32'),
  };
  try {
    const output = model.model.execute(inputs, model.model.outputNodes[0]!);
    try {
      return output.dataSync(); // a copy out of WASM memory
    } finally {
      output.dispose();
    }
  } finally {
    for (const t of Object.values(inputs)) t.dispose();
  }
}
