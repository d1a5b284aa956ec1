import { openGraphStore } from './drivers.js';
import type { ResidentGraph } from './residentGraph.js';

/** A Kuzu graph file opened as the stores open theirs (the name from before drivers.ts; see openGraphStore). */
export const KuzuGraphStore = {
  open: (file: string): Promise<ResidentGraph> => openGraphStore('kuzu', file),
};
export type KuzuGraphStore = ResidentGraph;
