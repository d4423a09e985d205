import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  Circle,
  Point,
  Polygon,
  Rect,
  clamp,
  formatNumber,
  roundTo,
  totalArea,
  unionBounds,
} from '../src/index.js';

test('rectangle area, perimeter and containment', () => {
  const rect = new Rect(new Point(1, 1), 4, 2);
  assert.equal(rect.area(), 8);
  assert.equal(rect.perimeter(), 12);
  assert.ok(rect.contains(new Point(3, 2)));
  assert.ok(!rect.contains(new Point(6, 2)));
});

test('polygon area matches shoelace formula in both orientations', () => {
  const ccw = new Polygon([[0, 0], [4, 0], [4, 3]]);
  const cw = new Polygon([[0, 0], [4, 3], [4, 0]]);
  assert.equal(ccw.area(), 6);
  assert.equal(cw.area(), 6);
  assert.ok(ccw.signedArea() > 0 && cw.signedArea() < 0);
});

test('polygon containment by ray casting', () => {
  const square = new Polygon([[0, 0], [2, 0], [2, 2], [0, 2]]);
  assert.ok(square.contains(new Point(1, 1)));
  assert.ok(!square.contains(new Point(3, 1)));
});

test('circle rejects a non-positive radius', () => {
  assert.throws(() => new Circle(0), RangeError);
});

test('union bounds and total area over a collection', () => {
  const shapes = [new Rect(new Point(0, 0), 1, 1), new Circle(1, new Point(5, 5))];
  const box = unionBounds(shapes);
  assert.ok(box.min.equals(new Point(0, 0)));
  assert.ok(box.max.equals(new Point(6, 6)));
  assert.equal(roundTo(totalArea(shapes), 4), roundTo(1 + Math.PI, 4));
});

test('number helpers', () => {
  assert.equal(roundTo(1.005, 2), 1.01);
  assert.equal(clamp(12, 0, 10), 10);
  assert.equal(formatNumber(3.14159, 2, 8), '    3.14');
});
