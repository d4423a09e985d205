package demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CalcTest {
    @Test
    void adds() { assertEquals(4, 2 + 2); }

    @Test
    void addsWrong() { assertEquals(5, 2 + 2); }

    @Test
    void throwsUnexpected() { throw new IllegalStateException("boom"); }

    @Test
    @Disabled("not yet")
    void skipped() { }

    @Test
    @DisplayName("a display name")
    void named() { }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void positive(int n) { assertEquals(true, n < 3); }

    @Nested
    class Inner {
        @Test
        void innerOk() { }
    }
}
