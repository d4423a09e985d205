package org.example.fraction;

/**
 * A half-open range of integers [start, end) with a positive step.
 */
public final class IntRange {
    private final long start;
    private final long end;
    private final long step;

    public IntRange(long start, long end, long step) {
        if (step <= 0) {
            throw new IllegalArgumentException("step must be positive");
        }
        this.start = start;
        this.end = end;
        this.step = step;
    }

    public IntRange(long start, long end) {
        this(start, end, 1);
    }

    public long size() {
        if (end <= start) {
            return 0;
        }
        return (end - start + step - 1) / step;
    }

    public boolean isEmpty() {
        return size() == 0;
    }

    public boolean contains(long value) {
        if (value < start || value >= end) {
            return false;
        }
        return (value - start) % step == 0;
    }

    /** The i-th element, counting from zero. */
    public long get(long index) {
        if (index < 0 || index >= size()) {
            throw new IndexOutOfBoundsException("index " + index + " of " + size());
        }
        return start + index * step;
    }

    public long last() {
        return get(size() - 1);
    }

    public long sum() {
        long n = size();
        if (n == 0) {
            return 0;
        }
        return n * (start + last()) / 2;
    }

    /** The overlap of two unit-step ranges, empty when they do not meet. */
    public IntRange intersect(IntRange other) {
        if (step != 1 || other.step != 1) {
            throw new UnsupportedOperationException("only unit steps");
        }
        long lo = Math.max(start, other.start);
        long hi = Math.min(end, other.end);
        return hi > lo ? new IntRange(lo, hi) : new IntRange(lo, lo);
    }

    /** The fraction of this range's elements for which value is a divisor. */
    public Fraction shareDivisibleBy(long divisor) {
        if (isEmpty()) {
            return Fraction.ZERO;
        }
        long hits = 0;
        for (long i = 0; i < size(); i++) {
            if (get(i) % divisor == 0) {
                hits++;
            }
        }
        return new Fraction(hits, size());
    }
}
