package simulate

import (
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
)

// encodeChecksum writes a checksum signal: CRC-8 SAE J1850 (polynomial
// 0x1D, initial value 0xFF, final XOR 0xFF, as AUTOSAR E2E profile 1
// uses) over the frame's bytes the checksum does not occupy, cut to the
// signal's length. For the usual 8-bit checksum in the last byte that is
// the CRC of all the other bytes.
func encodeChecksum(s *dbc.Signal, data []byte) error {
	// Find the checksum's bytes by writing ones into a blank copy.
	var mask [64]byte
	if err := decoder.EncodeRaw(s, mask[:len(data)], ^uint64(0)); err != nil {
		return err
	}
	crc := byte(0xFF)
	for i, b := range data {
		if mask[i] != 0 {
			continue
		}
		crc ^= b
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x1D
			} else {
				crc <<= 1
			}
		}
	}
	return decoder.EncodeRaw(s, data, uint64(crc^0xFF))
}
