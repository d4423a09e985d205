package org.example.fraction;

/**
 * An exact rational number, always kept in lowest terms with a positive denominator.
 */
public final class Fraction implements Comparable<Fraction> {
    public static final Fraction ZERO = new Fraction(0, 1);
    public static final Fraction ONE = new Fraction(1, 1);

    private final long numerator;
    private final long denominator;

    public Fraction(long numerator, long denominator) {
        if (denominator == 0) {
            throw new ArithmeticException("denominator is zero");
        }
        if (denominator < 0) {
            numerator = -numerator;
            denominator = -denominator;
        }
        long g = gcd(Math.abs(numerator), denominator);
        this.numerator = numerator / g;
        this.denominator = denominator / g;
    }

    public static Fraction of(long whole) {
        return new Fraction(whole, 1);
    }

    /** Parses "3/4", "-2" or "1 1/2" (a mixed number). */
    public static Fraction parse(String text) {
        String s = text.trim();
        if (s.isEmpty()) {
            throw new IllegalArgumentException("empty fraction");
        }
        int space = s.indexOf(' ');
        if (space > 0) {
            Fraction whole = parse(s.substring(0, space));
            Fraction part = parse(s.substring(space + 1));
            return whole.signum() < 0 ? whole.subtract(part) : whole.add(part);
        }
        int slash = s.indexOf('/');
        if (slash < 0) {
            return of(Long.parseLong(s));
        }
        return new Fraction(Long.parseLong(s.substring(0, slash)), Long.parseLong(s.substring(slash + 1)));
    }

    static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a == 0 ? 1 : a;
    }

    public long numerator() {
        return numerator;
    }

    public long denominator() {
        return denominator;
    }

    public int signum() {
        return Long.signum(numerator);
    }

    public Fraction add(Fraction other) {
        long lcm = denominator / gcd(denominator, other.denominator) * other.denominator;
        long a = numerator * (lcm / denominator);
        long b = other.numerator * (lcm / other.denominator);
        return new Fraction(a + b, lcm);
    }

    public Fraction subtract(Fraction other) {
        return add(other.negate());
    }

    public Fraction multiply(Fraction other) {
        return new Fraction(numerator * other.numerator, denominator * other.denominator);
    }

    public Fraction divide(Fraction other) {
        if (other.numerator == 0) {
            throw new ArithmeticException("division by zero");
        }
        return new Fraction(numerator * other.denominator, denominator * other.numerator);
    }

    public Fraction negate() {
        return new Fraction(-numerator, denominator);
    }

    public Fraction reciprocal() {
        return ONE.divide(this);
    }

    /** This fraction raised to an integer power (negative powers invert it). */
    public Fraction pow(int exponent) {
        Fraction base = exponent < 0 ? reciprocal() : this;
        Fraction result = ONE;
        for (int i = 0; i < Math.abs(exponent); i++) {
            result = result.multiply(base);
        }
        return result;
    }

    /** The largest integer not greater than this fraction. */
    public long floor() {
        long q = numerator / denominator;
        if (numerator < 0 && numerator % denominator != 0) {
            q -= 1;
        }
        return q;
    }

    /** The nearest integer, halves rounded away from zero. */
    public long round() {
        long twice = 2 * Math.abs(numerator) + denominator;
        long magnitude = twice / (2 * denominator);
        return numerator < 0 ? -magnitude : magnitude;
    }

    public double toDouble() {
        return (double) numerator / denominator;
    }

    /** "1 1/2" style: the whole part, then the proper remainder. */
    public String toMixedString() {
        long whole = numerator / denominator;
        long rest = Math.abs(numerator % denominator);
        if (rest == 0) {
            return Long.toString(whole);
        }
        if (whole == 0) {
            return toString();
        }
        return whole + " " + rest + "/" + denominator;
    }

    @Override
    public int compareTo(Fraction other) {
        return Long.compare(numerator * other.denominator, other.numerator * denominator);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Fraction)) {
            return false;
        }
        Fraction f = (Fraction) o;
        return numerator == f.numerator && denominator == f.denominator;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(numerator) * 31 + Long.hashCode(denominator);
    }

    @Override
    public String toString() {
        return denominator == 1 ? Long.toString(numerator) : numerator + "/" + denominator;
    }
}
