<?php

declare(strict_types=1);

namespace Tally;

/**
 * Counts numbers into equal-width bins over [min, max); values outside are counted apart.
 */
final class Histogram
{
    /** @var int[] */
    private array $counts;
    private int $below = 0;
    private int $above = 0;
    /** @var float[] */
    private array $values = [];

    public function __construct(private float $min, private float $max, private int $bins)
    {
        if ($bins < 1) {
            throw new \InvalidArgumentException('bins must be at least 1');
        }
        if ($max <= $min) {
            throw new \InvalidArgumentException('max must be greater than min');
        }
        $this->counts = array_fill(0, $bins, 0);
    }

    public function add(float $value): void
    {
        $this->values[] = $value;
        if ($value < $this->min) {
            $this->below++;
            return;
        }
        if ($value >= $this->max) {
            $this->above++;
            return;
        }
        $this->counts[$this->binOf($value)]++;
    }

    public function binOf(float $value): int
    {
        $width = ($this->max - $this->min) / $this->bins;
        $index = (int) floor(($value - $this->min) / $width);
        return min($index, $this->bins - 1);
    }

    /** @return int[] */
    public function counts(): array
    {
        return $this->counts;
    }

    public function outliers(): array
    {
        return ['below' => $this->below, 'above' => $this->above];
    }

    public function total(): int
    {
        return count($this->values);
    }

    public function mode(): int
    {
        $best = 0;
        for ($i = 1; $i < $this->bins; $i++) {
            if ($this->counts[$i] > $this->counts[$best]) {
                $best = $i;
            }
        }
        return $best;
    }

    /** Nearest-rank percentile of every value added, outliers included. */
    public function percentile(float $p): float
    {
        if ($p <= 0 || $p > 100) {
            throw new \InvalidArgumentException('p must be in (0, 100]');
        }
        if ($this->values === []) {
            throw new \LengthException('no values');
        }
        $sorted = $this->values;
        sort($sorted);
        $rank = (int) ceil($p / 100 * count($sorted));
        return $sorted[$rank - 1];
    }

    /** One text row per bin: its lower edge and a bar of '#' scaled to `width`. */
    public function render(int $width = 10): string
    {
        $peak = max(1, max($this->counts));
        $step = ($this->max - $this->min) / $this->bins;
        $lines = [];
        foreach ($this->counts as $i => $count) {
            $bar = str_repeat('#', intdiv($count * $width, $peak));
            $lines[] = sprintf('%6.2f | %s', $this->min + $i * $step, $bar);
        }
        return implode("\n", $lines);
    }
}
