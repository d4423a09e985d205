package org.example.fraction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class RunningStatsTest {
    private RunningStats stats;

    @BeforeEach
    void fill() {
        stats = new RunningStats();
        stats.addAll(List.of(Fraction.of(4), new Fraction(1, 2), Fraction.of(2), new Fraction(3, 2)));
    }

    @Test
    void countAndSum() {
        assertEquals(4, stats.count());
        assertEquals(Fraction.of(8), stats.sum());
    }

    @Test
    void meanIsExact() {
        assertEquals(Fraction.of(2), stats.mean());
    }

    @Test
    void minMaxAndRange() {
        assertEquals(new Fraction(1, 2), stats.min());
        assertEquals(Fraction.of(4), stats.max());
        assertEquals(new Fraction(7, 2), stats.range());
    }

    @Test
    void medianOfEvenCountAveragesTheMiddle() {
        assertEquals(new Fraction(7, 4), stats.median());
    }

    @Test
    void medianOfOddCount() {
        stats.add(Fraction.of(10));
        assertEquals(Fraction.of(2), stats.median());
    }

    @Test
    void varianceIsPopulationVariance() {
        assertEquals(new Fraction(13, 8), stats.variance());
    }

    @Test
    void countAboveIsStrict() {
        assertEquals(2, stats.countAbove(new Fraction(3, 2)));
        assertEquals(0, stats.countAbove(Fraction.of(4)));
    }

    @Nested
    class WhenEmpty {
        @Test
        void meanThrows() {
            assertThrows(IllegalStateException.class, () -> new RunningStats().mean());
        }

        @Test
        void sumIsZero() {
            assertEquals(Fraction.ZERO, new RunningStats().sum());
        }
    }
}
