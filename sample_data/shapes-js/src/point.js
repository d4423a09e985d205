import { nearlyEqual } from './util/round.js';

/** An immutable 2-D point (or vector). */
export class Point {
  constructor(x, y) {
    this.x = x;
    this.y = y;
    Object.freeze(this);
  }

  add(other) {
    return new Point(this.x + other.x, this.y + other.y);
  }

  subtract(other) {
    return new Point(this.x - other.x, this.y - other.y);
  }

  scale(factor) {
    return new Point(this.x * factor, this.y * factor);
  }

  distanceTo(other) {
    return Math.hypot(this.x - other.x, this.y - other.y);
  }

  /** Z component of the cross product of two vectors. */
  cross(other) {
    return this.x * other.y - this.y * other.x;
  }

  equals(other) {
    return nearlyEqual(this.x, other.x) && nearlyEqual(this.y, other.y);
  }

  toString() {
    return `(${this.x}, ${this.y})`;
  }
}

export const ORIGIN = new Point(0, 0);
