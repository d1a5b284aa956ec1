/**
 * The one 8-bit quantiser: `length` values (times `scale`) to −127…127 into `into` from `at`, each
 * value divided by the step and rounded, the step being the largest magnitude over 127 (1 when
 * all are zero). Returns the step. With `f32Step` the division uses the step as a Float32Array
 * stores it, so that value ≈ stored × step holds exactly for the step read back (residuals whose
 * error is accounted); without, the float64 step, as the kernel's rows have always been.
 */
export function quantizeI8(values: ArrayLike<number>, length: number, into: Int8Array, at: number, scale = 1, f32Step = false): number {
  let max = 0;
  for (let i = 0; i < length; i++) max = Math.max(max, Math.abs(values[i]! * scale));
  const step = max > 0 ? (f32Step ? Math.fround(max / 127) : max / 127) : 1;
  for (let i = 0; i < length; i++) into[at + i] = Math.round((values[i]! * scale) / step);
  return step;
}
