import leftpad from 'leftpad';
import { roundTo } from './round.js';

/** Format a number with a fixed number of decimals, padded to `width`. */
export function formatNumber(value, digits = 2, width = 0) {
  const text = roundTo(value, digits).toFixed(digits);
  return width > 0 ? leftpad(text, width) : text;
}

/** Human-readable one-line description of any shape. */
export function describe(shape) {
  const area = formatNumber(shape.area());
  const perimeter = formatNumber(shape.perimeter());
  return `${shape.kind} area=${area} perimeter=${perimeter}`;
}

/** Render rows of [label, value] as an aligned two-column table. */
export function table(rows) {
  const width = Math.max(0, ...rows.map(([label]) => label.length));
  return rows
    .map(([label, value]) => `${label.padEnd(width)}  ${formatNumber(value, 2, 10)}`)
    .join('\n');
}
