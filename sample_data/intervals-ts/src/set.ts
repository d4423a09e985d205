import { Interval, intersect, isEmpty, length } from "./interval";

/**
 * Sorts intervals and joins those that overlap or touch, so the result is the
 * smallest list of disjoint, non-adjacent intervals covering the same integers.
 */
export function normalize(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => !isEmpty(i)).sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Interval[] = [];
  for (const next of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && next.start <= last.end) {
      out[out.length - 1] = { start: last.start, end: Math.max(last.end, next.end) };
    } else {
      out.push({ start: next.start, end: next.end });
    }
  }
  return out;
}

export function totalLength(intervals: readonly Interval[]): number {
  let total = 0;
  for (const i of normalize(intervals)) {
    total += length(i);
  }
  return total;
}

export function union(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  return normalize([...a, ...b]);
}

export function intersection(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const left = normalize(a);
  const right = normalize(b);
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    const shared = intersect(left[i], right[j]);
    if (shared !== null) {
      out.push(shared);
    }
    if (left[i].end < right[j].end) {
      i++;
    } else {
      j++;
    }
  }
  return out;
}

/** The integers of `a` that are not in `b`. */
export function subtract(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const cuts = normalize(b);
  const out: Interval[] = [];
  for (const piece of normalize(a)) {
    let start = piece.start;
    for (const cut of cuts) {
      if (cut.end <= start || cut.start >= piece.end) {
        continue;
      }
      if (cut.start > start) {
        out.push({ start, end: cut.start });
      }
      start = Math.max(start, cut.end);
    }
    if (start < piece.end) {
      out.push({ start, end: piece.end });
    }
  }
  return out;
}

/** The gaps between the intervals, from the first start to the last end. */
export function gaps(intervals: readonly Interval[]): Interval[] {
  const merged = normalize(intervals);
  const out: Interval[] = [];
  for (let k = 1; k < merged.length; k++) {
    out.push({ start: merged[k - 1].end, end: merged[k].start });
  }
  return out;
}
