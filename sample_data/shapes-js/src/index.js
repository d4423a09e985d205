export { Point, ORIGIN } from './point.js';
export { Circle } from './shapes/circle.js';
export { Rect } from './shapes/rect.js';
export { Polygon } from './shapes/polygon.js';
export { roundTo, clamp, lerp, nearlyEqual } from './util/round.js';
export { describe, formatNumber, table } from './util/format.js';
export { totalArea, unionBounds } from './collection.js';
