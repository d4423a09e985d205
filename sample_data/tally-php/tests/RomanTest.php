<?php

declare(strict_types=1);

namespace Tally\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Roman;

final class RomanTest extends TestCase
{
    /** @dataProvider pairs */
    public function testToRoman(int $n, string $roman): void
    {
        $this->assertSame($roman, Roman::toRoman($n));
    }

    /** @dataProvider pairs */
    public function testFromRoman(int $n, string $roman): void
    {
        $this->assertSame($n, Roman::fromRoman($roman));
    }

    public function pairs(): array
    {
        return [[1, 'I'], [4, 'IV'], [9, 'IX'], [14, 'XIV'], [40, 'XL'], [1994, 'MCMXCIV'], [3999, 'MMMCMXCIX']];
    }

    public function testOutOfRange(): void
    {
        $this->expectException(\OutOfRangeException::class);
        Roman::toRoman(4000);
    }

    public function testZeroIsOutOfRange(): void
    {
        $this->expectException(\OutOfRangeException::class);
        Roman::toRoman(0);
    }

    public function testLowercaseAndSpaces(): void
    {
        $this->assertSame(12, Roman::fromRoman(' xii '));
    }

    public function testRejectsNonCanonical(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Roman::fromRoman('IIII');
    }

    public function testRejectsUnknownLetters(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Roman::fromRoman('XIZ');
    }
}
