/** A half-open interval of integers: `start` is in it, `end` is not. */
export interface Interval {
  readonly start: number;
  readonly end: number;
}

export function interval(start: number, end: number): Interval {
  if (!Number.isInteger(start) || !Number.isInteger(end)) {
    throw new TypeError(`interval bounds must be integers, got ${start} and ${end}`);
  }
  if (end < start) {
    throw new RangeError(`interval end ${end} is before its start ${start}`);
  }
  return { start, end };
}

export function length(i: Interval): number {
  return i.end - i.start;
}

export function isEmpty(i: Interval): boolean {
  return i.end <= i.start;
}

export function contains(i: Interval, x: number): boolean {
  return x >= i.start && x < i.end;
}

export function overlaps(a: Interval, b: Interval): boolean {
  return a.start < b.end && b.start < a.end;
}

/** The part both intervals share, or null when they share nothing. */
export function intersect(a: Interval, b: Interval): Interval | null {
  const start = Math.max(a.start, b.start);
  const end = Math.min(a.end, b.end);
  if (end <= start) {
    return null;
  }
  return { start, end };
}

export function format(i: Interval): string {
  return `[${i.start}, ${i.end})`;
}
