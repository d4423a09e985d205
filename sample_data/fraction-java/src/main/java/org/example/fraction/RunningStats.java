package org.example.fraction;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Exact statistics over a stream of fractions: count, sum, mean, min, max, median, variance.
 */
public final class RunningStats {
    private final List<Fraction> values = new ArrayList<>();
    private Fraction sum = Fraction.ZERO;
    private Fraction min;
    private Fraction max;

    public void add(Fraction value) {
        values.add(value);
        sum = sum.add(value);
        if (min == null || value.compareTo(min) < 0) {
            min = value;
        }
        if (max == null || value.compareTo(max) > 0) {
            max = value;
        }
    }

    public void addAll(Iterable<Fraction> items) {
        for (Fraction f : items) {
            add(f);
        }
    }

    public int count() {
        return values.size();
    }

    public Fraction sum() {
        return sum;
    }

    public Fraction mean() {
        requireData();
        return sum.divide(Fraction.of(values.size()));
    }

    public Fraction min() {
        requireData();
        return min;
    }

    public Fraction max() {
        requireData();
        return max;
    }

    public Fraction range() {
        return max().subtract(min());
    }

    /** The middle value, or the mean of the two middle values for an even count. */
    public Fraction median() {
        requireData();
        List<Fraction> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int mid = sorted.size() / 2;
        if (sorted.size() % 2 == 1) {
            return sorted.get(mid);
        }
        return sorted.get(mid - 1).add(sorted.get(mid)).divide(Fraction.of(2));
    }

    /** Population variance: the mean squared distance from the mean. */
    public Fraction variance() {
        Fraction m = mean();
        Fraction total = Fraction.ZERO;
        for (Fraction v : values) {
            Fraction d = v.subtract(m);
            total = total.add(d.multiply(d));
        }
        return total.divide(Fraction.of(values.size()));
    }

    /** How many values lie strictly above the given threshold. */
    public int countAbove(Fraction threshold) {
        int n = 0;
        for (Fraction v : values) {
            if (v.compareTo(threshold) > 0) {
                n++;
            }
        }
        return n;
    }

    private void requireData() {
        if (values.isEmpty()) {
            throw new IllegalStateException("no values");
        }
    }
}
