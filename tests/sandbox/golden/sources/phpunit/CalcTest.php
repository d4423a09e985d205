<?php
declare(strict_types=1);

namespace Demo\Tests;

use PHPUnit\Framework\TestCase;

final class CalcTest extends TestCase
{
    public function testAdds(): void
    {
        $this->assertSame(4, 2 + 2);
    }

    public function testAddsWrong(): void
    {
        $this->assertSame(5, 2 + 2);
    }

    public function testRaises(): void
    {
        throw new \RuntimeException('boom');
    }

    public function testSkipped(): void
    {
        $this->markTestSkipped('later');
    }

    public function testIncomplete(): void
    {
        $this->markTestIncomplete('not done');
    }

    public function testRisky(): void
    {
    }

    /** @dataProvider pairs */
    public function testPairs(int $a, int $b): void
    {
        $this->assertLessThan($b, $a);
    }

    public function pairs(): array
    {
        return ['small' => [1, 2], 'equal' => [3, 3], [4, 5]];
    }
}
