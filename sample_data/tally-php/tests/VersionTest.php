<?php

declare(strict_types=1);

namespace Tally\Tests;

use PHPUnit\Framework\TestCase;
use Tally\Version;

final class VersionTest extends TestCase
{
    public function testParsePadsMissingParts(): void
    {
        $this->assertSame('1.2.0', (string) Version::parse('v1.2'));
        $this->assertSame('3.0.0', (string) Version::parse('3'));
    }

    public function testParseRejectsGarbage(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Version::parse('1.x.3');
    }

    public function testCompare(): void
    {
        $this->assertSame(-1, Version::parse('1.2.3')->compare(Version::parse('1.10.0')));
        $this->assertSame(1, Version::parse('2.0.0')->compare(Version::parse('1.99.99')));
        $this->assertSame(0, Version::parse('1.2')->compare(Version::parse('1.2.0')));
    }

    public function testBump(): void
    {
        $v = Version::parse('1.4.7');
        $this->assertSame('2.0.0', (string) $v->bump('major'));
        $this->assertSame('1.5.0', (string) $v->bump('minor'));
        $this->assertSame('1.4.8', (string) $v->bump('patch'));
    }

    public function testCaretRanges(): void
    {
        $base = Version::parse('1.2.3');
        $this->assertTrue(Version::parse('1.9.0')->satisfiesCaret($base));
        $this->assertFalse(Version::parse('2.0.0')->satisfiesCaret($base));
        $this->assertFalse(Version::parse('1.2.2')->satisfiesCaret($base));
    }

    public function testCaretBelowOne(): void
    {
        $this->assertTrue(Version::parse('0.2.9')->satisfiesCaret(Version::parse('0.2.3')));
        $this->assertFalse(Version::parse('0.3.0')->satisfiesCaret(Version::parse('0.2.3')));
        $this->assertFalse(Version::parse('0.0.4')->satisfiesCaret(Version::parse('0.0.3')));
    }

    public function testTildeRanges(): void
    {
        $base = Version::parse('1.2.3');
        $this->assertTrue(Version::parse('1.2.9')->satisfiesTilde($base));
        $this->assertFalse(Version::parse('1.3.0')->satisfiesTilde($base));
    }

    public function testHighest(): void
    {
        $versions = array_map([Version::class, 'parse'], ['1.0.0', '1.10.0', '1.9.9']);
        $this->assertSame('1.10.0', (string) Version::highest($versions));
        $this->assertNull(Version::highest([]));
    }
}
