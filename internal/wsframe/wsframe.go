// Package wsframe builds websocket frames as a browser sends them, for the
// tests and load programs that check what the hub does with them.
package wsframe

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
)

// Deflated returns msg as one masked, permessage-deflate compressed text
// frame (RFC 7692): the frame's length is what a read limit on frames
// sees, the inflated message what a reader of messages gets.
func Deflated(msg []byte) []byte {
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, flate.BestCompression) // the level is valid
	fw.Write(msg)
	fw.Flush()
	payload := bytes.TrimSuffix(z.Bytes(), []byte{0, 0, 0xff, 0xff}) // RFC 7692 7.2.1
	var f bytes.Buffer
	f.WriteByte(0x80 | 0x40 | 1) // FIN, RSV1 (compressed), text
	switch n := len(payload); {
	case n < 126:
		f.WriteByte(0x80 | byte(n))
	case n <= 0xffff:
		f.WriteByte(0x80 | 126)
		binary.Write(&f, binary.BigEndian, uint16(n))
	default:
		f.WriteByte(0x80 | 127)
		binary.Write(&f, binary.BigEndian, uint64(n))
	}
	key := [4]byte{0x1f, 0x2e, 0x3d, 0x4c}
	f.Write(key[:])
	for i, b := range payload {
		f.WriteByte(b ^ key[i%4])
	}
	return f.Bytes()
}
