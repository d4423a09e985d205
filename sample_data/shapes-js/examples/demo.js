// Prints a small report about a few shapes. Run: node examples/demo.js
// The example keeps its own copy of the rounding helpers in lib/ so that it
// can be served to a browser without a bundler.
import { Circle, Point, Polygon, Rect, describe } from '../src/index.js';
import { lerp, roundTo } from './lib/round.js';

const shapes = [
  new Circle(1.5, new Point(2, 2)),
  new Rect(new Point(0, 0), 4, 3),
  new Polygon([
    [0, 0],
    [4, 0],
    [2, 3],
  ]),
];

for (const shape of shapes) {
  console.log(describe(shape));
}

const steps = [0, 0.25, 0.5, 0.75, 1].map((t) => roundTo(lerp(1, 3, t), 2));
console.log(`radius animation: ${steps.join(' -> ')}`);
