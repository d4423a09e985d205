<?php

declare(strict_types=1);

namespace Tally;

/**
 * A semantic version (major.minor.patch) with caret and tilde range checks.
 */
final class Version
{
    public function __construct(public readonly int $major, public readonly int $minor, public readonly int $patch)
    {
        if ($major < 0 || $minor < 0 || $patch < 0) {
            throw new \InvalidArgumentException('negative version part');
        }
    }

    public static function parse(string $text): self
    {
        $text = ltrim(trim($text), 'v');
        $parts = explode('.', $text);
        if (count($parts) > 3 || $parts[0] === '') {
            throw new \InvalidArgumentException("bad version: $text");
        }
        foreach ($parts as $part) {
            if (!ctype_digit($part)) {
                throw new \InvalidArgumentException("bad version: $text");
            }
        }
        $parts = array_map('intval', array_pad($parts, 3, '0'));
        return new self($parts[0], $parts[1], $parts[2]);
    }

    public function compare(self $other): int
    {
        return [$this->major, $this->minor, $this->patch] <=> [$other->major, $other->minor, $other->patch];
    }

    public function bump(string $part): self
    {
        return match ($part) {
            'major' => new self($this->major + 1, 0, 0),
            'minor' => new self($this->major, $this->minor + 1, 0),
            'patch' => new self($this->major, $this->minor, $this->patch + 1),
            default => throw new \InvalidArgumentException("unknown part: $part"),
        };
    }

    /** `^1.2.3` allows changes that keep the left-most non-zero part. */
    public function satisfiesCaret(self $base): bool
    {
        if ($this->compare($base) < 0) {
            return false;
        }
        if ($base->major > 0) {
            return $this->major === $base->major;
        }
        if ($base->minor > 0) {
            return $this->major === 0 && $this->minor === $base->minor;
        }
        return $this->compare($base) === 0;
    }

    /** `~1.2.3` allows patch changes only. */
    public function satisfiesTilde(self $base): bool
    {
        return $this->compare($base) >= 0 && $this->major === $base->major && $this->minor === $base->minor;
    }

    /** The highest of the given versions, or null when there are none. */
    public static function highest(array $versions): ?self
    {
        $best = null;
        foreach ($versions as $v) {
            if ($best === null || $v->compare($best) > 0) {
                $best = $v;
            }
        }
        return $best;
    }

    public function __toString(): string
    {
        return "{$this->major}.{$this->minor}.{$this->patch}";
    }
}
