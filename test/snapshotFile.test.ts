import { appendFile, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendChange, changesBetween, forgetChangesThrough } from '../src/store/snapshot/changeLog.js';
import { readSnapshot, snapshotGeneration, writeSnapshot } from '../src/store/snapshot/snapshotFile.js';
import { tempDir } from './helpers.js';

const key = { kind: 'columns', fingerprint: 'columns/1 test' };

const content = () => ({
  arrays: {
    // odd lengths, so that every array after the first starts past padding
    a: Int8Array.from([-128, 0, 127]),
    b: Uint8Array.from([1, 2, 3, 4, 5]),
    c: Uint16Array.from([65535, 7]),
    d: Int32Array.from([-1, 2 ** 31 - 1, 5]),
    e: Uint32Array.from([2 ** 32 - 1]),
    f: Float32Array.from([0.5, -Infinity, NaN]),
    g: Float64Array.from([Math.PI, -0]),
    empty: new Float64Array(0),
    view: new Float64Array([9, 8, 7, 6]).subarray(1, 3),
  },
  values: { ids: ['e1', null, 'é "quoted" \\ 🦘'], nested: [[1, ['x']]] },
});

describe('snapshot files', () => {
  it('give back every array (type, length, values, views) and the values, with the generation they were written at', async () => {
    const path = join(await tempDir(), 'columns.snap');
    const bytes = await writeSnapshot(path, { ...key, generation: 42 }, content());
    const read = await readSnapshot(path, key);
    expect(read).toMatchObject({ generation: 42, bytes });
    const { arrays, values } = (read as Exclude<typeof read, undefined | { problem: string }>).content;
    for (const [name, array] of Object.entries(content().arrays)) {
      expect(arrays[name]!.constructor, name).toBe(array.constructor);
      expect(Array.from(arrays[name]!), name).toEqual(Array.from(array));
    }
    expect(values).toEqual(content().values);
    expect(await snapshotGeneration(path)).toBe(42);
    expect(await readSnapshot(join(path, '..', 'absent.snap'), key)).toBeUndefined();
    expect(await snapshotGeneration(join(path, '..', 'absent.snap'))).toBeUndefined();
  });

  it('refuse a file that is damaged, cut short, not a snapshot, or written for another structure or fingerprint', async () => {
    const dir = await tempDir();
    const path = join(dir, 'columns.snap');
    await writeSnapshot(path, { ...key, generation: 1 }, content());
    const whole = await readFile(path);
    expect(await readSnapshot(path, { kind: 'keywords', fingerprint: key.fingerprint })).toEqual({
      problem: 'holds columns, not keywords',
    });
    expect(await readSnapshot(path, { ...key, fingerprint: 'columns/2 test' })).toEqual({
      problem: 'was written for columns/1 test, not columns/2 test',
    });
    // every byte of the body counts, arrays and values alike
    for (const at of [whole.length - 3, whole.length - 60, 200]) {
      const damaged = Buffer.from(whole);
      damaged[at]! ^= 0x01;
      await writeFile(path, damaged);
      expect(await readSnapshot(path, key), `byte ${at}`).toHaveProperty('problem');
    }
    await writeFile(path, whole);
    await truncate(path, whole.length - 5);
    expect(await readSnapshot(path, key)).toEqual({ problem: 'is cut short' });
    await writeFile(path, 'not a snapshot at all');
    expect(await readSnapshot(path, key)).toEqual({ problem: 'is not a memcore snapshot' });
    expect(await snapshotGeneration(path)).toBeUndefined();
  });
});

describe('change log', () => {
  it('nets the changes between two generations, and does not reach across a gap, a whole-store change or a torn line', async () => {
    const path = join(await tempDir(), 'changes.jsonl');
    expect(await changesBetween(path, 3, 3)).toEqual({ upserted: [], deleted: [] });
    expect(await changesBetween(path, 3, 4)).toBeUndefined();
    await appendChange(path, { generation: 4, upserted: ['a', 'b'], deleted: ['c'] });
    await appendChange(path, { generation: 5, upserted: ['c'], deleted: ['a'] });
    await appendChange(path, { generation: 6, upserted: [], deleted: [] });
    const net = await changesBetween(path, 3, 6);
    expect({ upserted: net!.upserted.sort(), deleted: net!.deleted.sort() }).toEqual({ upserted: ['b', 'c'], deleted: ['a'] });
    expect(await changesBetween(path, 4, 5)).toEqual({ upserted: ['c'], deleted: ['a'] });
    expect(await changesBetween(path, 2, 6)).toBeUndefined(); // generation 3 is missing
    await appendChange(path, { generation: 7, all: true });
    expect(await changesBetween(path, 5, 7)).toBeUndefined();
    await appendFile(path, '{"generation": 8, "upserted": ["x"'); // a crash mid-line
    expect(await changesBetween(path, 7, 8)).toBeUndefined();
    await forgetChangesThrough(path, 5);
    expect(await changesBetween(path, 4, 5)).toBeUndefined();
    expect(await changesBetween(path, 5, 6)).toEqual({ upserted: [], deleted: [] });
  });
});
