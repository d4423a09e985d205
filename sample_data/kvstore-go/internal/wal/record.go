package wal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Op is the kind of change a record describes.
type Op byte

const (
	OpSet    Op = 1
	OpDelete Op = 2
)

// Record is one logged change.
//
// On disk: crc32(4) | op(1) | keyLen(4) | valueLen(4) | key | value,
// integers little-endian, the checksum covering everything after itself.
type Record struct {
	Op    Op
	Key   string
	Value []byte
}

const headerSize = 4 + 1 + 4 + 4

// ErrCorrupt means a record's checksum or lengths do not add up.
var ErrCorrupt = errors.New("wal: corrupt record")

// Encode serializes r into a new byte slice.
func (r Record) Encode() []byte {
	buf := make([]byte, headerSize+len(r.Key)+len(r.Value))
	buf[4] = byte(r.Op)
	binary.LittleEndian.PutUint32(buf[5:], uint32(len(r.Key)))
	binary.LittleEndian.PutUint32(buf[9:], uint32(len(r.Value)))
	copy(buf[headerSize:], r.Key)
	copy(buf[headerSize+len(r.Key):], r.Value)
	binary.LittleEndian.PutUint32(buf[0:], crc32.ChecksumIEEE(buf[4:]))
	return buf
}

// Decode reads one record from the front of buf and returns the bytes used.
func Decode(buf []byte) (Record, int, error) {
	if len(buf) < headerSize {
		return Record{}, 0, ErrCorrupt
	}
	keyLen := int(binary.LittleEndian.Uint32(buf[5:]))
	valueLen := int(binary.LittleEndian.Uint32(buf[9:]))
	total := headerSize + keyLen + valueLen
	if keyLen < 0 || valueLen < 0 || total > len(buf) {
		return Record{}, 0, ErrCorrupt
	}
	if crc32.ChecksumIEEE(buf[4:total]) != binary.LittleEndian.Uint32(buf[0:]) {
		return Record{}, 0, ErrCorrupt
	}
	r := Record{
		Op:    Op(buf[4]),
		Key:   string(buf[headerSize : headerSize+keyLen]),
		Value: append([]byte(nil), buf[headerSize+keyLen:total]...),
	}
	return r, total, nil
}
