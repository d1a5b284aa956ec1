type TypedArray = Int8Array | Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/** `array`, or a copy at least twice as long when it holds fewer than `needed` elements. */
export function grown<A extends TypedArray>(array: A, needed: number, make: (n: number) => A): A {
  if (needed <= array.length) return array;
  const next = make(Math.max(needed, array.length * 2, 8));
  next.set(array);
  return next;
}
