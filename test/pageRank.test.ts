import { describe, expect, it } from 'vitest';
import { DEFAULT_WEIGHTS } from '../src/retrieve/score.js';
import { personalizedPageRank } from '../src/retrieve/personalizedPageRank.js';

describe('personalizedPageRank', () => {
  const edgeWeights = DEFAULT_WEIGHTS.edgeWeights;
  const related = (from: string, to: string) => ({ from, to, type: 'RELATED' as const });

  it('ranks an entry two seeds reach above one reached from a single seed; an isolated seed gets nothing from the graph', () => {
    const scores = personalizedPageRank(
      ['a', 'b', 'shared', 'single', 'alone'],
      [related('a', 'shared'), related('shared', 'b'), related('a', 'single')],
      new Map([
        ['a', 1],
        ['b', 1],
        ['alone', 1],
      ]),
      { edgeWeights },
    );
    expect(scores.get('shared')).toBe(1);
    expect(scores.get('shared')!).toBeGreaterThan(scores.get('single')!);
    expect(scores.get('single')!).toBeGreaterThan(0);
    expect(scores.get('alone')).toBe(0);
  });

  it('scales by the best entry reached, not by a seed collecting mass back from its neighbours', () => {
    const leaves = ['l1', 'l2', 'l3', 'l4'];
    const scores = personalizedPageRank(
      ['hub', ...leaves],
      leaves.map((l) => related('hub', l)),
      new Map([['hub', 1]]),
      { edgeWeights },
    );
    for (const l of leaves) expect(scores.get(l)).toBeCloseTo(1, 9);
    expect(scores.get('hub')).toBe(1); // capped
  });

  it('weighs edges by type and gives nothing without seeds', () => {
    const scores = personalizedPageRank(
      ['s', 'dep', 'sup'],
      [
        { from: 's', to: 'dep', type: 'DEPENDS_ON' },
        { from: 's', to: 'sup', type: 'SUPERSEDES' },
      ],
      new Map([['s', 1]]),
      { edgeWeights },
    );
    expect(scores.get('dep')!).toBeGreaterThan(scores.get('sup')!);
    expect(personalizedPageRank(['x'], [], new Map(), { edgeWeights }).size).toBe(0);
  });
});
