<?php

declare(strict_types=1);

namespace Tally\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Histogram;

final class HistogramTest extends TestCase
{
    private function filled(): Histogram
    {
        $h = new Histogram(0.0, 10.0, 5);
        foreach ([0.0, 1.9, 2.0, 3.5, 3.9, 9.99, 10.0, -1.0, 5.0] as $v) {
            $h->add($v);
        }
        return $h;
    }

    public function testCountsIntoBins(): void
    {
        $this->assertSame([2, 3, 1, 0, 1], $this->filled()->counts());
    }

    public function testOutliersAreCountedApart(): void
    {
        $this->assertSame(['below' => 1, 'above' => 1], $this->filled()->outliers());
        $this->assertSame(9, $this->filled()->total());
    }

    public function testBinOfEdges(): void
    {
        $h = new Histogram(0.0, 1.0, 4);
        $this->assertSame(0, $h->binOf(0.0));
        $this->assertSame(1, $h->binOf(0.25));
        $this->assertSame(3, $h->binOf(0.99));
    }

    public function testModeIsTheFirstFullestBin(): void
    {
        $this->assertSame(1, $this->filled()->mode());
        $this->assertSame(0, (new Histogram(0.0, 1.0, 3))->mode());
    }

    public function testPercentileNearestRank(): void
    {
        $h = $this->filled();
        $this->assertSame(3.5, $h->percentile(50));
        $this->assertSame(10.0, $h->percentile(100));
        $this->assertSame(-1.0, $h->percentile(1));
    }

    public function testPercentileRejectsBadInput(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->filled()->percentile(0);
    }

    public function testPercentileOfNothing(): void
    {
        $this->expectException(\LengthException::class);
        (new Histogram(0.0, 1.0, 2))->percentile(50);
    }

    public function testRenderScalesBars(): void
    {
        $expected = "  0.00 | ######\n  2.00 | ##########\n  4.00 | ###\n  6.00 | \n  8.00 | ###";
        $this->assertSame($expected, $this->filled()->render(10));
    }

    /** @dataProvider badShapes */
    public function testRejectsBadShapes(float $min, float $max, int $bins): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new Histogram($min, $max, $bins);
    }

    public function badShapes(): array
    {
        return ['no bins' => [0.0, 1.0, 0], 'empty range' => [1.0, 1.0, 2], 'reversed' => [2.0, 1.0, 2]];
    }
}
