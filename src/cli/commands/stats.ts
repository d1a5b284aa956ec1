import { EXIT, print, type Command } from '../command.js';

const statsCommand: Command = {
  options: {},
  args: [0, 0],
  uses: 'reads',
  async run({ engine }, _args, v, io) {
    const s = await (await engine()).stats();
    print(io, v.json === true, s, () =>
      [
        `entries: ${s.entries}`,
        `cores: ${
          Object.entries(s.cores)
            .map(([k, n]) => `${k} (${n})`)
            .join(', ') || '-'
        }`,
        `entry types: ${
          Object.entries(s.entryTypes)
            .map(([k, n]) => `${k} (${n})`)
            .join(', ') || '-'
        }`,
        `code locations: ${s.codeLocations}`,
        `golden paths: ${s.goldenPaths}`,
        `relations: ${Object.entries(s.relations)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
        `embedder: ${s.embedder.id} (${s.embedder.dimensions}-d)`,
        `generation: ${s.generation}`,
        ...(s.pendingVectors ? [`vectors pending: ${s.pendingVectors} changed entries still being embedded`] : []),
        `search runs on: exact ${s.search.exact}, stage 1 ${s.search.stage1}, entries ${s.search.entries}`,
        ...(Object.keys(s.resident).length > 0
          ? [
              `held in memory: ${Object.entries(s.resident)
                .map(([k, r]) => `${k} (${r.loadedFrom}, ${Math.round(r.ms)} ms)`)
                .join(', ')}`,
            ]
          : []),
        ...Object.values(s.resident).flatMap((r) => (r.note ? [`note: ${r.note}`] : [])),
      ].join('\n'),
    );
    return EXIT.ok;
  },
};

export default statsCommand;
