// Package wal is an append-only write-ahead log of store changes.
package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Log appends records to a file and can replay them on start-up.
type Log struct {
	file *os.File
	w    *bufio.Writer
}

// Open opens (or creates) the log at path for appending.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", path, err)
	}
	return &Log{file: f, w: bufio.NewWriter(f)}, nil
}

// Append writes r and flushes it to the operating system.
func (l *Log) Append(r Record) error {
	if _, err := l.w.Write(r.Encode()); err != nil {
		return err
	}
	return l.w.Flush()
}

// Sync forces written records to stable storage.
func (l *Log) Sync() error {
	return l.file.Sync()
}

// Close flushes and closes the file.
func (l *Log) Close() error {
	if err := l.w.Flush(); err != nil {
		return err
	}
	return l.file.Close()
}

// Replay calls apply for every intact record in the file at path, in order.
// A torn record at the very end (a crash mid-write) is ignored; corruption
// anywhere else is an error.
func Replay(path string, apply func(Record)) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	count := 0
	for offset := 0; offset < len(data); {
		r, n, err := Decode(data[offset:])
		if err != nil {
			if isTail(data[offset:]) {
				return count, nil
			}
			return count, fmt.Errorf("wal: record %d at byte %d: %w", count, offset, err)
		}
		apply(r)
		count++
		offset += n
	}
	return count, nil
}

// isTail reports whether rest is too short to hold the record it announces.
func isTail(rest []byte) bool {
	if len(rest) < headerSize {
		return true
	}
	keyLen := int(binary.LittleEndian.Uint32(rest[5:]))
	valueLen := int(binary.LittleEndian.Uint32(rest[9:]))
	return len(rest) < headerSize+keyLen+valueLen
}

var _ io.Closer = (*Log)(nil)
