/**
 * The WebAssembly modules of the matrix kernel, assembled here (~260 bytes each) rather than read
 * from .wasm files: nothing is read from disk and no toolchain is needed to rebuild them. Each has
 * one function
 *
 *   dots(x, rows, k, rowBytes, out): for r < k, out[r] = Σ_i rows[r·stride + i] · x[i]
 *
 * with every argument a byte offset into the kernel's memory, and rows padded with zeros to what
 * one turn of the loop takes.
 */

export const PAGE_BYTES = 65_536;
/** A shared memory declares its largest size up front: the most a 32-bit memory can be (4 GiB). */
export const MAX_PAGES = 65_536;

// @types/node 20 does not declare the WebAssembly global (lib.dom does): the members used here.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
};
export type WasmMemory = { readonly buffer: ArrayBuffer | SharedArrayBuffer; grow(pages: number): number };
export type WasmModule = { readonly wasmModule: unique symbol };

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const vec = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
const name = (s: string): number[] => [...leb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];

const I32 = 0x7f;
const V128 = 0x7b;
// parameters, then locals
const [X, ROWS, K, ROW_BYTES, OUT, R, I, ROW, A0, A1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const i32 = (n: number) => [0x41, ...leb(n)]; // small non-negative constants: LEB equals SLEB below 64
const simd = (op: number) => [0xfd, ...leb(op)];
const load = (offset: number) => [...simd(0x00), 4, ...leb(offset)]; // v128.load align 16
const zero = [...simd(0x0c), ...new Array<number>(16).fill(0)]; // v128.const 0
// Laid out as the instructions run, not as Prettier would wrap them.
// prettier-ignore
const [BLOCK, LOOP, END, BR, BR_IF, I32_ADD, I32_SHL, I32_GE_U] = [[0x02, 0x40], [0x03, 0x40], [0x0b], [0x0c], [0x0d], [0x6a], [0x74], [0x4f]];

/**
 * The two kernels differ only in one turn of the inner loop and in how four lanes become a number:
 *
 * - f32: rows and x are f32; a turn multiplies and adds eight floats (32 bytes of a row) into two
 *   f32x4 accumulators; the lanes' sum is stored as f32.
 * - i8: rows are i8 and x is i16; a turn widens 32 bytes of a row to i16 and takes
 *   i32x4.dot_i16x8_s against 32 values of x (64 bytes) into two i32x4 accumulators; the lanes'
 *   sum is stored as i32 (a quarter of the memory read per row: the scan is bound by it).
 */
function assembleDots(precision: 'f32' | 'i8', shared: boolean): Uint8Array {
  const f32 = precision === 'f32';
  const [ADD, MUL, LANE] = f32 ? [simd(0xe4), simd(0xe6), simd(0x1f)] : [simd(0xae), [], simd(0x1b)]; // f32x4/i32x4 add, f32x4.mul, extract_lane
  const [DOT, WIDEN_LOW, WIDEN_HIGH] = [simd(0xba), simd(0x87), simd(0x88)]; // i32x4.dot_i16x8_s, i16x8.extend_{low,high}_i8x16_s
  const [SCALAR_ADD, STORE] = f32 ? [[0x92], [0x38, 2, 0]] : [[0x6a], [0x36, 2, 0]]; // f32.add/i32.add, f32.store/i32.store
  const rowAt = [...get(ROW), ...get(I), ...I32_ADD];
  const xAt = f32 ? [...get(X), ...get(I), ...I32_ADD] : [...get(X), ...get(I), ...i32(1), ...I32_SHL, ...I32_ADD]; // x is i16: twice the row's offset
  // prettier-ignore
  const turn = f32
    ? [
        ...get(A0), ...rowAt, ...load(0), ...xAt, ...load(0), ...MUL, ...ADD, ...set(A0),
        ...get(A1), ...rowAt, ...load(16), ...xAt, ...load(16), ...MUL, ...ADD, ...set(A1),
      ]
    : [
        ...get(A0), ...rowAt, ...load(0), ...WIDEN_LOW, ...xAt, ...load(0), ...DOT, ...ADD,
        ...rowAt, ...load(0), ...WIDEN_HIGH, ...xAt, ...load(16), ...DOT, ...ADD, ...set(A0),
        ...get(A1), ...rowAt, ...load(16), ...WIDEN_LOW, ...xAt, ...load(32), ...DOT, ...ADD,
        ...rowAt, ...load(16), ...WIDEN_HIGH, ...xAt, ...load(48), ...DOT, ...ADD, ...set(A1),
      ];
  // prettier-ignore
  const body = [
    ...get(ROWS), ...set(ROW), ...i32(0), ...set(R),
    ...BLOCK, ...LOOP, //                                     for r < k
    ...get(R), ...get(K), ...I32_GE_U, ...BR_IF, 1,
    ...zero, ...set(A0), ...zero, ...set(A1), ...i32(0), ...set(I),
    ...BLOCK, ...LOOP, //                                     for i < rowBytes, 32 bytes of the row a turn
    ...get(I), ...get(ROW_BYTES), ...I32_GE_U, ...BR_IF, 1,
    ...turn,
    ...get(I), ...i32(32), ...I32_ADD, ...set(I),
    ...BR, 0, ...END, ...END,
    ...get(A0), ...get(A1), ...ADD, ...set(A0),
    ...get(OUT), ...get(R), ...i32(2), ...I32_SHL, ...I32_ADD, // &out[r]
    ...get(A0), ...LANE, 0, ...get(A0), ...LANE, 1, ...SCALAR_ADD, ...get(A0), ...LANE, 2, ...SCALAR_ADD, ...get(A0), ...LANE, 3, ...SCALAR_ADD,
    ...STORE,
    ...get(ROW), ...get(ROW_BYTES), ...I32_ADD, ...set(ROW),
    ...get(R), ...i32(1), ...I32_ADD, ...set(R),
    ...BR, 0, ...END, ...END,
    ...END,
  ];
  const code = [
    ...vec([
      [...leb(3), I32],
      [...leb(2), V128],
    ]),
    ...body,
  ];
  // prettier-ignore
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])), // type (i32 ×5) → ()
    // import memory e.m: limits {min 1}, or shared {min 1, max MAX_PAGES}
    ...section(2, vec([[...name('e'), ...name('m'), 0x02, ...(shared ? [0x03, 1, ...leb(MAX_PAGES)] : [0x00, 1])]])),
    ...section(3, vec([[0]])), //                                                      one function of type 0
    ...section(7, vec([[...name('dots'), 0x00, 0]])), //                               export it as dots
    ...section(10, vec([[...leb(code.length), ...code]])),
  ]);
}

/** `dots` as the kernel calls it: byte offsets of x, of the first row and of the output, a row count and the row stride. */
export type Dots = (x: number, rows: number, k: number, rowBytes: number, out: number) => void;

/** A memory of `initial` pages; shared (to be read by a helper thread) when asked and possible, else undefined. */
export function kernelMemory(initial: number, shared: boolean): WasmMemory | undefined {
  if (!shared) return new WebAssembly.Memory({ initial });
  try {
    return new WebAssembly.Memory({ initial, maximum: MAX_PAGES, shared: true });
  } catch {
    // No room for a shared memory (it reserves its largest size).
    return undefined;
  }
}

/** The `dots` function of `module` over `memory`. */
export function instantiateDots(module: WasmModule, memory: WasmMemory): Dots {
  return new WebAssembly.Instance(module, { e: { m: memory } }).exports.dots as Dots;
}

/** Compiled once per precision and memory kind, instantiated per matrix (each has its own memory). */
const dotsModules = new Map<string, WasmModule>();

export function dotsModule(precision: 'f32' | 'i8', shared: boolean): WasmModule {
  const key = `${precision}${shared ? ':shared' : ''}`;
  let module = dotsModules.get(key);
  if (!module) dotsModules.set(key, (module = new WebAssembly.Module(assembleDots(precision, shared))));
  return module;
}
