/**
 * How much of a task or query each stage reads. The embedder's cost grows with the text, and so
 * does the keyword search's (every distinct term is a postings list), while what a task is about
 * is in its first paragraphs. Past these caps a task still answers in the usual time; the bundle
 * says what was left out. Measured with the local model on 2 cores: 40 characters embed in
 * ~30 ms, 1,000 in ~0.2 s, 2,000 in ~0.45 s, 4,000 in ~1 s.
 */

/** Characters of a task that are embedded: ~250 tokens, two chunks of the local model. */
export const EMBEDDED_CHARS = 1_000;

/** Characters of a task that the keyword and mention stages read. */
export const SEARCHED_CHARS = 20_000;

/** The note a bundle carries for a task past the caps, or undefined. */
export function capNote(text: string): string | undefined {
  if (text.length <= EMBEDDED_CHARS) return undefined;
  const searched = text.length > SEARCHED_CHARS ? `its first ${SEARCHED_CHARS.toLocaleString('en')}` : 'all of it';
  return `the task is ${text.length.toLocaleString('en')} characters: its first ${EMBEDDED_CHARS.toLocaleString('en')} were embedded and ${searched} searched for words`;
}
