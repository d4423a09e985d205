import { describe, expect, test } from "vitest";
import { interval } from "../src/interval";
import { gaps, intersection, normalize, subtract, totalLength, union } from "../src/set";

const i = interval;

describe("normalize", () => {
  test("sorts and joins overlapping intervals", () => {
    expect(normalize([i(5, 8), i(0, 2), i(1, 3)])).toEqual([i(0, 3), i(5, 8)]);
  });

  test("joins intervals that touch", () => {
    expect(normalize([i(0, 2), i(2, 4)])).toEqual([i(0, 4)]);
  });

  test("drops empty intervals", () => {
    expect(normalize([i(3, 3), i(1, 2)])).toEqual([i(1, 2)]);
  });

  test("keeps a contained interval inside the outer one", () => {
    expect(normalize([i(0, 10), i(2, 3)])).toEqual([i(0, 10)]);
  });
});

describe("set operations", () => {
  test("totalLength counts shared integers once", () => {
    expect(totalLength([i(0, 4), i(2, 6), i(10, 11)])).toBe(7);
  });

  test("union merges both lists", () => {
    expect(union([i(0, 2)], [i(1, 5), i(7, 8)])).toEqual([i(0, 5), i(7, 8)]);
  });

  test("intersection keeps what both cover", () => {
    expect(intersection([i(0, 5), i(8, 12)], [i(3, 10)])).toEqual([i(3, 5), i(8, 10)]);
  });

  test("intersection of disjoint lists is empty", () => {
    expect(intersection([i(0, 2)], [i(4, 6)])).toEqual([]);
  });

  test("subtract cuts holes", () => {
    expect(subtract([i(0, 10)], [i(2, 4), i(6, 7)])).toEqual([i(0, 2), i(4, 6), i(7, 10)]);
  });

  test("subtract of a cover leaves nothing", () => {
    expect(subtract([i(3, 5)], [i(0, 10)])).toEqual([]);
  });

  test("gaps lie between merged intervals", () => {
    expect(gaps([i(6, 8), i(0, 2), i(1, 3)])).toEqual([i(3, 6)]);
  });
});
