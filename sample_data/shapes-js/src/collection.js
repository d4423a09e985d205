import { Point } from './point.js';

/** Sum of the areas of a list of shapes (overlaps are counted twice). */
export function totalArea(shapes) {
  return shapes.reduce((sum, shape) => sum + shape.area(), 0);
}

/** Smallest axis-aligned box that holds every shape in the list. */
export function unionBounds(shapes) {
  if (shapes.length === 0) {
    return null;
  }
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const shape of shapes) {
    const { min, max } = shape.bounds();
    minX = Math.min(minX, min.x);
    minY = Math.min(minY, min.y);
    maxX = Math.max(maxX, max.x);
    maxY = Math.max(maxY, max.y);
  }
  return { min: new Point(minX, minY), max: new Point(maxX, maxY) };
}

/** Shapes sorted from largest to smallest area; ties keep input order. */
export function byAreaDescending(shapes) {
  return shapes
    .map((shape, index) => ({ shape, index, area: shape.area() }))
    .sort((a, b) => b.area - a.area || a.index - b.index)
    .map(({ shape }) => shape);
}
