import { normalize } from './embedder.js';
import { DEFAULTS } from '../config/defaults.js';

/**
 * Token-aware splitting for texts longer than a model's window. Tokens are estimated from word
 * pieces (a word of n characters ≈ ⌈n / 4⌉ tokens, punctuation one each), which tracks BPE
 * tokenizers closely enough for English prose and code without shipping a tokenizer per model.
 */
const PIECE = /\s*[\p{L}\p{N}_]+|\s*[^\s\p{L}\p{N}_]/gu;

function pieceTokens(piece: string): number {
  const core = piece.trim();
  return /^[\p{L}\p{N}_]/u.test(core) ? Math.max(1, Math.ceil(core.length / 4)) : 1;
}

export function approxTokens(text: string): number {
  let n = 0;
  for (const m of text.matchAll(PIECE)) n += pieceTokens(m[0]);
  return n;
}

export interface ChunkOptions {
  /** Tokens per chunk at most. Default 512. */
  chunkTokens?: number;
  /** Tokens repeated at the start of the next chunk. Default 64. */
  overlapTokens?: number;
}

/** Splits text into overlapping chunks of at most `chunkTokens` estimated tokens, at word boundaries. */
export function chunkText(text: string, options: ChunkOptions = {}): { text: string; tokens: number }[] {
  const size = options.chunkTokens ?? DEFAULTS.openaiEmbedder.chunkTokens;
  const overlap = options.overlapTokens ?? DEFAULTS.openaiEmbedder.overlapTokens;
  if (!Number.isInteger(size) || size < 8) throw new Error(`chunkTokens must be an integer ≥ 8, got ${size}`);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= size)
    throw new Error(`overlapTokens must be an integer from 0 to chunkTokens − 1, got ${overlap}`);
  const pieces = [...text.matchAll(PIECE)].map((m) => ({ text: m[0], tokens: pieceTokens(m[0]) }));
  const total = pieces.reduce((n, p) => n + p.tokens, 0);
  if (total <= size) return [{ text, tokens: total }];
  const chunks: { text: string; tokens: number }[] = [];
  let start = 0;
  while (start < pieces.length) {
    let end = start;
    let tokens = 0;
    while (end < pieces.length && (tokens + pieces[end]!.tokens <= size || end === start)) tokens += pieces[end++]!.tokens;
    chunks.push({
      text: pieces
        .slice(start, end)
        .map((p) => p.text)
        .join('')
        .trim(),
      tokens,
    });
    if (end >= pieces.length) break;
    // Step back `overlap` tokens for the next chunk, but always move forward.
    let back = end;
    let kept = 0;
    while (back > start + 1 && kept + pieces[back - 1]!.tokens <= overlap) kept += pieces[--back]!.tokens;
    start = back;
  }
  return chunks;
}

/**
 * A text's chunks, each led by the text's first line when that line is short (an entry's title:
 * embeddingText puts it first): a chunk from the middle of a passage then still says what the
 * passage is about, where alone it would drift from it.
 */
export function chunksWithHeader(text: string, options: ChunkOptions = {}): { text: string; tokens: number }[] {
  const whole = chunkText(text, options);
  const newline = text.indexOf('\n');
  if (whole.length === 1 || newline < 0) return whole;
  const header = text.slice(0, newline).trim();
  const headerTokens = approxTokens(header);
  const size = options.chunkTokens ?? DEFAULTS.openaiEmbedder.chunkTokens;
  if (header === '' || headerTokens > size / 4) return whole;
  const rest = chunkText(text.slice(newline + 1), {
    ...options,
    chunkTokens: size - headerTokens,
    overlapTokens: Math.min(options.overlapTokens ?? DEFAULTS.openaiEmbedder.overlapTokens, size - headerTokens - 1),
  });
  return rest.map((c) => ({ text: `${header}\n${c.text}`, tokens: c.tokens + headerTokens }));
}

/**
 * One vector a text: texts longer than a chunk are split (chunksWithHeader), every chunk of every
 * text is embedded in one `embedChunks` call, and a text's vector is the token-weighted mean of
 * its chunks', renormalised. A text that fits one chunk is embedded as it is.
 */
export async function embedChunked(
  texts: string[],
  chunking: ChunkOptions,
  model: string,
  embedChunks: (chunks: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  const chunked = texts.map((t) => chunksWithHeader(t, chunking));
  const vectors = await embedChunks(chunked.flatMap((chunks) => chunks.map((c) => c.text)));
  let next = 0;
  return chunked.map((chunks) => {
    const own = vectors.slice(next, (next += chunks.length));
    return own.length === 1
      ? own[0]!
      : normalize(
          Float32Array.from(
            meanPool(
              own,
              chunks.map((c) => c.tokens),
            ),
          ),
          model,
        );
  });
}

/** The text cut to `chars` characters, at a word boundary where one is near, never inside a surrogate pair. */
export function capText(text: string, chars: number): string {
  if (text.length <= chars) return text;
  let end = chars;
  if (/[\uDC00-\uDFFF]/.test(text[end]!)) end--;
  const space = text.lastIndexOf(' ', end);
  return text.slice(0, space > chars * 0.9 ? space : end);
}

/** Token-weighted mean of unit vectors, renormalised by the caller. */
export function meanPool(vectors: ArrayLike<number>[], weights: number[]): number[] {
  const d = vectors[0]?.length ?? 0;
  const out = new Array<number>(d).fill(0);
  vectors.forEach((v, i) => {
    for (let j = 0; j < d; j++) out[j]! += v[j]! * weights[i]!;
  });
  return out;
}
