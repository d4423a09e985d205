<?php
declare(strict_types=1);

use PHPUnit\Framework\TestCase;

final class OtherTest extends TestCase
{
    public function testOk(): void
    {
        $this->assertTrue(true);
    }

    public function testWarns(): void
    {
        $x = [];
        $this->assertNull($x['missing'] ?? null);
        trigger_error('deprecated thing', E_USER_DEPRECATED);
    }
}
