/**
 * Render shapes as an SVG document. Coordinates are flipped on the y axis so
 * that "up" in shape space is up on screen.
 */

import { Circle } from './shapes/circle.js';
import { Polygon } from './shapes/polygon.js';
import { Rect } from './shapes/rect.js';
import { unionBounds } from './collection.js';
import { roundTo } from './util/round.js';
import { DEFAULT_STYLE, type Shape, type Style } from './types';

function attrs(style: Style): string {
  const merged = { ...DEFAULT_STYLE, ...style };
  return `fill="${merged.fill}" stroke="${merged.stroke}" stroke-width="${merged.strokeWidth}"`;
}

function n(value: number): string {
  return String(roundTo(value, 3));
}

export function shapeToSvg(shape: Shape, style: Style = {}): string {
  if (shape instanceof Circle) {
    return `<circle cx="${n(shape.center.x)}" cy="${n(-shape.center.y)}" r="${n(shape.radius)}" ${attrs(style)}/>`;
  }
  if (shape instanceof Rect) {
    const top = -(shape.origin.y + shape.height);
    return `<rect x="${n(shape.origin.x)}" y="${n(top)}" width="${n(shape.width)}" height="${n(shape.height)}" ${attrs(style)}/>`;
  }
  if (shape instanceof Polygon) {
    const points = shape.vertices.map((v) => `${n(v.x)},${n(-v.y)}`).join(' ');
    return `<polygon points="${points}" ${attrs(style)}/>`;
  }
  throw new TypeError(`cannot render shape of kind ${shape.kind}`);
}

export function toSvgDocument(shapes: Shape[], margin = 1): string {
  const box = unionBounds(shapes) ?? { min: { x: 0, y: 0 }, max: { x: 1, y: 1 } };
  const x = box.min.x - margin;
  const y = -box.max.y - margin;
  const width = box.max.x - box.min.x + 2 * margin;
  const height = box.max.y - box.min.y + 2 * margin;
  const body = shapes.map((shape) => `  ${shapeToSvg(shape)}`).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${n(x)} ${n(y)} ${n(width)} ${n(height)}">`,
    body,
    '</svg>',
  ].join('\n');
}
