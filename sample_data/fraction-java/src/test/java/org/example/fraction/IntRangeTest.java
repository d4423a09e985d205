package org.example.fraction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class IntRangeTest {
    @Test
    void sizeCountsPartialSteps() {
        assertEquals(4, new IntRange(0, 10, 3).size());
        assertEquals(10, new IntRange(0, 10).size());
        assertEquals(0, new IntRange(5, 5).size());
        assertEquals(0, new IntRange(7, 2).size());
    }

    @Test
    void nonPositiveStepIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new IntRange(0, 5, 0));
    }

    @Test
    void containsRespectsBoundsAndStep() {
        IntRange r = new IntRange(2, 12, 5);
        assertTrue(r.contains(2));
        assertTrue(r.contains(7));
        assertFalse(r.contains(12));
        assertFalse(r.contains(3));
        assertFalse(r.contains(1));
    }

    @Test
    void getAndLast() {
        IntRange r = new IntRange(1, 10, 4);
        assertEquals(5, r.get(1));
        assertEquals(9, r.last());
        assertThrows(IndexOutOfBoundsException.class, () -> r.get(3));
    }

    @Test
    void sumOfArithmeticSeries() {
        assertEquals(45, new IntRange(0, 10).sum());
        assertEquals(15, new IntRange(1, 10, 4).sum());
        assertEquals(0, new IntRange(3, 3).sum());
    }

    @Test
    void intersectOverlapping() {
        IntRange r = new IntRange(0, 10).intersect(new IntRange(5, 20));
        assertEquals(5, r.size());
        assertEquals(5, r.get(0));
    }

    @Test
    void intersectDisjointIsEmpty() {
        assertTrue(new IntRange(0, 3).intersect(new IntRange(4, 8)).isEmpty());
    }

    @Test
    void shareDivisibleBy() {
        assertEquals(new Fraction(1, 3), new IntRange(1, 10).shareDivisibleBy(3));
        assertEquals(Fraction.ZERO, new IntRange(4, 4).shareDivisibleBy(2));
    }
}
