<?php

declare(strict_types=1);

namespace Tally;

/**
 * Roman numerals from 1 to 3999, in standard subtractive form.
 */
final class Roman
{
    private const SYMBOLS = [
        'M' => 1000, 'CM' => 900, 'D' => 500, 'CD' => 400,
        'C' => 100, 'XC' => 90, 'L' => 50, 'XL' => 40,
        'X' => 10, 'IX' => 9, 'V' => 5, 'IV' => 4, 'I' => 1,
    ];

    public static function toRoman(int $n): string
    {
        if ($n < 1 || $n > 3999) {
            throw new \OutOfRangeException("out of range: $n");
        }
        $out = '';
        foreach (self::SYMBOLS as $symbol => $value) {
            while ($n >= $value) {
                $out .= $symbol;
                $n -= $value;
            }
        }
        return $out;
    }

    public static function fromRoman(string $text): int
    {
        $text = strtoupper(trim($text));
        $total = 0;
        $i = 0;
        $length = strlen($text);
        while ($i < $length) {
            $pair = substr($text, $i, 2);
            if (strlen($pair) === 2 && isset(self::SYMBOLS[$pair])) {
                $total += self::SYMBOLS[$pair];
                $i += 2;
            } elseif (isset(self::SYMBOLS[$text[$i]])) {
                $total += self::SYMBOLS[$text[$i]];
                $i += 1;
            } else {
                throw new \InvalidArgumentException("not a numeral: $text");
            }
        }
        if ($total === 0 || self::toRoman($total) !== $text) {
            throw new \InvalidArgumentException("not canonical: $text");
        }
        return $total;
    }
}
