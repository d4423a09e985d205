package wal

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	in := Record{Op: OpSet, Key: "user:1", Value: []byte(`{"name":"ada"}`)}
	out, n, err := Decode(in.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if n != len(in.Encode()) || out.Key != in.Key || string(out.Value) != string(in.Value) {
		t.Fatalf("round trip changed the record: %+v (%d bytes)", out, n)
	}
}

func TestDecodeDetectsBitFlip(t *testing.T) {
	buf := Record{Op: OpDelete, Key: "k"}.Encode()
	buf[len(buf)-1] ^= 0x40
	if _, _, err := Decode(buf); err != ErrCorrupt {
		t.Fatalf("Decode of damaged record: err = %v", err)
	}
}

func TestReplayIgnoresTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.wal")
	log, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b", "c"} {
		if err := log.Append(Record{Op: OpSet, Key: key, Value: []byte(key + key)}); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()

	torn := Record{Op: OpSet, Key: "d", Value: []byte("dd")}.Encode()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(torn[:len(torn)-1])
	f.Close()

	var keys []string
	count, err := Replay(path, func(r Record) { keys = append(keys, r.Key) })
	if err != nil || count != 3 {
		t.Fatalf("Replay = %d, %v (keys %v)", count, err, keys)
	}
}
