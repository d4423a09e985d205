import { describe, expect, test } from "vitest";
import { contains, format, interval, intersect, isEmpty, length, overlaps } from "../src/interval";

describe("interval", () => {
  test("keeps its bounds", () => {
    expect(interval(2, 5)).toEqual({ start: 2, end: 5 });
  });

  test("rejects an end before the start", () => {
    expect(() => interval(5, 2)).toThrow(RangeError);
  });

  test("rejects fractional bounds", () => {
    expect(() => interval(0.5, 2)).toThrow(TypeError);
  });
});

describe("measures", () => {
  test("length counts the integers", () => {
    expect(length(interval(3, 7))).toBe(4);
  });

  test("an interval with equal bounds is empty", () => {
    expect(isEmpty(interval(4, 4))).toBe(true);
    expect(isEmpty(interval(4, 5))).toBe(false);
  });

  test("contains the start but not the end", () => {
    const i = interval(1, 3);
    expect(contains(i, 1)).toBe(true);
    expect(contains(i, 2)).toBe(true);
    expect(contains(i, 3)).toBe(false);
    expect(contains(i, 0)).toBe(false);
  });
});

describe("pairs", () => {
  test("touching intervals do not overlap", () => {
    expect(overlaps(interval(0, 2), interval(2, 4))).toBe(false);
    expect(overlaps(interval(0, 3), interval(2, 4))).toBe(true);
  });

  test("intersect gives the shared part", () => {
    expect(intersect(interval(0, 5), interval(3, 9))).toEqual({ start: 3, end: 5 });
    expect(intersect(interval(0, 2), interval(2, 4))).toBeNull();
  });

  test("format is half-open", () => {
    expect(format(interval(1, 4))).toBe("[1, 4)");
  });
});
