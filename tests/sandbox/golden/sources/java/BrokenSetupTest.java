package demo;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BrokenSetupTest {
    @BeforeAll
    static void setUp() { throw new RuntimeException("setup broke"); }

    @Test
    void neverRuns() { }
}
