package pipeline

import (
	"strings"
	"unicode"
)

// Housekeeping words: a signal whose name holds one of them, as a whole
// word in any case, is a checksum or a rolling (alive) counter, which a
// receiver checks and no subscriber reads. checksumWords name checksums,
// counterWords counters.
var (
	checksumWords = []string{"checksum", "chksum", "cksum", "csum", "crc"}
	counterWords  = []string{"counter", "cntr", "cnt", "alive", "rc"}
)

// HousekeepingName reports what a signal's name says it is: "checksum",
// "counter" or "" for neither. The name is cut into words at every
// character that is not a letter or a digit, between a lower-case letter
// and an upper-case one (voltageDrop), before the last of a run of
// capitals followed by a lower-case letter (EPBRinternal: EPB,
// Rinternal), and between letters and digits (CRC8); a word is then
// compared in any case. So CHECKSUM, Checksum, IF_chksum, CRC8_STAT1,
// MOT_StatusCounter, COUNTER, ALIVE and RC are housekeeping; SOURCE,
// ARC_ANGLE, RCM_yawRate, ErrCount and VSC08SUM are not (no word is one
// of checksum, chksum, cksum, csum, crc, counter, cntr, cnt, alive, rc).
func HousekeepingName(name string) string {
	kind := ""
	eachWord(name, func(w string) bool {
		for _, c := range checksumWords {
			if strings.EqualFold(w, c) {
				kind = "checksum"
				return false
			}
		}
		for _, c := range counterWords {
			if strings.EqualFold(w, c) {
				kind = "counter"
			}
		}
		return true
	})
	return kind
}

// eachWord calls f with every word of name (see HousekeepingName) until
// f returns false.
func eachWord(name string, f func(string) bool) {
	rs := []rune(name)
	start := -1
	for i, r := range rs {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		if start >= 0 && (!word || boundary(rs, i)) {
			if !f(string(rs[start:i])) {
				return
			}
			start = -1
		}
		if word && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		f(string(rs[start:]))
	}
}

// boundary reports whether a word begins at rs[i], a letter or digit
// after another.
func boundary(rs []rune, i int) bool {
	p, r := rs[i-1], rs[i]
	switch {
	case unicode.IsDigit(p) != unicode.IsDigit(r):
		return true
	case unicode.IsLower(p) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(p) && unicode.IsUpper(r):
		return i+1 < len(rs) && unicode.IsLower(rs[i+1])
	}
	return false
}
