/**
 * Rounding helpers that avoid the usual binary floating point surprises,
 * e.g. roundTo(1.005, 2) === 1.01 rather than 1.
 */

export const EPSILON = 1e-9;

/** Round `value` to `digits` decimal places. */
export function roundTo(value, digits = 2) {
  if (!Number.isFinite(value)) {
    return value;
  }
  const factor = 10 ** digits;
  return Math.round((value + Math.sign(value) * Number.EPSILON) * factor) / factor;
}

/** True when two numbers differ by less than `tolerance`. */
export function nearlyEqual(a, b, tolerance = EPSILON) {
  return Math.abs(a - b) < tolerance;
}

/** Keep `value` inside the closed interval [min, max]. */
export function clamp(value, min, max) {
  if (min > max) {
    throw new RangeError(`clamp: min ${min} is greater than max ${max}`);
  }
  return Math.min(max, Math.max(min, value));
}

/** Linear interpolation between `a` and `b`; t = 0 gives a, t = 1 gives b. */
export function lerp(a, b, t) {
  return a + (b - a) * t;
}
