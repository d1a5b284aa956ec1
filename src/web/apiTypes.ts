/**
 * The shapes of the page's API answers that the browser code reads too: plain data with no
 * import of the engine, so that src/web/page can share them without pulling Node types in.
 */

/** A search hit as the page lists it. */
export interface SearchHitView {
  id: string;
  title: string;
  entryType: string;
  coreId: string;
  score: number;
  /** Why it was found, one reason a line. */
  why: string[];
}

export interface ContextView {
  /** The `<memory>` block, as `memcore context --format prompt` prints it (empty when memory holds nothing). */
  block: string;
  bundleId: string | null;
  items: {
    id: string;
    title: string;
    entryType: string;
    coreId: string;
    score: number;
    tokens: number;
    why: string[];
    possiblyStale: boolean;
  }[];
  totalTokens: number;
  /** Tokens of the whole block (approximate, as the budget counts them). */
  blockTokens: number;
  lowConfidence: boolean;
  notes: string[];
}

/** A value as JSON carries it: dates become ISO strings. */
export type Jsonified<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };
