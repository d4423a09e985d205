import { Point } from '../point.js';
import { Rect } from './rect.js';

/** A simple (non self-intersecting) polygon given by its vertices in order. */
export class Polygon {
  constructor(vertices) {
    if (vertices.length < 3) {
      throw new RangeError('a polygon needs at least three vertices');
    }
    this.kind = 'polygon';
    this.vertices = vertices.map((v) => (v instanceof Point ? v : new Point(v[0], v[1])));
  }

  *edges() {
    const n = this.vertices.length;
    for (let i = 0; i < n; i += 1) {
      yield [this.vertices[i], this.vertices[(i + 1) % n]];
    }
  }

  /** Signed area by the shoelace formula: positive when counter-clockwise. */
  signedArea() {
    let twice = 0;
    for (const [a, b] of this.edges()) {
      twice += a.cross(b);
    }
    return twice / 2;
  }

  area() {
    return Math.abs(this.signedArea());
  }

  perimeter() {
    let total = 0;
    for (const [a, b] of this.edges()) {
      total += a.distanceTo(b);
    }
    return total;
  }

  /** Ray casting: count edge crossings of a ray going right from `point`. */
  contains(point) {
    let inside = false;
    for (const [a, b] of this.edges()) {
      const crosses = a.y > point.y !== b.y > point.y;
      if (crosses && point.x < ((b.x - a.x) * (point.y - a.y)) / (b.y - a.y) + a.x) {
        inside = !inside;
      }
    }
    return inside;
  }

  bounds() {
    const xs = this.vertices.map((v) => v.x);
    const ys = this.vertices.map((v) => v.y);
    const box = Rect.fromCorners(
      new Point(Math.min(...xs), Math.min(...ys)),
      new Point(Math.max(...xs), Math.max(...ys)),
    );
    return box.bounds();
  }
}
