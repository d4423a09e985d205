import { Point } from '../point.js';

export class Rect {
  /** An axis-aligned rectangle given by its lower-left corner and size. */
  constructor(origin, width, height) {
    if (width < 0 || height < 0) {
      throw new RangeError('Rect width and height must not be negative');
    }
    this.kind = 'rect';
    this.origin = origin;
    this.width = width;
    this.height = height;
  }

  static fromCorners(a, b) {
    const origin = new Point(Math.min(a.x, b.x), Math.min(a.y, b.y));
    return new Rect(origin, Math.abs(a.x - b.x), Math.abs(a.y - b.y));
  }

  area() {
    return this.width * this.height;
  }

  perimeter() {
    return 2 * (this.width + this.height);
  }

  contains(point) {
    const { x, y } = this.origin;
    return point.x >= x && point.x <= x + this.width && point.y >= y && point.y <= y + this.height;
  }

  bounds() {
    return { min: this.origin, max: this.origin.add(new Point(this.width, this.height)) };
  }
}
