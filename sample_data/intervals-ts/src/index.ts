export { interval, length, isEmpty, contains, overlaps, intersect, format } from "./interval";
export type { Interval } from "./interval";
export { normalize, totalLength, union, intersection, subtract, gaps } from "./set";
