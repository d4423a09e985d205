import { Point, ORIGIN } from '../point.js';

export class Circle {
  constructor(radius, center = ORIGIN) {
    if (!(radius > 0)) {
      throw new RangeError(`Circle radius must be positive, got ${radius}`);
    }
    this.kind = 'circle';
    this.radius = radius;
    this.center = center;
  }

  area() {
    return Math.PI * this.radius ** 2;
  }

  perimeter() {
    return 2 * Math.PI * this.radius;
  }

  contains(point) {
    return this.center.distanceTo(point) <= this.radius;
  }

  bounds() {
    const { x, y } = this.center;
    const r = this.radius;
    return { min: new Point(x - r, y - r), max: new Point(x + r, y + r) };
  }
}
