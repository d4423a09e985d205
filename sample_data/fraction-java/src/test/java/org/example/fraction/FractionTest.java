package org.example.fraction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FractionTest {
    @Test
    void reducesToLowestTerms() {
        Fraction f = new Fraction(6, -8);
        assertEquals(-3, f.numerator());
        assertEquals(4, f.denominator());
    }

    @Test
    void zeroDenominatorIsRejected() {
        assertThrows(ArithmeticException.class, () -> new Fraction(1, 0));
    }

    @Test
    void addsWithDifferentDenominators() {
        assertEquals(new Fraction(5, 6), new Fraction(1, 2).add(new Fraction(1, 3)));
    }

    @Test
    void subtractsBelowZero() {
        assertEquals(new Fraction(-1, 4), new Fraction(1, 4).subtract(new Fraction(1, 2)));
    }

    @Test
    void multipliesAndDivides() {
        Fraction a = new Fraction(2, 3);
        Fraction b = new Fraction(9, 4);
        assertEquals(new Fraction(3, 2), a.multiply(b));
        assertEquals(new Fraction(8, 27), a.divide(b));
    }

    @Test
    void divisionByZeroThrows() {
        assertThrows(ArithmeticException.class, () -> Fraction.ONE.divide(Fraction.ZERO));
    }

    @Test
    void powersIncludingNegative() {
        assertEquals(new Fraction(8, 27), new Fraction(2, 3).pow(3));
        assertEquals(new Fraction(9, 4), new Fraction(2, 3).pow(-2));
        assertEquals(Fraction.ONE, new Fraction(7, 5).pow(0));
    }

    @Test
    void floorRoundsTowardNegativeInfinity() {
        assertEquals(2, new Fraction(7, 3).floor());
        assertEquals(-3, new Fraction(-7, 3).floor());
        assertEquals(-2, new Fraction(-6, 3).floor());
    }

    @Test
    void roundHalvesAwayFromZero() {
        assertEquals(3, new Fraction(5, 2).round());
        assertEquals(-3, new Fraction(-5, 2).round());
        assertEquals(2, new Fraction(7, 4).round());
        assertEquals(1, new Fraction(5, 4).round());
    }

    @Test
    void comparesByValue() {
        assertTrue(new Fraction(1, 3).compareTo(new Fraction(1, 2)) < 0);
        assertTrue(new Fraction(-1, 2).compareTo(new Fraction(-2, 3)) > 0);
        assertEquals(0, new Fraction(2, 4).compareTo(new Fraction(1, 2)));
    }

    @ParameterizedTest
    @CsvSource({"3/4, 3, 4", "-2, -2, 1", "1 1/2, 3, 2", "-1 1/4, -5, 4", " 10/4 , 5, 2"})
    void parsesTextForms(String text, long num, long den) {
        assertEquals(new Fraction(num, den), Fraction.parse(text));
    }

    @Test
    void mixedStringForms() {
        assertEquals("1 1/2", new Fraction(3, 2).toMixedString());
        assertEquals("-2 1/3", new Fraction(-7, 3).toMixedString());
        assertEquals("2/5", new Fraction(2, 5).toMixedString());
        assertEquals("4", new Fraction(8, 2).toMixedString());
    }

    @Test
    void toDoubleAndToString() {
        assertEquals(0.75, new Fraction(3, 4).toDouble(), 1e-12);
        assertEquals("3/4", new Fraction(3, 4).toString());
        assertEquals("5", Fraction.of(5).toString());
    }
}
