/**
 * Fingerprints for code locations written by hand: when the repository is known at ingest
 * (`--repo`, config `repo`), each location without a fingerprint gets the fingerprint of the text
 * it points at (a symbol's, in the languages src/code/languages/ reads, else its lines'), and a
 * symbol given without lines gets its lines. `memcore check` then tells moved from drifted code.
 */
import type { MemoryDocument } from '../model/memoryFile.js';
import { CodeIndex, linesFingerprint } from './codeIndex.js';
import { revisionOf } from './git.js';

/** The document with its code locations fingerprinted where their text is found under `repo`. */
export async function withFingerprints(doc: MemoryDocument, repo: string): Promise<MemoryDocument> {
  if (!doc.codeLocations.some((c) => !c.fingerprint)) return doc;
  const index = new CodeIndex(repo);
  const stamp = await revisionOf(repo);
  const codeLocations = await Promise.all(
    doc.codeLocations.map(async (c) => {
      if (c.fingerprint) return c;
      const file = await index.file(c.filePath);
      if (!file) return c;
      const revision = stamp && !stamp.changed.has(c.filePath) ? stamp.revision : c.revision;
      const symbol = c.symbol && file.symbols ? file.symbols.find((s) => s.symbol === c.symbol) : undefined;
      if (symbol)
        return {
          ...c,
          fingerprint: symbol.fingerprint,
          revision,
          startLine: c.startLine ?? symbol.startLine,
          endLine: c.startLine === null ? symbol.endLine : c.endLine,
          kind: c.kind ?? symbol.kind,
        };
      const end = c.endLine ?? c.startLine;
      if (c.startLine === null || end === null || end > file.lines.length) return c;
      return { ...c, fingerprint: linesFingerprint(file.lines, c.startLine, end), revision };
    }),
  );
  return { ...doc, codeLocations };
}
