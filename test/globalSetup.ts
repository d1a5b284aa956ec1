/** vitest's globalSetup: compiles the source tree once for the processes the tests spawn (test/testBuild.ts). */
import { buildForTests } from './testBuild.js';

export default async function setup(): Promise<void> {
  if (process.env.MEMCORE_TEST_TSX === '1') return;
  await buildForTests();
}
