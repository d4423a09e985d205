/**
 * inventory.js: a tiny stock-keeping module (test data for the synth JS strategies).
 */

export const LOW_STOCK = 5;

/** Total value of the items, skipping those without a price. */
export function totalValue(items) {
  let total = 0;
  for (const item of items) {
    if (item.price === undefined || item.price === null) {
      continue;
    }
    total += item.price * item.count;
  }
  return total;
}

/** Items whose count is at or below `threshold`, most urgent first. */
export const lowStock = (items, threshold = LOW_STOCK) =>
  items.filter((item) => item.count <= threshold).sort((a, b) => a.count - b.count);

export function formatLine(name, count, width = 20) {
  if (name.length > width) {
    name = name.slice(0, width - 1) + '~';
  }
  const padded = name.padEnd(width, '.');
  return `${padded} ${count}`;
}

export class Inventory {
  constructor(name) {
    this.name = name;
    this.items = new Map();
    this.log = [];
  }

  add(sku, count = 1) {
    if (count <= 0) {
      throw new RangeError(`count must be positive, got ${count}`);
    }
    const current = this.items.get(sku) ?? 0;
    this.items.set(sku, current + count);
    this.log.push(['add', sku, count]);
  }

  remove(sku, count = 1) {
    const current = this.items.get(sku) ?? 0;
    if (current < count) {
      return false;
    }
    if (current - count === 0) {
      this.items.delete(sku);
    } else {
      this.items.set(sku, current - count);
    }
    this.log.push(['remove', sku, count]);
    return true;
  }

  history(limit = 10) {
    let index = this.log.length - limit;
    if (index < 0) {
      index = 0;
    }
    const out = [];
    while (index < this.log.length) {
      out.push(this.log[index].join(':'));
      index += 1;
    }
    return out;
  }
}
